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
            .hasSuffix("sudo  unlocked by a finger (fingerprint, success, finger-matched)"))
    }
}
