import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// The LocalAuthentication rules through real libpam and the built module: lockouts, passcode
/// required, context checks, pattern passcodes, exact counting under concurrency.
final class PolicyRuleTests: XCTestCase {
    var fixture: ModuleFixture!

    /// XCTest on Linux keeps test instances alive: drop the fixture so its deinit removes its directory.
    override func tearDown() { fixture = nil }
    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let wrong = ModuleFixture.scan("mallory")
    let pinPrompt = "PROMPT_OFF: biounlock PIN for biotest (Enter alone for your password): "

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first: \(modulePath) is missing")
        fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        try fixture.service()
    }

    func sql(_ statement: String) throws {
        let r = try runProcess("/usr/bin/sqlite3", [fixture.storePath, statement])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testBiometricLockoutSurvivesTransactionsAndOnlyThePasscodeLiftsIt() throws {
        XCTAssertEqual(try fixture.authenticate(answers: [""], touches: [wrong, wrong, wrong]).code, "PAM_AUTHINFO_UNAVAIL")
        let second = try fixture.authenticate(answers: [""], touches: [wrong, wrong])
        XCTAssertEqual(second.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertTrue(second.messages.contains("ERROR: Fingerprint locked after too many failed attempts: use your passcode."), "\(second.messages)")
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 5)

        // A new transaction (a new process, the store opened afresh): straight to the passcode.
        let third = try fixture.authenticate(answers: [ModuleFixture.pin])
        XCTAssertEqual(third.code, "PAM_SUCCESS")
        XCTAssertEqual(third.messages, ["ERROR: Fingerprint locked after too many failed attempts: use your passcode.", pinPrompt])
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS", "the passcode lifted the lockout")
    }

    func testAdminResetLiftsTheBiometricLockout() throws {
        try sql("UPDATE users SET bio_failures = 9")
        try fixture.service("policy=biometrics")
        XCTAssertEqual(try fixture.authenticate().code, "PAM_AUTHINFO_UNAVAIL")
        try fixture.store.resetCounters(user: user, biometric: true, passcode: false)
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
    }

    func testBiometricLockoutExpiresUnderTheBiometricsPolicy() throws {
        try fixture.service("policy=biometrics bio_unlock_time=15m")
        try sql("UPDATE users SET bio_failures = 5, bio_failure_at = strftime('%s','now') - 60")
        let locked = try fixture.authenticate()
        XCTAssertEqual(locked.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(locked.messages, ["ERROR: Fingerprint locked after too many failed attempts: try again in 14 min or use your password."])
        try sql("UPDATE users SET bio_failure_at = strftime('%s','now') - 901")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
    }

    func testPasscodeLockoutEscalatesAndRefusesWithoutHashing() throws {
        try fixture.store.deleteTemplates(user: user, finger: nil) // straight to the passcode
        for _ in 1...5 {
            XCTAssertEqual(try fixture.authenticate(answers: ["1357"]).code, "PAM_AUTH_ERR")
        }
        let locked = try fixture.authenticate(answers: [ModuleFixture.pin])
        XCTAssertEqual(locked.code, "PAM_AUTH_ERR", "even the right PIN is refused while locked")
        XCTAssertEqual(locked.messages.count, 1)
        XCTAssertTrue(locked.messages[0].hasPrefix("ERROR: Too many wrong passcodes: try again in "), locked.messages[0])
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 5)
        // The minute passes: one more wrong passcode starts a 5-minute wait.
        try sql("UPDATE users SET passcode_failure_at = passcode_failure_at - 61")
        XCTAssertEqual(try fixture.authenticate(answers: ["1357"]).code, "PAM_AUTH_ERR")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).messages, ["ERROR: Too many wrong passcodes: try again in 5 min."])
    }

    func testPasscodeRequiredAfterBootThenTheFingerWorksUntilTheNextBoot() throws {
        try fixture.service("require_passcode=boot")
        let first = try fixture.authenticate(answers: [ModuleFixture.pin], touches: [])
        XCTAssertEqual(first.code, "PAM_SUCCESS")
        XCTAssertEqual(first.messages, ["INFO: Passcode required: enter it once before using your finger.", pinPrompt])
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
        try sql("UPDATE users SET passcode_boot_id = 'an-earlier-boot'")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).messages.first, "INFO: Passcode required after a restart.")
    }

    func testEnrolmentChangeAndAgeRules() throws {
        try fixture.service("require_passcode=enrolment,72h")
        try sql("UPDATE users SET passcode_success_at = strftime('%s','now'), passcode_enrolment_version = enrolment_version")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
        try fixture.store.saveTemplate(Template(finger: .leftThumb, sensor: .simulated, data: Array("thumb".utf8), created: 5), user: user)
        XCTAssertEqual(try fixture.authenticate(answers: [""]).messages.first, "INFO: Passcode required: the enrolled fingers have changed.")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).code, "PAM_SUCCESS")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
        try sql("UPDATE users SET passcode_success_at = strftime('%s','now') - 73 * 3600")
        XCTAssertEqual(try fixture.authenticate(answers: [""]).messages.first, "INFO: Passcode required: not entered for 3d.")
    }

    /// policy=biometrics: the requirement hands over to the password; a correct password (here
    /// pam_permit standing in for pam_unix) is seen in pam_sm_setcred and satisfies the rule.
    func testPasswordSatisfiesTheRequirementUnderBiometricsPolicy() throws {
        try fixture.service("policy=biometrics require_passcode=boot", after: "auth sufficient pam_permit.so",
                            control: ModuleFixture.recommendedControl)
        let first = try fixture.authenticate(extra: ["--setcred"])
        XCTAssertEqual(first.code, "PAM_SUCCESS", "the stack succeeded through the 'password'")
        XCTAssertEqual(first.messages, ["INFO: Password required: enter it once before using your finger."])
        XCTAssertTrue(first.raw.stdout.contains("SETCRED 0 PAM_SUCCESS"))
        let second = try fixture.authenticate(touches: [touch], extra: ["--setcred"])
        XCTAssertEqual(second.messages, ["INFO: Touch the fingerprint reader to authenticate for biotest"], "the finger is back")
        XCTAssertEqual(second.code, "PAM_SUCCESS")
    }

    func testRemoteSessionsSkipTheFinger() throws {
        let viaRhost = try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--rhost", "203.0.113.7"])
        XCTAssertEqual(viaRhost.code, "PAM_SUCCESS")
        XCTAssertEqual(viaRhost.messages, ["INFO: Fingerprint skipped: remote session.", pinPrompt])
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--env", "SSH_CONNECTION=203.0.113.7 5 10.0.0.1 22"]).messages.first,
                       "INFO: Fingerprint skipped: remote session.")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin], environment: ["SSH_CLIENT": "203.0.113.7 5 22"]).messages.first,
                       "INFO: Fingerprint skipped: remote session.")
        try FileManager.default.createDirectory(atPath: fixture.dir + "/sessions", withIntermediateDirectories: true)
        try "REMOTE=1\n".write(toFile: fixture.dir + "/sessions/42", atomically: true, encoding: .utf8)
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--env", "XDG_SESSION_ID=42"]).messages.first,
                       "INFO: Fingerprint skipped: remote session.")
        XCTAssertEqual(try fixture.authenticate(touches: [touch], extra: ["--rhost", "localhost"]).code, "PAM_SUCCESS", "local names are local")

        try fixture.service("remote=allow")
        XCTAssertEqual(try fixture.authenticate(touches: [touch], extra: ["--rhost", "203.0.113.7"]).code, "PAM_SUCCESS")
    }

    func testClosedLidSkipsTheFinger() throws {
        try FileManager.default.createDirectory(atPath: fixture.dir + "/lid/LID0", withIntermediateDirectories: true)
        try "state:      closed\n".write(toFile: fixture.dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        // The longest touch timeout: had the module waited for a touch, the harness's own limit
        // (30 s) would end the transaction, and the touch prompt would be in the conversation.
        try fixture.service("policy=biometrics timeout=120")
        let t = try fixture.authenticate(touches: [], timeout: 30)
        XCTAssertFalse(t.raw.timedOut, "no waiting for a touch")
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(t.messages, ["INFO: Fingerprint skipped: the lid is closed."], "no touch prompt")
        try fixture.service("policy=biometrics lid=ignore")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
    }

    func testReasonSetsThePromptAndSpacesNeedBrackets() throws {
        try fixture.service("[reason=Approve %s with your finger]")
        let t = try fixture.authenticate(touches: [touch])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages, ["INFO: Approve biotest with your finger"])
    }

    func testPatternPasscode() throws {
        let canonical = try Pattern.canonicalSecret(Secret(bytes: Array("12369".utf8))!).get()
        let hash = try Passcode.hash(canonical, opsLimit: 1, memLimit: 8192)
        try fixture.store.setPasscode(StoredPasscode(hash: hash, kind: .pattern), user: user, at: 1)
        try fixture.store.deleteTemplates(user: user, finger: nil)
        XCTAssertEqual(try fixture.authenticate(answers: ["1369"]).code, "PAM_SUCCESS", "13 + 69 is 1236 + 9")
        XCTAssertEqual(try fixture.authenticate(answers: ["1236"]).code, "PAM_AUTH_ERR")
        XCTAssertEqual(try fixture.authenticate(answers: ["99999"]).code, "PAM_AUTH_ERR")
    }

    /// 50 wrong PINs at once (50 processes) against passcode_lockout=5: exactly 5 are checked
    /// against the hash, the rest refused before any hashing (each attempt is counted before it
    /// is checked; at the lockout, an attempt waits for those in flight before it is refused). Asserted on the store -- the counter and the
    /// audit log's reasons, wrong-passcode for checked, passcode-locked for refused -- not on the
    /// return code of a wrong attempt.
    func testParallelGuessesCannotOutrunThePasscodeLockout() throws {
        try fixture.service("timeout=1")
        try fixture.store.deleteTemplates(user: user, finger: nil)
        let outputs = try fixture.authenticateConcurrently(50, answers: ["1357"], extra: ["--count-argon2"])
        XCTAssertFalse(outputs.contains { $0.harnessCode == "PAM_SUCCESS" }, "no wrong PIN gets in")
        XCTAssertEqual(outputs.filter { $0.contains("ARGON2: verify") }.count, 5, "checked against the hash")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 5)
        let reasons = try fixture.store.recentEvents(limit: 100).map(\.reason)
        XCTAssertEqual(reasons.filter { $0 == "wrong-passcode" }.count, 5, "\(reasons)")
        XCTAssertEqual(reasons.filter { $0 == "passcode-locked" }.count, 45, "\(reasons)")
    }

    /// 50 right PINs at once (50 processes): every one succeeds. Each attempt used to be counted
    /// before the check and cleared only by its own success, so five in flight locked out the
    /// rest ("Too many wrong passcodes" for 45 of 50, and for 1 of 6).
    func testConcurrentRightPasscodesAllSucceed() throws {
        try fixture.service("timeout=1")
        try fixture.store.deleteTemplates(user: user, finger: nil)
        let outputs = try fixture.authenticateConcurrently(50, answers: [ModuleFixture.pin])
        XCTAssertEqual(outputs.map(\.harnessCode), Array(repeating: "PAM_SUCCESS", count: 50), outputs.filter { $0.harnessCode != "PAM_SUCCESS" }.joined())
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
        let reasons = try fixture.store.recentEvents(limit: 100).map(\.reason)
        XCTAssertEqual(reasons, Array(repeating: "passcode-accepted", count: 50))
    }

    /// 50 wrong passcodes at once raise the counter by exactly 50.
    func testCountersAreExactUnderConcurrency() throws {
        try fixture.service("passcode_lockout=1000 timeout=1")
        try fixture.store.deleteTemplates(user: user, finger: nil)
        let outputs = try fixture.authenticateConcurrently(50, answers: ["1357"])
        XCTAssertFalse(outputs.contains { $0.harnessCode == "PAM_SUCCESS" }, "no wrong PIN gets in")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 50)
        XCTAssertEqual(try fixture.store.recentEvents(limit: 100).filter { $0.reason == "wrong-passcode" }.count, 50)
    }
}

