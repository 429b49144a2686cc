import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// The issue-12 contract's return-code table, row by row, through real libpam
/// (pam_start_confdir) with the RECOMMENDED stack -- the module, then
/// `pam_unix.so nullok try_first_pass`, pam_deny, pam_permit -- so that each row is seen as the
/// caller sees it: who asks what, whether the Unix password gets through, what is counted and
/// audited. pam_unix checks real passwords: the harness runs in a private mount namespace with
/// the fixture's passwd, group and shadow (UnixStackFixture); the host's files are never written.
/// Never an assertion on time (scripts/timing measures unknown names against users without
/// biometric unlock).
final class UnixStackReturnCodeTests: XCTestCase {
    var world: UnixStackFixture!
    var fixture: ModuleFixture { world.module }
    override func tearDown() { world = nil }

    let user = ModuleFixture.enrolledUser
    let pin = ModuleFixture.pin
    let password = UnixStackFixture.daemonPassword
    let service = UnixStackFixture.service
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let wrong = ModuleFixture.scan("mallory")
    let unixPrompt = "PROMPT_OFF: " + ContractText.unixPrompt
    var pinOrEnter: String { "PROMPT_OFF: " + ContractText.orEnter(ContractText.pinOrPassword, service) }
    var passwordOrEnter: String { "PROMPT_OFF: " + ContractText.orEnter(ContractText.password, service) }
    var pinOnly: String { "PROMPT_OFF: " + ContractText.done(ContractText.pinOrPassword, service) }

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first: \(modulePath) is missing")
        try XCTSkipUnless(UnixStackFixture.available, "needs root and unshare (private mount namespaces for pam_unix's files)")
        world = try UnixStackFixture()
        try fixture.enrolDefaultUser()
    }

    private func events(_ name: String) throws -> [AuditEvent] { try fixture.store.recentEvents(user: name, limit: 100) }
    private func failures() throws -> (passcode: Int, biometric: Int) {
        let record = try fixture.store.loadUser(user)
        return (record?.passcodeFailures ?? -1, record?.biometricFailures ?? -1)
    }
    /// Every Argon2id computation the module asked libsodium for (a verify, or a hash made only to spend the time).
    private func argon2Work(_ t: Transaction) -> Int { t.lines("ARGON2").count }
    private func lockPasscode() throws {
        for _ in 0..<6 { _ = try fixture.store.recordPasscodeFailure(user: user, at: SystemClock().now()) }
    }
    private func closeLid() throws {
        try FileManager.default.createDirectory(atPath: fixture.dir + "/lid/LID0", withIntermediateDirectories: true)
        try "state:      closed\n".write(toFile: fixture.dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
    }

    /// The fixture itself: pam_unix in the namespace knows the test passwords, and only them.
    func testTheStackReallyHasPamUnixWithKnownPasswords() throws {
        let ok = try world.authenticate(ModuleFixture.otherUser, unixAnswer: UnixStackFixture.binPassword)
        XCTAssertEqual(ok.code, "PAM_SUCCESS", ok.raw.stdout + ok.raw.stderr)
        XCTAssertEqual(ok.messages, [unixPrompt])
        XCTAssertEqual(try world.authenticate(ModuleFixture.otherUser, unixAnswer: "not-it").code, "PAM_AUTH_ERR")
    }

    // MARK: finger matched, or biounlock passcode correct: PAM_SUCCESS

    func testTouchSucceedsAndPamUnixIsNeverAsked() throws {
        try world.stack("touch_first=5")
        let t = try world.authenticate(touches: [touch])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages, ["INFO: " + ContractText.touchRequest(service)])
    }

    func testPinSucceedsAndPamUnixIsNeverAsked() throws {
        try world.stack("touch_first=0")
        let t = try world.authenticate(answers: [pin])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages, [pinOrEnter], "touch_first=0: no touch request, the prompt at once")
        XCTAssertEqual(try events(user).first?.outcome, "success")
    }

    // MARK: not enabled: PAM_IGNORE, nothing shown, nothing counted, no audit row

    func testUserWhoHasNotEnabledIsLeftToPamUnix() throws {
        let t = try world.authenticate(ModuleFixture.otherUser, unixAnswer: UnixStackFixture.binPassword)
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages, [unixPrompt], "only pam_unix's prompt")
        XCTAssertEqual(try events(ModuleFixture.otherUser), [])
        XCTAssertNil(try fixture.store.loadUser(ModuleFixture.otherUser), "nothing counted: no row at all")

        try fixture.store.setEnabled(false, user: user, service: service, at: 2)
        let before = try events(user).count
        let off = try world.authenticate(unixAnswer: password)
        XCTAssertEqual(off.code, "PAM_SUCCESS")
        XCTAssertEqual(off.messages, [unixPrompt])
        XCTAssertEqual(try events(user).count, before, "no audit row")
    }

    // MARK: remote session, remote=ignore (the default): PAM_IGNORE, nothing shown, counted or audited

    func testRemoteSessionsAreLeftToPamUnix() throws {
        try FileManager.default.createDirectory(atPath: fixture.dir + "/sessions", withIntermediateDirectories: true)
        let remote: [(String, [String], [String: String])] = [
            ("PAM_RHOST 127.0.0.1 (loopback literals count as remote)", ["--rhost", "127.0.0.1"], [:]),
            ("PAM_RHOST ::1", ["--rhost", "::1"], [:]),
            ("PAM_RHOST 203.0.113.7", ["--rhost", "203.0.113.7"], [:]),
            ("PAM_TTY ssh", ["--tty", "ssh"], [:]),
            ("SSH_CONNECTION in the PAM environment", ["--env", "SSH_CONNECTION=203.0.113.7 5 10.0.0.1 22"], [:]),
            ("SSH_CLIENT in the process environment", [], ["SSH_CLIENT": "203.0.113.7 5 22"]),
            ("logind REMOTE=1 for the process's audit session", ["--remote-audit-session", fixture.dir + "/sessions"], [:]),
        ]
        for (why, extra, environment) in remote {
            let t = try world.authenticate(unixAnswer: password, touches: [], extra: extra + ["--count-argon2"], environment: environment)
            XCTAssertEqual(t.code, "PAM_SUCCESS", why)
            XCTAssertEqual(t.messages, [unixPrompt], "\(why): only pam_unix's prompt, nothing from biounlock")
            XCTAssertEqual(argon2Work(t), 0, why)
        }
        let pinOverSSH = try world.authenticate(unixAnswer: pin, extra: ["--rhost", "203.0.113.7"])
        XCTAssertEqual(pinOverSSH.code, "PAM_AUTH_ERR", "the biounlock PIN is no way in for a session left to pam_unix")
        let counters = try failures()
        XCTAssertEqual(counters.passcode, 0)
        XCTAssertEqual(counters.biometric, 0)
        XCTAssertEqual(try events(user), [], "no audit row")
    }

    /// remote=passcode: no finger, the PIN-or-password prompt; remote=skip is its old name.
    func testRemotePasscodeTakesThePinOrThePassword() throws {
        for option in ["remote=passcode", "remote=skip"] {
            try world.stack(option)
            let rhost = ["--rhost", "203.0.113.7"]
            let viaPin = try world.authenticate(answers: [pin], extra: rhost)
            XCTAssertEqual(viaPin.code, "PAM_SUCCESS", option)
            XCTAssertEqual(viaPin.messages.filter { $0.hasPrefix("PROMPT_") }, [pinOnly], "\(option): the PIN-or-password prompt alone")
            XCTAssertFalse(viaPin.messages.contains("INFO: " + ContractText.touchRequest(service)), "\(option): no touch request")
            let viaPassword = try world.authenticate(answers: [password], extra: rhost)
            XCTAssertEqual(viaPassword.code, "PAM_SUCCESS", option)
            XCTAssertEqual(viaPassword.messages.filter { $0.hasPrefix("PROMPT_") }, [pinOnly],
                           "\(option): the password at biounlock's prompt, no second prompt")
        }
        XCTAssertEqual(try world.authenticate(answers: ["not-the-Pw-3"], extra: ["--rhost", "203.0.113.7"]).code, "PAM_AUTH_ERR")
    }

    // MARK: user unknown: PAM_USER_UNKNOWN, and the stack looks the same as for anyone

    func testUnknownUserGetsThePasswordPromptLikeAnyone() throws {
        let name = "biounlock-no-such-user"
        let unknown = try world.authenticate(name, unixAnswer: "whatever-1", extra: ["--count-argon2"])
        let known = try world.authenticate(ModuleFixture.otherUser, unixAnswer: "whatever-1", extra: ["--count-argon2"])
        XCTAssertEqual(unknown.code, "PAM_AUTH_ERR", unknown.raw.stdout)
        XCTAssertEqual(known.code, "PAM_AUTH_ERR")
        XCTAssertEqual(unknown.messages, [unixPrompt])
        XCTAssertEqual(unknown.messages, known.messages, "an unknown name and a user without biometric unlock look alike")
        XCTAssertEqual(argon2Work(unknown), 0, "no Argon2id for an unknown name")
        XCTAssertEqual(try events(name), [])
    }

    // MARK: typed text that is not the biounlock passcode: set as PAM_AUTHTOK, PAM_AUTHINFO_UNAVAIL

    func testUnixPasswordAtBiounlocksPromptIsHandedToPamUnix() throws {
        try world.stack("touch_first=0")
        // No answer for pam_unix's own prompt: it must not ask (try_first_pass takes PAM_AUTHTOK).
        let t = try world.authenticate(answers: [password], extra: ["--count-argon2"])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages, [pinOrEnter], "one prompt for both secrets")
        XCTAssertEqual(argon2Work(t), 0, "letters cannot be a PIN: no Argon2id")
        XCTAssertEqual(try failures().passcode, 0, "and nothing counted")
    }

    func testWrongPinIsCountedSilentlyAndHandedOn() throws {
        try world.stack("touch_first=0")
        let t = try world.authenticate(answers: ["1357"], extra: ["--count-argon2"])
        XCTAssertEqual(t.code, "PAM_AUTH_ERR", "pam_unix decides: not the Unix password either")
        XCTAssertEqual(t.messages, [pinOrEnter], "no 'Wrong passcode.', no second prompt")
        XCTAssertEqual(argon2Work(t), 1, "one check of the PIN")
        XCTAssertEqual(try failures().passcode, 1, "a wrong passcode that was checked is counted")
    }

    func testUnixPasswordSuccessSeenInSetcredClearsTheCounters() throws {
        try world.stack("touch_first=0")
        _ = try world.authenticate(answers: ["1357"])
        XCTAssertEqual(try failures().passcode, 1)
        let t = try world.authenticate(answers: [password], extra: ["--setcred"])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertTrue(t.raw.stdout.contains("SETCRED 0 PAM_SUCCESS"), t.raw.stdout)
        XCTAssertEqual(try failures().passcode, 0)
    }

    /// A passcode lockout stops only the biounlock passcode: the finger and the Unix password work.
    func testPasscodeLockoutLeavesTheFingerAndThePassword() throws {
        try world.stack("touch_first=0")
        try lockPasscode()
        let rightPin = try world.authenticate(answers: [pin], extra: ["--count-argon2"])
        XCTAssertEqual(rightPin.code, "PAM_AUTH_ERR", "the right PIN is refused while locked (and is not the Unix password)")
        XCTAssertEqual(argon2Work(rightPin), 0, "nothing checked while locked")
        XCTAssertEqual(try failures().passcode, 6, "nor counted")
        XCTAssertEqual(rightPin.messages.filter { ContractText.isPinLocked($0, fingerToo: true) }.count, 1,
                       "told once: \(rightPin.messages)")
        XCTAssertEqual(rightPin.messages.filter { $0.hasPrefix("PROMPT_") }, [passwordOrEnter], "{Cred} is Password while the PIN is locked")

        let finger = try world.authenticate(answers: [""], touches: [touch])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", "the finger still works: \(finger.messages)")

        let unix = try world.authenticate(answers: [password])
        XCTAssertEqual(unix.code, "PAM_SUCCESS", "the Unix password still works")
        XCTAssertFalse(unix.messages.contains(unixPrompt), "typed once, at biounlock's prompt")
    }

    /// "...and the right PIN is refused until the wait is over": six failures two hours ago.
    func testRightPinWorksAgainOnceTheWaitIsOver() throws {
        try world.stack("touch_first=0")
        for _ in 0..<6 { _ = try fixture.store.recordPasscodeFailure(user: user, at: SystemClock().now() - 7200) }
        let t = try world.authenticate(answers: [pin])
        XCTAssertEqual(t.code, "PAM_SUCCESS", "\(t.messages)")
        XCTAssertEqual(t.messages, [pinOrEnter], "no lockout message once the wait is over")
    }

    func testNoPasscodeSetAsksForThePassword() throws {
        try world.stack("touch_first=0")
        try fixture.store.setPasscode(nil, user: user, at: 2)
        let t = try world.authenticate(answers: [password])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages, [passwordOrEnter])
    }

    func testBiometricsPolicyHandsTypedTextToPamUnix() throws {
        try world.stack("policy=biometrics touch_first=0")
        let t = try world.authenticate(answers: [password], extra: ["--count-argon2"])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages, [passwordOrEnter])
        XCTAssertEqual(argon2Work(t), 0)
        XCTAssertEqual(try failures().passcode, 0)
    }

    // MARK: Enter alone (reader done), no reader, unplugged, lid closed, nothing enrolled, timeout,
    // passcode locked and finger unusable: PAM_AUTHINFO_UNAVAIL, and pam_unix asks

    func testEnterAloneWhenNothingIsEnrolledGoesToPamUnix() throws {
        try world.stack("touch_first=0")
        _ = try fixture.store.deleteTemplates(user: user, finger: nil)
        let t = try world.authenticate(answers: [""], unixAnswer: password)
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(Array(t.messages.suffix(2)), [pinOnly, unixPrompt])
        XCTAssertEqual(try events(user).first?.outcome, "unavailable")
        XCTAssertEqual(try failures().passcode, 0, "Enter alone is not a failure")
    }

    func testClosedLidAsksForThePinOrPasswordAtOnce() throws {
        try closeLid()
        try world.stack()   // the default touch_first: no reader-alone wait with the lid closed
        let viaPin = try world.authenticate(answers: [pin])
        XCTAssertEqual(viaPin.code, "PAM_SUCCESS")
        XCTAssertEqual(viaPin.messages.last, pinOnly)
        XCTAssertFalse(viaPin.messages.contains("INFO: " + ContractText.touchRequest(service)))
        let enter = try world.authenticate(answers: [""], unixAnswer: password)
        XCTAssertEqual(enter.code, "PAM_SUCCESS")
        XCTAssertEqual(enter.messages.last, unixPrompt)
    }

    func testUnpluggedReaderMovesOnToThePinOrPassword() throws {
        try world.stack()
        let t = try world.authenticate(answers: [""], unixAnswer: password, touches: [.unplug])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertTrue(t.messages.contains("ERROR: Fingerprint reader not available."), "\(t.messages)")
        XCTAssertEqual(Array(t.messages.suffix(2)), [pinOnly, unixPrompt])
        XCTAssertEqual(try failures().biometric, 0, "an unplugged reader is not a failed match")
    }

    func testNoTouchInTimeMovesOnToThePassword() throws {
        try world.stack("policy=biometrics touch_first=1 timeout=2")
        let t = try world.authenticate(answers: [""], unixAnswer: password)
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages.first, "INFO: " + ContractText.touchRequest(service))
        XCTAssertTrue(t.messages.contains(passwordOrEnter), "\(t.messages)")
        XCTAssertEqual(t.messages.last, unixPrompt)
        XCTAssertEqual(try failures().biometric, 0, "a timeout is not a failure")
    }

    func testLockedPasscodeAndUnusableFingerGoStraightToPamUnix() throws {
        try closeLid()
        try lockPasscode()
        try world.stack()
        let t = try world.authenticate(unixAnswer: password)
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages.filter { ContractText.isPinLocked($0, fingerToo: false) }.count, 1, "\(t.messages)")
        XCTAssertEqual(t.messages.filter { $0.hasPrefix("PROMPT_") }, [unixPrompt], "biounlock asks nothing")
    }

    // MARK: store missing, unreadable or unsafe: PAM_AUTHINFO_UNAVAIL and a syslog error

    func testMissingOrUnsafeStoreFallsToThePassword() throws {
        try world.stack("db=\(fixture.dir)/nowhere/biounlock.db touch_first=0")
        let missing = try world.authenticate(unixAnswer: password, extra: ["--syslog"])
        XCTAssertEqual(missing.code, "PAM_SUCCESS")
        XCTAssertEqual(missing.messages, [unixPrompt])
        XCTAssertFalse(missing.syslog.isEmpty, "a syslog error: \(missing.raw.stdout)")

        try world.stack("touch_first=0")
        chmod(fixture.storePath, 0o644 | 0o002)
        let unsafe = try world.authenticate(unixAnswer: password, extra: ["--syslog"])
        XCTAssertEqual(unsafe.code, "PAM_SUCCESS")
        XCTAssertEqual(unsafe.messages, [unixPrompt])
        XCTAssertFalse(unsafe.syslog.isEmpty)
        chmod(fixture.storePath, 0o600)
    }

    // MARK: wrong finger max_tries times (policy=biometrics): PAM_MAXTRIES, then pam_unix

    func testWrongFingersUnderBiometricsPolicyThenThePassword() throws {
        try world.stack("policy=biometrics max_tries=2 touch_first=5")
        // Enter alone if the prompt comes before the touches: they still count.
        let t = try world.authenticate(answers: [""], unixAnswer: password, touches: [wrong, wrong])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertTrue(t.messages.contains("ERROR: Fingerprint not recognised. 1 try left."), "\(t.messages)")
        XCTAssertEqual(t.messages.last, unixPrompt)
        XCTAssertEqual(try failures().biometric, 2)
        XCTAssertEqual(try events(user).first?.outcome, "maxtries")
    }

    // MARK: conversation failure, NULL answer: PAM_CONV_ERR, and the stack ends there

    func testConversationFailuresEndTheStackBeforePamUnix() throws {
        try world.stack("touch_first=0")
        for answer in ["@FAIL", "@NULL", "@NORESP"] {
            let t = try world.authenticate(answers: [answer], unixAnswer: password)
            XCTAssertEqual(t.code, "PAM_CONV_ERR", answer)
            XCTAssertFalse(t.messages.contains(unixPrompt), "\(answer): default=die, pam_unix never asked")
        }
    }

    // MARK: the "done when" of issue 12, at the PAM level

    /// i3lock, swaylock, sshd's password mode, scripts: every prompt gets the one secret held.
    func testOneSecretGivenToEveryPrompt() throws {
        try world.stack("touch_first=0")
        let unix = try world.authenticate(answers: [password, password, password])
        XCTAssertEqual(unix.code, "PAM_SUCCESS")
        XCTAssertEqual(unix.messages, [pinOrEnter])
        XCTAssertEqual(try world.authenticate(answers: [pin, pin, pin]).code, "PAM_SUCCESS")
        XCTAssertEqual(try world.authenticate(answers: ["not-the-Pw-3", "not-the-Pw-3", "not-the-Pw-3"]).code, "PAM_AUTH_ERR")
        XCTAssertEqual(try failures().passcode, 0, "neither the password nor the wrong letters were counted")
    }

    /// Without a terminal and with the default configuration: the touch request, then (while the
    /// reader still waits) the prompt that takes the PIN or the password.
    func testWithoutATerminalTheDefaultConfigurationAsksWhileTheReaderWaits() throws {
        try world.stack("timeout=10")   // the default timeout (ModuleFixture's is 3)
        let viaPin = try world.authenticate(answers: [pin])
        XCTAssertEqual(viaPin.code, "PAM_SUCCESS")
        XCTAssertEqual(viaPin.messages, ["INFO: " + ContractText.touchRequest(service), pinOrEnter])
        let viaPassword = try world.authenticate(answers: [password])
        XCTAssertEqual(viaPassword.code, "PAM_SUCCESS")
        XCTAssertEqual(viaPassword.messages, ["INFO: " + ContractText.touchRequest(service), pinOrEnter])
    }
}
