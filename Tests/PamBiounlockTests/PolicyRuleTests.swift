import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// The LocalAuthentication rules through real libpam and the built module: lockouts, passcode
/// required, context checks, pattern passcodes, exact counting under concurrency.
final class PolicyRuleTests: ModuleTestCase {

    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let wrong = ModuleFixture.scan("mallory")
    let pinPrompt = "PROMPT_OFF: PIN or password for biotest: "

    func sql(_ statement: String) throws {
        let r = try runProcess("/usr/bin/sqlite3", [fixture.storePath, statement])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testBiometricLockoutSurvivesTransactionsAndOnlyThePasscodeLiftsIt() throws {
        XCTAssertEqual(try fixture.authenticate(answers: [""], touches: [wrong, wrong, wrong]).code, "PAM_AUTHINFO_UNAVAIL")
        let second = try fixture.authenticate(answers: [""], touches: [wrong, wrong])
        XCTAssertEqual(second.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertTrue(second.messages.contains("ERROR: Fingerprint locked after too many failed attempts: use your PIN or your password."), "\(second.messages)")
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 5)

        // A new transaction (a new process, the store opened afresh): straight to the passcode.
        let third = try fixture.authenticate(answers: [ModuleFixture.pin])
        XCTAssertEqual(third.code, "PAM_SUCCESS")
        XCTAssertEqual(third.messages, ["ERROR: Fingerprint locked after too many failed attempts: use your PIN or your password.", pinPrompt])
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS", "the passcode lifted the lockout")
    }

    func testAdminResetLiftsTheBiometricLockout() throws {
        try sql("UPDATE users SET bio_failures = 9")
        try fixture.service("policy=biometrics")
        XCTAssertEqual(try fixture.authenticate(answers: [""]).code, "PAM_AUTHINFO_UNAVAIL")
        try fixture.store.resetCounters(user: user, biometric: true, passcode: false)
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
    }

    func testBiometricLockoutExpiresUnderTheBiometricsPolicy() throws {
        try fixture.service("policy=biometrics bio_unlock_time=15m")
        try sql("UPDATE users SET bio_failures = 5, bio_failure_at = strftime('%s','now') - 60")
        let locked = try fixture.authenticate()
        XCTAssertEqual(locked.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(locked.messages, ["ERROR: Fingerprint locked for 14 min after too many failed attempts: use your password."])
        try sql("UPDATE users SET bio_failure_at = strftime('%s','now') - 901")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
    }

    /// The passcode lockout escalates and takes away the PIN only: while it runs nothing typed is
    /// checked, the user is told how long, and the finger still works.
    func testPasscodeLockoutEscalatesAndLeavesTheFinger() throws {
        let templates = try fixture.store.loadUser(user)?.templates ?? []
        try fixture.store.deleteTemplates(user: user, finger: nil) // straight to the passcode
        for _ in 1...5 {
            XCTAssertEqual(try fixture.authenticate(answers: ["1357"]).code, "PAM_AUTHINFO_UNAVAIL", "handed on to the password")
        }
        let locked = try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--count-argon2"])
        XCTAssertEqual(locked.code, "PAM_AUTHINFO_UNAVAIL", "nothing biounlock can take: the password, at once")
        XCTAssertEqual(locked.messages.count, 2, "\(locked.messages)")
        XCTAssertEqual(locked.messages.first, "ERROR: No fingerprint enrolled.")
        // The wait (1 min) started a moment ago: "1 min" or "59 s", whichever second this is.
        XCTAssertTrue(locked.messages.last?.hasPrefix("ERROR: PIN locked for ") == true, "\(locked.messages)")
        XCTAssertTrue(locked.messages.last?.hasSuffix(": use your password.") == true, "\(locked.messages)")
        XCTAssertEqual(locked.lines("ARGON2"), [], "no passcode checked")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 5)
        // The minute passes: one more wrong passcode starts a 5-minute wait.
        try sql("UPDATE users SET passcode_failure_at = passcode_failure_at - 61")
        XCTAssertEqual(try fixture.authenticate(answers: ["1357"]).code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).messages.last, "ERROR: PIN locked for 5 min: use your password.")
        // With a finger enrolled: the finger still unlocks.
        for t in templates { try fixture.store.saveTemplate(t, user: user) }
        let touched = try fixture.authenticate(touches: [touch])
        XCTAssertEqual(touched.code, "PAM_SUCCESS")
        XCTAssertEqual(touched.messages, ["ERROR: PIN locked for 5 min: use your finger or your password.",
                                          "INFO: Touch the fingerprint reader to authenticate for biotest"])
    }

