import XCTest
import TestSupport
import Foundation

/// `biounlock enable` and `disable`.
final class EnableCommandTests: CLIFixture {
    func testEnableRefusesWithTheExactCommandsToRun() throws {
        let r = try cli(["enable", user])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("run: biounlock --db \(db) --sensor simulated --sim-socket \(socket) --config \(dir)/biounlock.conf enrol daemon --finger right-index-finger"), r.stderr)
        XCTAssertTrue(r.stderr.contains("passcode set daemon --kind pin"), r.stderr)
        let status = try json(try cli(["status", user, "--json"]))
        let users = try XCTUnwrap(status["users"] as? [[String: Any]])
        XCTAssertEqual(users.first?["enabled"] as? Bool, false, "the toggle stays off")
    }

    /// --service must name a PAM service that exists (a file in the pam.d directory), or the
    /// admin says with --force that it is to be installed later; nothing is written otherwise.
    func testServiceMustExistUnlessForced() throws {
        let pam = dir + "/pam.d"
        try FileManager.default.createDirectory(atPath: pam, withIntermediateDirectories: true)
        for service in ["sudo", "login"] { FileManager.default.createFile(atPath: pam + "/" + service, contents: Data("@include common-auth\n".utf8)) }
        for command in ["enable", "disable"] {
            let r = try cli([command, user, "--service", "sudoo", "--pam-dir", pam])
            XCTAssertEqual(r.status, 1, "\(command): \(r.stdout)")
            XCTAssertTrue(r.stderr.contains("no PAM service 'sudoo' in \(pam); did you mean 'sudo'? (--force sets it for a service that is not installed yet)"), r.stderr)
            let far = try cli([command, user, "--service", "gdm-password", "--pam-dir", pam])
            XCTAssertEqual(far.status, 1)
            XCTAssertTrue(far.stderr.contains("no PAM service 'gdm-password' in \(pam); check the name"), far.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: db), "nothing written")
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        XCTAssertEqual(try cli(["disable", user, "--service", "sudo", "--pam-dir", pam]).status, 0)
        let forced = try cli(["disable", user, "--service", "gdm-password", "--pam-dir", pam, "--force"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        let users = try XCTUnwrap(try json(try cli(["status", user, "--json"]))["users"] as? [[String: Any]])
        XCTAssertEqual(users.first?["services"] as? [String: Bool], ["gdm-password": false, "sudo": false])
    }

    /// `disable` for an account biounlock has no record of: refused, and no row (nor store) made.
    func testDisableWithoutARecordWritesNothing() throws {
        let r = try cli(["disable", "nobody"])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.stderr.contains("nobody has no biounlock record: biometric unlock is off for nobody already; nothing was changed"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        XCTAssertEqual(try cli(["disable", "nobody", "--service", "login", "--force"]).status, 1)
        let list = try json(try cli(["list", "--json"]))
        XCTAssertEqual((list["users"] as? [[String: Any]])?.compactMap { $0["user"] as? String }, [user], "no row for nobody")
        XCTAssertEqual(try cli(["disable", "biounlock-no-such-user"]).status, 1)
        XCTAssertEqual(try cli(["disable", user]).status, 0, "a user with a record")
    }
}
