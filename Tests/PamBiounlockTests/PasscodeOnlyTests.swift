import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// `passcode_only`: the module in biounlockd's re-authentication stack (/etc/pam.d/biounlock-reauth),
/// through real libpam and the built module. Only the typed passcode is taken; the reader is never
/// opened (its socket never exists), so no touch can answer the stack; what is not the passcode is
/// handed on to pam_unix; the passcode's counting and lockout are the module's as everywhere.
final class PasscodeOnlyTests: ModuleTestCase {
    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let prompt = "PROMPT_OFF: PIN or password for biounlock-reauth: "
    let probe = "auth optional pam_echo.so @PROBE"
    /// The module's code is the stack's (bad keeps going to the probe; ok too).
    let control = "[success=ok ignore=ignore default=bad]"

    override func prepare() throws {
        // The rules that would keep the finger off are on: in this mode they change nothing.
        try fixture.service("passcode_only require_passcode=boot,enrolment", name: "biounlock-reauth", after: probe, control: control)
    }

    var readerOpened: Bool { FileManager.default.fileExists(atPath: fixture.socket) }

    func testThePasscodeReauthenticatesWithoutTheReader() throws {
        let t = try fixture.authenticate(service: "biounlock-reauth", answers: [ModuleFixture.pin], extra: ["--syslog"])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages, [prompt], "one prompt, no touch request")
        XCTAssertEqual(t.lines("PROBE"), ["user=\(user) authtok=unset"], "the verified passcode never becomes PAM_AUTHTOK")
        XCTAssertFalse(readerOpened)
        let events = try fixture.store.recentEvents(user: user)
        XCTAssertEqual(events.first?.service, "biounlock-reauth")
        XCTAssertEqual(events.first?.method, .passcode)
        XCTAssertEqual(events.first?.outcome, "success")
    }

    func testATouchNeverAnswersIt() throws {
        // Enter alone while a finger touches: nothing succeeds, and the sensor never listened.
        let t = try fixture.authenticate(service: "biounlock-reauth", answers: [""], touches: [touch], touchWait: 400)
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", t.raw.stdout)
        XCTAssertFalse(readerOpened, "the simulated sensor's socket was never made")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
        XCTAssertNotEqual(try fixture.store.recentEvents(user: user).first?.method, .fingerprint)
    }

    func testTextThatIsNotThePasscodeGoesOnToTheNextModule() throws {
        let password = try fixture.authenticate(service: "biounlock-reauth", answers: ["unix-password"])
        XCTAssertEqual(password.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(password.lines("PROBE"), ["user=\(user) authtok=set"], "pam_unix try_first_pass gets it")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0, "letters cannot be a PIN: not counted")

        let wrong = try fixture.authenticate(service: "biounlock-reauth", answers: ["1357"])
        XCTAssertEqual(wrong.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(wrong.lines("PROBE"), ["user=\(user) authtok=set"])
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 1, "a wrong PIN is counted, as at any prompt")
    }

    func testALockedPasscodeIsNotChecked() throws {
        let r = try runProcess("/usr/bin/sqlite3", [fixture.storePath,
                                                    "UPDATE users SET passcode_failures = 5, passcode_failure_at = strftime('%s','now')"])
        XCTAssertEqual(r.status, 0, r.stderr)
        fixture.closeStore()
        let t = try fixture.authenticate(service: "biounlock-reauth", answers: [ModuleFixture.pin], extra: ["--count-argon2"])
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", "the right PIN is not checked while the lockout runs")
        XCTAssertEqual(t.lines("ARGON2").count, 0, "\(t.raw.stdout)")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 5)
        XCTAssertFalse(readerOpened)
    }

    func testOnForAnyServiceIsEnough() throws {
        try fixture.store.setEnabled(false, user: user, service: nil, at: 2)
        try fixture.store.setEnabled(true, user: user, service: "sudo", at: 2)
        XCTAssertEqual(try fixture.authenticate(service: "biounlock-reauth", answers: [ModuleFixture.pin]).code, "PAM_SUCCESS")
    }

    func testNotOnAnywhereOrNoPasscodeAsksNothing() throws {
        try fixture.store.setEnabled(false, user: user, service: nil, at: 2)
        let off = try fixture.authenticate(service: "biounlock-reauth", answers: [ModuleFixture.pin])
        XCTAssertEqual(off.messages, [], "not enabled: nothing asked (pam_unix asks for the password)")
        XCTAssertEqual(off.lines("PROBE"), ["user=\(user) authtok=unset"])

        try fixture.store.setEnabled(true, user: user, service: nil, at: 3)
        try fixture.store.setPasscode(nil, user: user, at: 3)
        let none = try fixture.authenticate(service: "biounlock-reauth", answers: [ModuleFixture.pin])
        XCTAssertEqual(none.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(none.messages, [], "no passcode: nothing asked, the reader not opened")
        XCTAssertFalse(readerOpened)
    }

    /// Without the word the same stack offers the finger (the difference is the argument alone).
    func testWithoutTheArgumentTheFingerIsOffered() throws {
        try fixture.service("require_passcode=none", name: "biounlock-reauth", after: probe, control: control)
        let t = try fixture.authenticate(service: "biounlock-reauth", touches: [touch])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertTrue(t.messages.contains { $0.hasPrefix("INFO: Touch the fingerprint reader") }, "\(t.messages)")
    }
}
