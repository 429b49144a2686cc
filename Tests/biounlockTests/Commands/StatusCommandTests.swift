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
        let again = try enrol("daemon-ri", finger: "right-index", ["--replace"])
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

    /// A user who is not root cannot read the store (its directory is 0700): every command that
    /// reports it says so and exits 1, never "biometric unlock: off" or "No users" with exit 0;
    /// doctor reports it as a problem, not as a store that "does not exist yet".
    func testAUserWhoCannotReadTheStoreIsToldSo() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        chmod(dir, 0o755)   // the config file and the store's directory are reachable; the store is not
        for args in [["status"], ["status", user], ["status", user, "--json"], ["list"], ["list", "--json"], ["log"], ["log", "--json"]] {
            let r = try cli(args, asUser: 65534)
            XCTAssertEqual(r.status, 1, "\(args): \(r.stdout)")
            XCTAssertEqual(r.stdout, "", "\(args): nothing reported")
            XCTAssertTrue(r.stderr.contains("cannot read the biounlock store (\(db)): only root can; run it with sudo"), "\(args): \(r.stderr)")
        }
        let doctor = try cli(["doctor", "--json", "--pam-dir", dir], asUser: 65534)
        XCTAssertEqual(doctor.status, 1, doctor.stdout)
        let store = (try json(doctor)["checks"] as? [[String: Any]])?.first { $0["check"] as? String == "store" }
        XCTAssertEqual(store?["status"] as? String, "problem", "\(String(describing: store))")
        XCTAssertEqual(store?["detail"] as? String, "cannot read the biounlock store (\(db)): only root can; run it with sudo")
        XCTAssertFalse(doctor.stdout.contains("does not exist yet"), doctor.stdout)
        // Root reads it; and with no store at all there is nothing to report, for anyone.
        XCTAssertEqual(try cli(["status", user]).status, 0)
        try FileManager.default.removeItem(atPath: dir + "/db")
        let none = try cli(["status"], asUser: 65534)
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.stdout.contains("No users"), none.stdout)
    }

    /// `status NAME` for a name that is no account and has no record: an error, not a full
    /// "off" record; an account without a record is shown as off (the truth).
    func testStatusOfANameThatIsNoAccountIsAnError() throws {
        for args in [["status", "biounlock-no-such-user"], ["status", "biounlock-no-such-user", "--json"]] {
            let r = try cli(args)
            XCTAssertEqual(r.status, 1, "\(args): \(r.stdout)")
            XCTAssertEqual(r.stdout, "")
            XCTAssertTrue(r.stderr.contains("no such user 'biounlock-no-such-user' on this system"), r.stderr)
        }
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let r = try cli(["status", "biounlock-no-such-user"])
        XCTAssertEqual(r.status, 1, "with a store too: \(r.stdout)")
        let bin = try cli(["status", "bin"])
        XCTAssertEqual(bin.status, 0, bin.stderr)
        XCTAssertTrue(bin.stdout.contains("biometric unlock: off"), bin.stdout)
    }
}
