import XCTest
import TestSupport
import Foundation

/// The CLI run by a user (Client/UserMode) before it reaches the service: another user's name is
/// refused, usage errors are 64, and a service that cannot be reached is said -- never a record
/// (the whole exchange with biounlockd: Tests/EndToEnd/service.sh).
final class UserModeTests: CLIFixture {
    /// As nobody (65534), with the system bus somewhere that does not exist.
    func asUser(_ args: [String], stdin: String? = nil) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(dir)/no-bus"
        environment["LC_ALL"] = "C.UTF-8"
        environment["LANGUAGE"] = nil
        return try runProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", cliPath] + args,
                              stdin: stdin, environment: environment)
    }

    func testAnotherUsersNameIsRefusedBeforeAnythingIsAsked() throws {
        for args in [["status", "bin"], ["enable", "daemon", "--stdin"], ["log", "--user", "root"], ["passcode", "set", "bin", "--stdin"]] {
            let r = try asUser(args, stdin: "password\n1234\n")
            XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("you can manage only your own biometric unlock (you are nobody)"), r.stderr)
            XCTAssertTrue(r.stderr.contains("sudo biounlock"), r.stderr)
            XCTAssertFalse(r.stderr.contains("cannot be reached"), "refused before the bus: \(r.stderr)")
        }
    }

    func testNoServiceIsSaidNeverAnAnswer() throws {
        // (enable and disable also take a group, as biounlockd does: it goes to the service.)
        for args in [["status"], ["status", "nobody"], ["status", "--json"], ["log"], ["disable"], ["enable", "--stdin"],
                     ["disable", "--service", "@login"], ["enable", "--service", "@all", "--stdin"]] {
            let r = try asUser(args, stdin: "password\n")
            XCTAssertEqual(r.status, 1, "\(args)")
            XCTAssertTrue(r.stderr.contains("the biounlock service (biounlockd) cannot be reached, so nothing was read or changed"), r.stderr)
            XCTAssertEqual(r.stdout, "", "nothing printed as if it were the record: \(args)")
        }
    }

    func testUsageErrors() throws {
        for args in [["status", "--bogus"], ["enrol", "--finger"], ["reset", "a", "b"], ["enable", "--service", "../x"],
                     ["disable", "--service", "@desktop"], ["log", "--service", "@login"]] {
            let r = try asUser(args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
        }
    }

    /// Root's global options keep root's behaviour (and its refusal of writes without root).
    func testRootsOptionsAreRootsPath() throws {
        let r = try cli(["enable", "nobody"], asUser: 65534)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("only root may do"), r.stderr)
    }
}
