import XCTest
import BiounlockAdmin
import BiounlockCore

/// `biounlock log`'s lines: what happened in words, then the stored codes as they are.
final class LogTextTests: XCTestCase {
    func line(_ outcome: String, method: AuthMethod = .none, service: String = "biounlockd", reason: String = "self") -> String {
        StatusReport.text(event: AuditEvent(time: 0, user: "alice", service: service, tty: "", rhost: "",
                                            method: method, outcome: outcome, reason: reason))
    }

    func testBiounlockdChangesAreSaidInWordsWithTheirCodes() {
        XCTAssertTrue(line("passcode-set:pin").hasSuffix("biounlockd  PIN set (none, passcode-set:pin, self)"), line("passcode-set:pin"))
        XCTAssertTrue(line("enabled:sudo").hasSuffix("biometric unlock turned on for sudo (none, enabled:sudo, self)"))
        XCTAssertTrue(line("enabled").hasSuffix("biometric unlock turned on (none, enabled, self)"))
        // Issue 31: the settings app's groups, in words.
        XCTAssertTrue(line("enabled:@all").hasSuffix("biometric unlock turned on everywhere (none, enabled:@all, self)"))
        XCTAssertTrue(line("disabled:@all").hasSuffix("biometric unlock turned off everywhere (none, disabled:@all, self)"))
        XCTAssertTrue(line("disabled:@login").hasSuffix("biometric unlock turned off for logging in or unlocking the screen (none, disabled:@login, self)"))
        XCTAssertTrue(line("enabled:@sudo").hasSuffix("biometric unlock turned on for running a command as root (none, enabled:@sudo, self)"))
        XCTAssertTrue(line("finger-enrolled:right-index-finger").hasSuffix("finger enrolled: right-index-finger (none, finger-enrolled:right-index-finger, self)"))
        XCTAssertTrue(line("fingers-removed:all").hasSuffix("every finger removed (none, fingers-removed:all, self)"))
        XCTAssertTrue(line("reauthenticated").hasSuffix("re-authenticated with the password (none, reauthenticated, self)"))
        XCTAssertTrue(line("lockouts-reset:passcode", reason: "admin-uid-0").hasSuffix("passcode lockout cleared (none, lockouts-reset:passcode, admin-uid-0)"))
    }

    func testAnUnknownCodeIsShownAsItIs() {
        XCTAssertTrue(line("passcode-set:sonar").hasSuffix("passcode-set:sonar (none, passcode-set:sonar, self)"))
        XCTAssertTrue(line("something-new").hasSuffix("something-new (none, something-new, self)"))
    }

    func testAuthenticationsKeepTheirWords() {
        XCTAssertTrue(line("success", method: .fingerprint, service: "sudo", reason: "finger-matched")
            .hasSuffix("running a command as root (sudo)  unlocked by a finger (fingerprint, success, finger-matched)"))
    }

    /// Issue 33, item 3: what the user was doing, then the service's name; an unknown service by its name alone.
    func testAuthenticationsSayWhatTheUserWasDoing() {
        XCTAssertTrue(line("success", method: .fingerprint, service: "kde-fingerprint", reason: "finger-matched")
            .contains("  unlocking the screen (kde-fingerprint)  unlocked by a finger"))
        XCTAssertTrue(line("success", method: .fingerprint, service: "polkit-1", reason: "finger-matched")
            .contains("  authorising an action (polkit-1)  "))
        XCTAssertTrue(line("success", method: .fingerprint, service: "my-app", reason: "finger-matched")
            .contains("  my-app  unlocked by a finger"))
    }
}
