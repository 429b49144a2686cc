import XCTest
import TestSupport
import Foundation

/// `biounlock status`: its text and its documented JSON.
final class StatusCommandTests: CLIFixture {
    func testEnrolEnableAndStatusJSONShape() throws {
        let e = try enrol()
        XCTAssertEqual(e.status, 0, e.stderr)
        for i in 1...5 { XCTAssertTrue(e.stdout.contains("touch \(i)/5"), e.stdout) }
        // enrol suggests `enable` only once it would succeed: here the passcode is missing.
        XCTAssertFalse(e.stdout.contains("Turn biometric unlock on with"), e.stdout)
        XCTAssertTrue(e.stdout.contains("Next: biounlock"), e.stdout)
        XCTAssertTrue(e.stdout.contains("passcode set \(user) --kind pin"), e.stdout)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let again = try enrol()
        XCTAssertTrue(again.stdout.contains("Turn biometric unlock on with: biounlock"), again.stdout)
        let enable = try cli(["enable", user])
        XCTAssertEqual(enable.status, 0, enable.stderr)
        XCTAssertEqual(try cli(["disable", user, "--service", "sudo"]).status, 0)

        let status = try json(try cli(["status", "--json"]))
        XCTAssertEqual(Set(status.keys), ["store", "users", "fprintd"])
        XCTAssertEqual(status["store"] as? String, db)
        let users = try XCTUnwrap(status["users"] as? [[String: Any]])
        XCTAssertEqual(users.count, 1)
        let u = users[0]
        XCTAssertEqual(Set(u.keys), ["user", "enabled", "services", "fingers", "face", "passcode", "biometric_failures",
                                     "passcode_failures", "last_success", "last_failure", "biometric_lockout", "passcode_lockout",
                                     "passcode_required", "uid", "account"], "the documented JSON shape")
        XCTAssertEqual(u["uid"] as? Int, Int(getpwnam(user)?.pointee.pw_uid ?? 99), "bound to the account")
        XCTAssertEqual(Set((u["account"] as? [String: Any])?.keys ?? [:].keys), ["matches", "uid", "problem", "fix"])
        XCTAssertEqual((u["account"] as? [String: Any])?["matches"] as? Bool, true)
        let lockout = try XCTUnwrap(u["biometric_lockout"] as? [String: Any])
        XCTAssertEqual(lockout["locked"] as? Bool, false)
        XCTAssertTrue(lockout["until"] is NSNull)
        XCTAssertEqual(u["passcode_required"] as? String, "first-use", "enrolled, passcode never entered")
        XCTAssertEqual(u["user"] as? String, user)
        XCTAssertEqual(u["enabled"] as? Bool, true)
        XCTAssertEqual(u["services"] as? [String: Bool], ["sudo": false])
        XCTAssertEqual(u["passcode"] as? String, "pin")
        XCTAssertEqual(u["biometric_failures"] as? Int, 0)
        XCTAssertTrue(u["last_success"] is NSNull)
        let fingers = try XCTUnwrap(u["fingers"] as? [[String: Any]])
        XCTAssertEqual(fingers.first?["finger"] as? String, "right-index-finger")
        XCTAssertEqual(fingers.first?["sensor"] as? String, "simulated")
        XCTAssertNotNil((fingers.first?["enrolled"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression))

        let text = try cli(["status", user])
        XCTAssertTrue(text.stdout.contains("biometric unlock: on"), text.stdout)
        XCTAssertTrue(text.stdout.contains("for sudo: off"), text.stdout)
    }

    func testStatusWithoutAStoreCreatesNothing() throws {
        let r = try cli(["status"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("No users"), r.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
    }
}