    func testPasscodeRequiredAfterBootThenTheFingerWorksUntilTheNextBoot() throws {
        try fixture.service("require_passcode=boot")
        let first = try fixture.authenticate(answers: [ModuleFixture.pin], touches: [])
        XCTAssertEqual(first.code, "PAM_SUCCESS")
        XCTAssertEqual(first.messages, ["INFO: PIN required: enter it once before using your finger.", pinPrompt])
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
        try sql("UPDATE users SET passcode_boot_id = 'an-earlier-boot'")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).messages.first, "INFO: PIN required after a restart.")
    }

    func testEnrolmentChangeAndAgeRules() throws {
        try fixture.service("require_passcode=enrolment,72h")
        try sql("UPDATE users SET passcode_success_at = strftime('%s','now'), passcode_enrolment_version = enrolment_version")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
        try fixture.store.saveTemplate(Template(finger: .leftThumb, sensor: .simulated, data: Array("thumb".utf8), created: 5), user: user)
        XCTAssertEqual(try fixture.authenticate(answers: [""]).messages.first, "INFO: PIN required: the enrolled fingers have changed.")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).code, "PAM_SUCCESS")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")
        try sql("UPDATE users SET passcode_success_at = strftime('%s','now') - 73 * 3600")
        XCTAssertEqual(try fixture.authenticate(answers: [""]).messages.first, "INFO: PIN required: not entered for 3d.")
    }

    func lastAuditReason() throws -> String {
        let r = try runProcess("/usr/bin/sqlite3", [fixture.storePath, "SELECT reason FROM events ORDER BY id DESC LIMIT 1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Issue 32, item 1: at a login service the first login of each boot takes the Unix password.
    /// biounlock offers neither the finger nor the PIN (the PIN entered this boot elsewhere does
    /// not count), says so and steps aside; the password module (pam_permit standing in for
    /// pam_unix) succeeds, pam_sm_setcred records it with the boot id, and the finger is back at
    /// the login service until the next boot. Other services, `login_services=` and
    /// require_passcode without `boot` are unchanged.
    func testLoginServiceTakesTheUnixPasswordOncePerBoot() throws {
        let loginTouch = "INFO: " + ContractText.touchRequest("login")
        try fixture.service("require_passcode=boot")
        try fixture.service("require_passcode=boot", name: "login", after: "auth sufficient pam_permit.so",
                            control: ModuleFixture.recommendedControl)
        // The PIN this boot, at a service that is no login service: the finger is back there...
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).code, "PAM_SUCCESS")
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS", "not a login service: unchanged")
        // ...but not at login: no touch prompt, no PIN prompt, the message, the password module.
        let first = try fixture.authenticate(service: "login", extra: ["--setcred"])
        XCTAssertEqual(first.messages, ["INFO: Password required after a restart."])
        XCTAssertEqual(first.code, "PAM_SUCCESS", "the stack's password module decided")
        XCTAssertTrue(first.raw.stdout.contains("SETCRED 0 PAM_SUCCESS"), first.raw.stdout)
        XCTAssertEqual(try lastAuditReason(), "password-required-boot")
        let second = try fixture.authenticate(service: "login", touches: [touch], extra: ["--setcred"])
        XCTAssertEqual(second.messages, [loginTouch], "the password of this boot lets the finger in")
        XCTAssertEqual(second.code, "PAM_SUCCESS")
        // A new boot: the password again, and the PIN typed at login does not stand in for it.
        try sql("UPDATE users SET password_boot_id = 'an-earlier-boot'")
        try fixture.service("require_passcode=boot", name: "login", after: "auth requisite pam_deny.so",
                            control: ModuleFixture.recommendedControl)
        // (A caller calls pam_setcred only after the stack succeeded: here it failed, so none.)
        let refused = try fixture.authenticate(service: "login", answers: [ModuleFixture.pin])
        XCTAssertEqual(refused.messages, ["INFO: Password required after a restart."], "no PIN prompt")
        XCTAssertEqual(refused.code, "PAM_AUTH_ERR", "the 'password' was wrong")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passwordBootID, "an-earlier-boot", "a refusal records no password")
        // login_services= (none) and require_passcode without `boot`: the finger, as before.
        try fixture.service("require_passcode=boot login_services=", name: "login")
        XCTAssertEqual(try fixture.authenticate(service: "login", touches: [touch]).messages, [loginTouch])
        try fixture.service("require_passcode=enrolment", name: "login")
        XCTAssertEqual(try fixture.authenticate(service: "login", touches: [touch]).messages, [loginTouch])
        // Listed by name: another service named in login_services takes the password too.
        try fixture.service("require_passcode=boot login_services=biotest")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).messages, ["INFO: Password required after a restart."])
    }

    /// Issue 32, item 1, at the greeter: its fingerprint stack (biounlock alone, the README's
    /// `[success=ok default=die]` line, policy=biometrics) fails at once in a new boot -- no touch
    /// request, the message -- so the greeter shows its password field; the password stack beside
    /// it (biounlock handing on, pam_permit standing in for pam_unix, gdm's pam_setcred) records
    /// the password, and the fingerprint stack takes the finger until the next boot.
    func testTheGreetersFingerprintStackFailsAtOnceUntilThePasswordOfThisBoot() throws {
        let greeter = "policy=biometrics touch_first=120 require_passcode=boot"
        try fixture.service(greeter, name: "gdm-fingerprint", after: "auth optional pam_permit.so", control: "[success=ok default=die]")
        try fixture.service("require_passcode=boot", name: "gdm-password", after: "auth sufficient pam_permit.so",
                            control: ModuleFixture.recommendedControl)
        let refused = try fixture.authenticate(service: "gdm-fingerprint")
        XCTAssertEqual(refused.code, "PAM_AUTHINFO_UNAVAIL", refused.raw.stdout)
        XCTAssertEqual(refused.messages, ["INFO: Password required after a restart."], "no touch request")
        let password = try fixture.authenticate(service: "gdm-password", extra: ["--setcred"])
        XCTAssertEqual(password.code, "PAM_SUCCESS")
        XCTAssertEqual(password.messages, ["INFO: Password required after a restart."], "no PIN prompt beside the password")
        let touched = try fixture.authenticate(service: "gdm-fingerprint", touches: [touch])
        XCTAssertEqual(touched.code, "PAM_SUCCESS", touched.raw.stdout)
        XCTAssertEqual(touched.messages, ["INFO: " + ContractText.touchRequest("gdm-fingerprint")])
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

    /// The greeter's password stack beside its fingerprint stack, with biometric unlock turned off
    /// there (`biounlock disable USER --service gdm-password`): biounlock asks for nothing, yet the
    /// password that stack accepts (pam_permit standing in for pam_unix) is seen in
    /// pam_sm_setcred and satisfies "after a boot" for the fingerprint stack. A user with
    /// biometric unlock off everywhere gets nothing written.
    func testThePasswordOfAServiceBiounlockIsOffForSatisfiesTheRules() throws {
        try fixture.service("policy=biometrics require_passcode=boot", name: "fingerprint")
        try fixture.service("policy=biometrics require_passcode=boot", name: "password", after: "auth sufficient pam_permit.so",
                            control: ModuleFixture.recommendedControl)
        try fixture.store.setEnabled(false, user: user, service: "password", at: 1)
        XCTAssertEqual(try fixture.authenticate(service: "fingerprint", touches: [touch]).messages,
                       ["INFO: Password required: enter it once before using your finger."], "after a boot: the finger is off")
        let password = try fixture.authenticate(service: "password", extra: ["--setcred"])
        XCTAssertEqual(password.code, "PAM_SUCCESS")
        XCTAssertEqual(password.messages, [], "nothing asked or shown where biounlock is off")
        XCTAssertTrue(password.raw.stdout.contains("SETCRED 0 PAM_SUCCESS"))
        XCTAssertNotNil(try fixture.store.loadUser(user)?.passcodeSuccessAt, "the password is witnessed")
        let finger = try fixture.authenticate(service: "fingerprint", touches: [touch])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", "the finger is back in the fingerprint stack")

        // Off everywhere: the password of any stack records nothing.
        try sql("UPDATE users SET passcode_success_at = NULL")
        try fixture.store.setEnabled(false, user: user, service: nil, at: 2)
        try sql("DELETE FROM service_overrides")
        XCTAssertEqual(try fixture.authenticate(service: "password", extra: ["--setcred"]).code, "PAM_SUCCESS")
        XCTAssertNil(try fixture.store.loadUser(user)?.passcodeSuccessAt, "biometric unlock off: nothing of the user's is written")
    }

    /// The Unix password typed at biounlock's prompt and accepted by the stack (pam_permit standing
    /// in for pam_unix) is seen in pam_sm_setcred and clears the passcode failures -- also when
    /// the caller, like sudo, makes PAM_USER the target user before pam_setcred (the note then
    /// names PAM_RUSER, the user sudo authenticated). A note about anyone else records nothing.
    func testAPasswordAcceptedByTheStackClearsTheCountersAsSudoCallsIt() throws {
        try fixture.service("touch_first=0", after: "auth sufficient pam_permit.so", control: ModuleFixture.recommendedControl)
        try fixture.store.deleteTemplates(user: user, finger: nil)
        try sql("UPDATE users SET passcode_failures = 3")
        let other = try fixture.authenticate(answers: ["unix-password"], extra: ["--setcred", "--ruser", "bin", "--setcred-user", "root"])
        XCTAssertEqual(other.code, "PAM_SUCCESS")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 3, "PAM_USER changed to someone the note does not name")
        let sudoLike = try fixture.authenticate(answers: ["unix-password"], extra: ["--setcred", "--ruser", user, "--setcred-user", "root"])
        XCTAssertEqual(sudoLike.code, "PAM_SUCCESS")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
    }

    /// A note left by an earlier pam_authenticate on the same handle (sudo asks up to three times)
    /// must not make pam_setcred record a password success the last attempt never handed on.
    func testANoteFromAnEarlierAttemptOnTheHandleRecordsNothing() throws {
        try fixture.service("touch_first=0", after: "auth sufficient pam_permit.so", control: ModuleFixture.recommendedControl)
        try fixture.store.deleteTemplates(user: user, finger: nil)
        try sql("UPDATE users SET passcode_failures = 3")
        let t = try fixture.authenticate(answers: ["unix-password", "@FAIL"], extra: ["--auth-count", "2", "--setcred"])
        XCTAssertEqual(t.codes, ["PAM_SUCCESS", "PAM_CONV_ERR"], t.raw.stdout)
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 3, "the last attempt failed: no password success to record")
    }

    /// Every way a session looks remote, under the default remote=ignore: PAM_IGNORE, nothing
    /// shown, nothing counted, no audit row.
    func testRemoteSessionsAreLeftAloneByDefault() throws {
        try FileManager.default.createDirectory(atPath: fixture.dir + "/sessions", withIntermediateDirectories: true)
        let remote: [(String, [String], [String: String])] = [
            ("PAM_RHOST of another host", ["--rhost", "203.0.113.7"], [:]),
            ("PAM_RHOST 127.0.0.1 (sshd on the loopback, or a tunnel)", ["--rhost", "127.0.0.1"], [:]),
            ("PAM_TTY ssh", ["--tty", "ssh"], [:]),
            ("SSH_CONNECTION in the PAM environment", ["--env", "SSH_CONNECTION=203.0.113.7 5 10.0.0.1 22"], [:]),
            ("SSH_CLIENT in the process environment", [], ["SSH_CLIENT": "203.0.113.7 5 22"]),
            ("logind REMOTE=1 for the process's audit session", ["--remote-audit-session", fixture.dir + "/sessions"], [:]),
        ]
        for (name, extra, environment) in remote {
            let t = try fixture.authenticate(answers: ["1357"], touches: [wrong], extra: extra, environment: environment, touchWait: 300)
            XCTAssertEqual(t.code, "PAM_TRY_AGAIN", "\(name): the module returned PAM_IGNORE")
            XCTAssertEqual(t.messages, [], name)
        }
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 0)
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
        XCTAssertEqual(try fixture.store.recentEvents(), [], "no audit row")
        XCTAssertEqual(try fixture.authenticate(touches: [touch], extra: ["--rhost", "localhost"]).code, "PAM_SUCCESS", "local names are local")
    }

    /// Finding 28.1: su keeps the caller's environment, so a user logged in over SSH could name a
    /// local logind session in XDG_SESSION_ID (`XDG_SESSION_ID=2 su bob`) and get bob's PIN
    /// prompt, an oracle and bob's counters. The module reads its own audit session instead: the
    /// remote one, whatever the variable says (PAM environment or process environment).
    func testXDGSessionIDCannotMakeARemoteSessionLocal() throws {
        try FileManager.default.createDirectory(atPath: fixture.dir + "/sessions", withIntermediateDirectories: true)
        try "UID=0\nREMOTE=0\nTYPE=x11\n".write(toFile: fixture.dir + "/sessions/2", atomically: true, encoding: .utf8)
        let remoteSession = ["--remote-audit-session", fixture.dir + "/sessions"]
        for (how, extra, environment) in [("process environment, as su keeps it", remoteSession, ["XDG_SESSION_ID": "2"]),
                                          ("PAM environment", remoteSession + ["--env", "XDG_SESSION_ID=2"], [:])] {
            let t = try fixture.authenticate(answers: ["1357"], touches: [wrong], extra: extra, environment: environment, touchWait: 300)
            XCTAssertEqual(t.code, "PAM_TRY_AGAIN", "\(how): the module returned PAM_IGNORE")
            XCTAssertEqual(t.messages, [], "\(how): no prompt")
        }
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0, "no PIN checked for the remote session")
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 0)
        XCTAssertEqual(try fixture.store.recentEvents(), [], "no audit row")
        // The same session file named by the variable alone, with no remote audit session: local, as before.
        XCTAssertEqual(try fixture.authenticate(touches: [touch], environment: ["XDG_SESSION_ID": "2"]).code, "PAM_SUCCESS")
    }

    func testRemotePasscodeSkipsTheFingerAndRemoteAllowKeepsIt() throws {
        try fixture.service("remote=passcode")
        let viaRhost = try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--rhost", "203.0.113.7"])
        XCTAssertEqual(viaRhost.code, "PAM_SUCCESS")
        XCTAssertEqual(viaRhost.messages, ["INFO: Fingerprint skipped: remote session.", pinPrompt])
        try fixture.service("remote=skip")
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--tty", "ssh"]).messages,
                       ["INFO: Fingerprint skipped: remote session.", pinPrompt], "0.1.0's remote=skip still means this")
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

    /// Issue 33: a closed lid covers the built-in reader, not one in a dock. Through the built
    /// module: a supported reader on a removable USB port (a fake sysfs tree) is asked for and
    /// a touch succeeds; the same reader on a fixed port is skipped.
    func testClosedLidAsksForAReaderOnARemovableUSBPort() throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: fixture.dir + "/lid/LID0", withIntermediateDirectories: true)
        try "state:      closed\n".write(toFile: fixture.dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        try "# Supported by libfprint driver goodixmoc\nusb:v27C6p609C*\n ID_AUTOSUSPEND=1\n"
            .write(toFile: fixture.dir + "/hwdb", atomically: true, encoding: .utf8)
        try fm.createDirectory(atPath: fixture.dir + "/usb/3-1", withIntermediateDirectories: true)
        for (file, value) in [("idVendor", "27c6"), ("idProduct", "609c"), ("removable", "removable")] {
            try (value + "\n").write(toFile: fixture.dir + "/usb/3-1/" + file, atomically: true, encoding: .utf8)
        }
        let paths = "lid_usb_path=\(fixture.dir)/usb lid_reader_ids=\(fixture.dir)/hwdb"
        try fixture.service("policy=biometrics timeout=120 \(paths)")
        let docked = try fixture.authenticate(touches: [touch])
        XCTAssertEqual(docked.code, "PAM_SUCCESS", "the reader in the dock is not under the lid")
        XCTAssertFalse(docked.messages.contains("INFO: Fingerprint skipped: the lid is closed."), "\(docked.messages)")

        try "fixed\n".write(toFile: fixture.dir + "/usb/3-1/removable", atomically: true, encoding: .utf8)
        let t = try fixture.authenticate(touches: [], timeout: 30)
        XCTAssertFalse(t.raw.timedOut, "no waiting for a touch")
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(t.messages, ["INFO: Fingerprint skipped: the lid is closed."], "the built-in reader is under the lid")
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
        XCTAssertEqual(try fixture.authenticate(answers: ["1236"]).code, "PAM_AUTHINFO_UNAVAIL", "a wrong pattern: counted, handed on")
        XCTAssertEqual(try fixture.authenticate(answers: ["99999"]).code, "PAM_AUTHINFO_UNAVAIL", "not a pattern: handed on")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 1, "only the one that could be the pattern was a guess")
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
        XCTAssertTrue(outputs.allSatisfy { $0.harnessCode == "PAM_AUTHINFO_UNAVAIL" }, "each handed on to the password")
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
        XCTAssertTrue(outputs.allSatisfy { $0.harnessCode == "PAM_AUTHINFO_UNAVAIL" }, "each handed on to the password")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 50)
        XCTAssertEqual(try fixture.store.recentEvents(limit: 100).filter { $0.reason == "wrong-passcode" }.count, 50)
    }
}

