import XCTest
import TestSupport
import Foundation
import BiounlockCore

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
        for service in ["sudo", "login"] { _ = FileManager.default.createFile(atPath: pam + "/" + service, contents: Data("@include common-auth\n".utf8)) }
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

    /// --service also takes a group, as biounlockd and the settings app do: @sudo and @login write
    /// an override for each service of the group (no pam.d file needed), @all is the main switch
    /// (the toggle on or off, every override removed); an unknown group is a usage error.
    func testServiceGroups() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        func overrides() throws -> [String: Bool] {
            let users = try XCTUnwrap(try json(try cli(["status", user, "--json"]))["users"] as? [[String: Any]])
            return try XCTUnwrap(users.first?["services"] as? [String: Bool])
        }
        let before = try overrides()
        for command in ["enable", "disable"] {
            let unknown = try cli([command, user, "--service", "@desktop"])
            XCTAssertEqual(unknown.status, 64, unknown.stdout)
            XCTAssertTrue(unknown.stderr.contains("'@desktop' is neither a PAM service name nor a group of them (@sudo, @login, @all)"), unknown.stderr)
        }
        XCTAssertEqual(try overrides(), before, "nothing written")

        let noPamDir = dir + "/no-such-pam.d"
        let sudo = try cli(["disable", user, "--service", "@sudo", "--pam-dir", noPamDir])
        XCTAssertEqual(sudo.status, 0, sudo.stderr)
        XCTAssertTrue(sudo.stdout.contains("Biometric unlock off for daemon (service @sudo)."), sudo.stdout)
        let sudoOff = Dictionary(uniqueKeysWithValues: ServiceGroup.sudo.services.map { ($0, false) })
        XCTAssertEqual(try overrides(), sudoOff)
        XCTAssertEqual(try cli(["disable", user, "--service", "@login", "--pam-dir", noPamDir]).status, 0)
        XCTAssertEqual(try overrides(), sudoOff.merging(ServiceGroup.login.services.map { ($0, false) }) { a, _ in a })
        XCTAssertTrue(ServiceGroup.login.services.contains("login") && ServiceGroup.sudo.services.contains("su"))

        // Enabling a group or everything is refused as the toggle is while no finger is enrolled.
        XCTAssertEqual(try cli(["enable", user, "--service", "@login"]).status, 1)
        XCTAssertEqual(try enrol().status, 0)
        XCTAssertEqual(try cli(["enable", user, "--service", "@login"]).status, 0)
        XCTAssertEqual(try overrides(), sudoOff.merging(ServiceGroup.login.services.map { ($0, true) }) { a, _ in a })
        let all = try cli(["enable", user, "--service", "@all"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(try overrides(), [:], "every override removed")
        let users = try XCTUnwrap(try json(try cli(["status", user, "--json"]))["users"] as? [[String: Any]])
        XCTAssertEqual(users.first?["enabled"] as? Bool, true, "the toggle on")
    }
}
