import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import CPAM

/// docs/DESIGN.md's return-code table, row by row, through real libpam (pam_start_confdir) loading
/// the built build/pam_biounlock.so in a separate process (pam-harness).
final class ReturnCodeTests: ModuleTestCase {
    /// Core's table (PamReturn) carries Linux-PAM's values without linking libpam: they must be
    /// the ones in libpam's header, or the module would return the wrong code.
    func testTheReturnTableHasLibpamsValues() {
        let libpam: [PamReturn: Int32] = [
            .success: PAM_SUCCESS, .authinfoUnavailable: PAM_AUTHINFO_UNAVAIL, .userUnknown: PAM_USER_UNKNOWN,
            .maxTries: PAM_MAXTRIES, .conversationError: PAM_CONV_ERR, .ignore: PAM_IGNORE,
        ]
        XCTAssertEqual(libpam.count, PamReturn.allCases.count)
        for code in PamReturn.allCases {
            XCTAssertEqual(code.rawValue, libpam[code], code.name)
        }
    }

    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let wrong = ModuleFixture.scan("mallory")

    func testTouchSucceedsAndTheMessageNamesTheService() throws {
        let t = try fixture.authenticate(touches: [touch])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages, ["INFO: Touch the fingerprint reader to authenticate for biotest"])
    }

    func testUserWhoHasNotEnabledGetsIgnoreWithoutAPrompt() throws {
        let t = try fixture.authenticate(ModuleFixture.otherUser)
        XCTAssertEqual(t.code, "PAM_TRY_AGAIN", "the module returned PAM_IGNORE: \(t.raw.stdout)")
        XCTAssertEqual(t.messages, [])
        try fixture.store.setEnabled(false, user: user, service: nil, at: 2)
        let disabled = try fixture.authenticate(touches: [])
        XCTAssertEqual(disabled.code, "PAM_TRY_AGAIN")
        XCTAssertEqual(disabled.messages, [])
    }

    func testPerServiceOverride() throws {
        try fixture.service(name: "sudo")
        try fixture.store.setEnabled(false, user: user, service: "sudo", at: 2)
        XCTAssertEqual(try fixture.authenticate(service: "sudo").code, "PAM_TRY_AGAIN")
        XCTAssertEqual(try fixture.authenticate(service: "biotest", touches: [touch]).code, "PAM_SUCCESS")
    }

    func testMissingStoreIsUnavailable() throws {
        try fixture.service("db=\(fixture.dir)/nowhere/biounlock.db")
        let t = try fixture.authenticate()
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(fixture.dir)/nowhere"), "the module never creates a store")
    }

    func testUnsafeStoreIsUnavailable() throws {
        chmod(fixture.storePath, 0o644 | 0o002)
        XCTAssertEqual(try fixture.authenticate(touches: []).code, "PAM_AUTHINFO_UNAVAIL")
    }

    func testUntrustedConfigFileIsUnavailable() throws {
        let conf = fixture.dir + "/biounlock.conf"
        try "policy = biometrics\n".write(toFile: conf, atomically: true, encoding: .utf8)
        chmod(conf, 0o666)
        try fixture.service("config=\(conf)")
        XCTAssertEqual(try fixture.authenticate().code, "PAM_AUTHINFO_UNAVAIL")
        chmod(conf, 0o644)
        XCTAssertEqual(try fixture.authenticate(touches: [wrong, wrong, wrong]).code, "PAM_MAXTRIES", "trusted config applies (policy=biometrics)")
    }

    func testWrongFingersUnderBiometricsPolicyIsMaxTries() throws {
        try fixture.service("policy=biometrics max_tries=2")
        let t = try fixture.authenticate(touches: [wrong, wrong])
        XCTAssertEqual(t.code, "PAM_MAXTRIES")
        XCTAssertEqual(t.messages, ["INFO: Touch the fingerprint reader to authenticate for biotest",
                                    "ERROR: Fingerprint not recognised. 1 try left.",
                                    "ERROR: Fingerprint not recognised."])
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 2)
    }

    func testNoTouchUntilTheTimeoutIsUnavailableUnderBiometricsPolicy() throws {
        try fixture.service("policy=biometrics timeout=1")
        let t = try fixture.authenticate(answers: [""], timeout: 60)
        XCTAssertFalse(t.raw.timedOut, "bounded by the module's timeout, not the harness's")
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 0, "a timeout is not a failure")
    }

    func testUnpluggedOrFailingReaderIsUnavailableNeverAFailedMatch() throws {
        try fixture.service("policy=biometrics")
        for command in [SimCommand.unplug, .error(4)] {
            let t = try fixture.authenticate(answers: [""], touches: [command])
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", "\(command)")
            XCTAssertTrue(t.messages.contains("ERROR: Fingerprint reader not available."))
        }
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 0)
    }

    func testNothingEnrolledUnderBiometricsPolicyIsUnavailable() throws {
        try fixture.store.deleteTemplates(user: user, finger: nil)
        try fixture.service("policy=biometrics")
        XCTAssertEqual(try fixture.authenticate().code, "PAM_AUTHINFO_UNAVAIL")
    }

    func testPasscodeAfterWrongFingers() throws {
        let t = try fixture.authenticate(answers: [ModuleFixture.pin], touches: [wrong, wrong, wrong])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages.last, "PROMPT_OFF: PIN or password for biotest: ")
    }

    /// A wrong passcode is counted, nothing is shown, and the text goes on to the next module as
    /// PAM_AUTHTOK (it may be the Unix password): PAM_AUTHINFO_UNAVAIL, never PAM_AUTH_ERR.
    func testAWrongPasscodeIsCountedAndHandedOn() throws {
        try fixture.service(after: "auth optional pam_echo.so @PROBE\nauth requisite pam_debug.so auth=try_again",
                            control: ModuleFixture.recommendedControl)
        let t = try fixture.authenticate(answers: ["1357"], touches: [wrong, wrong, wrong])
        XCTAssertEqual(t.code, "PAM_TRY_AGAIN", "the stack went on past the module: \(t.raw.stdout)")
        XCTAssertEqual(t.messages.last, "PROMPT_OFF: PIN or password for biotest: ", "no 'wrong passcode'")
        XCTAssertEqual(t.lines("PROBE"), ["user=\(user) authtok=set"])
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 1)
        XCTAssertEqual(try fixture.store.recentEvents().first?.reason, "wrong-passcode")
    }

    func testEnterAloneMovesToThePasswordAtOnce() throws {
        try fixture.service("timeout=1")
        let t = try fixture.authenticate(answers: [""])
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0, "Enter alone is not a failure")
    }

    func testUnknownUser() throws {
        for name in ["biounlock-no-such-user", "Daemon", "daemon ", "../daemon", "dae:mon", String(repeating: "d", count: 5000)] {
            XCTAssertEqual(try fixture.authenticate(name).code, "PAM_USER_UNKNOWN", name)
        }
    }

    func testConversationFailuresAreNeverSuccess() throws {
        try fixture.service("timeout=1")
        XCTAssertEqual(try fixture.authenticate(answers: ["@FAIL"]).code, "PAM_CONV_ERR")
        XCTAssertEqual(try fixture.authenticate(answers: ["@NULL"]).code, "PAM_CONV_ERR")
        XCTAssertEqual(try fixture.authenticate(answers: ["@NORESP"]).code, "PAM_CONV_ERR")
        XCTAssertEqual(try fixture.authenticate(answers: []).code, "PAM_CONV_ERR", "answers ran out: NULL text")
        XCTAssertEqual(try fixture.authenticate(answers: ["@BIG"]).code, "PAM_AUTHINFO_UNAVAIL", "1 MiB refused before hashing")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0, "longer than any passcode: not a guess")
    }

    /// sudo always passes PAM_SILENT: the touch request and per-touch feedback still show,
    /// notices (reader unavailable) do not.
    func testSilentFlagSuppressesNoticesOnly() throws {
        let t = try fixture.authenticate(answers: ["1357"], touches: [wrong, .unplug], extra: ["--silent"])
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(t.messages, ["INFO: Touch the fingerprint reader to authenticate for biotest",
                                    "ERROR: Fingerprint not recognised. 2 tries left.",
                                    "PROMPT_OFF: PIN or password for biotest: "])
    }

    func testUnknownArgumentsAreIgnored() throws {
        try fixture.service("nouserok frobnicate=1 timeout=banana")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
    }

    func testSetcredSucceeds() throws {
        let t = try fixture.authenticate(touches: [touch], extra: ["--setcred"])
        XCTAssertTrue(t.raw.stdout.contains("SETCRED 0 PAM_SUCCESS"), t.raw.stdout)
    }

    func testEveryTransactionIsAudited() throws {
        _ = try fixture.authenticate(touches: [touch])
        _ = try fixture.authenticate(answers: ["1357"], touches: [wrong, wrong, wrong])
        let events = try fixture.store.recentEvents()
        XCTAssertEqual(events.map(\.outcome), ["unavailable", "success"])
        XCTAssertEqual(events.map(\.reason), ["wrong-passcode", "finger-matched"])
        XCTAssertEqual(events.first?.service, "biotest")
    }
}
