import XCTest
import TestSupport
import Foundation

/// The command line as the parser takes it: help, usage errors (exit 64), option values.
final class ParserTests: CLIFixture {
    func testHelpAndUsageErrors() throws {
        let help = try runProcess(cliPath, ["--help"])
        XCTAssertEqual(help.status, 0)
        for command in ["enrol", "passcode set", "enable", "disable", "status", "sim scan"] {
            XCTAssertTrue(help.stdout.contains(command), command)
        }
        for group in [["sim"], ["sim", "--help"], ["passcode"]] {
            let r = try runProcess(cliPath, group)
            XCTAssertEqual(r.status, 0, "\(group)")
            XCTAssertTrue(r.stdout.contains("COMMANDS:"), r.stdout)
        }
        XCTAssertTrue(try runProcess(cliPath, ["frobnicate"]).stderr.contains("see 'biounlock --help'"))
        let enrolHelp = try runProcess(cliPath, ["enrol", "--help"])
        XCTAssertEqual(enrolHelp.status, 0)
        XCTAssertTrue(enrolHelp.stdout.contains("USAGE: biounlock enrol USER [--finger F]"), enrolHelp.stdout)

        let cases: [([String], String)] = [
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["enrol"], "missing USER"),
            (["enrol", "daemon", "--toe", "x"], "unknown option '--toe'"),
            (["enrol", "daemon", "--finger"], "--finger needs a value"),
            (["status", "a", "b"], "unexpected argument 'b'"),
            (["enrol", "daemon", "--finger", "nose"], "unknown finger 'nose'"),
            (["passcode", "set", "daemon", "--kind", "tattoo"], "unknown kind 'tattoo'"),
        ]
        for (args, message) in cases {
            let r = try runProcess(cliPath, args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
    }

    /// Values are checked by the parser from each option's kind (OptionValueKind), before the
    /// command runs: every command taking --service refuses the same names, numbers follow Core's
    /// integer rule (no sign, no spaces, in range), and nothing is created on the way.
    func testOptionValuesAreCheckedBeforeTheCommandRuns() throws {
        let cases: [([String], String)] = [
            (["enable", user, "--service", "../sudo"], "'../sudo' is not a PAM service name"),
            (["disable", user, "--service", "su do"], "'su do' is not a PAM service name"),
            (["verify", user, "--service", ".hidden"], "'.hidden' is not a PAM service name"),
            (["log", "--service", "pam.d/sudo"], "'pam.d/sudo' is not a PAM service name"),
            (["log", "--limit", "+5"], "--limit takes 1-1000000"),
            (["log", "--limit=0"], "--limit takes 1-1000000"),
            (["enrol", user, "--timeout", "601"], "--timeout takes 1-600 seconds"),
            (["enrol", user, "--timeout", " 5"], "--timeout takes 1-600 seconds"),
            (["sim", "scan", "x", "--wait", "-1"], "--wait takes 0-600 seconds"),
            (["sim", "sleep", "+5"], "'+5' is not a valid MS for sim sleep"),
        ]
        for (args, message) in cases {
            let r = try cli(args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
        XCTAssertEqual(try cli(["log", "--service", "polkit-1", "--limit", "3"]).status, 0)
    }
}
