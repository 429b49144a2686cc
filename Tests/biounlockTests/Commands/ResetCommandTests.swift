import XCTest
import TestSupport
import Foundation
import BiounlockStore

/// `biounlock reset`.
final class ResetCommandTests: CLIFixture {
    func testResetClearsLockouts() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let store = try Store.open(path: db, mode: .authenticate)
        for _ in 0..<5 { _ = try store.recordBiometricFailure(user: user, at: 1) }
        for _ in 0..<6 { _ = try store.recordPasscodeFailure(user: user, at: Int64(Date().timeIntervalSince1970)) }
        let before = try json(try cli(["status", user, "--json"]))
        let u = try XCTUnwrap((before["users"] as? [[String: Any]])?.first)
        XCTAssertEqual((u["biometric_lockout"] as? [String: Any])?["locked"] as? Bool, true)
        XCTAssertEqual((u["passcode_lockout"] as? [String: Any])?["locked"] as? Bool, true)
        XCTAssertNotNil((u["passcode_lockout"] as? [String: Any])?["until"] as? String)
        XCTAssertTrue(try cli(["status", user]).stdout.contains("fingerprint locked: yes, until the passcode is entered"))

        XCTAssertEqual(try cli(["reset", user, "--biometric"]).status, 0)
        XCTAssertEqual(try store.loadUser(user)?.biometricFailures, 0)
        XCTAssertEqual(try store.loadUser(user)?.passcodeFailures, 6)
        XCTAssertEqual(try cli(["reset", user]).status, 0)
        XCTAssertEqual(try store.loadUser(user)?.passcodeFailures, 0)
        XCTAssertEqual(try cli(["reset", user, "--biometric", "--passcode"]).status, 64)
        XCTAssertEqual(try cli(["reset", "nobody-here"]).status, 1)
    }
}
