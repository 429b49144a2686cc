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
    /// command runs: every command taking --service refuses the same names (enable and disable
    /// also take a group, and say so), numbers follow Core's
    /// integer rule (no sign, no spaces, in range), and nothing is created on the way.
    func testOptionValuesAreCheckedBeforeTheCommandRuns() throws {
        let cases: [([String], String)] = [
            (["enable", user, "--service", "../sudo"], "'../sudo' is neither a PAM service name nor a group of them (@sudo, @login, @all)"),
            (["disable", user, "--service", "su do"], "'su do' is neither a PAM service name nor a group of them"),
            (["disable", user, "--service", "@"], "'@' is neither a PAM service name nor a group of them"),
            (["log", "--service", "@login"], "'@login' is not a PAM service name"),
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

    /// `biounlock --version` and `biounlock version` say what ./VERSION says (embedded at build
    /// time by Plugins/EmbedVersion), as text and as JSON.
    func testVersionIsTheFilesVersion() throws {
        let root = URL(fileURLWithPath: cliBuildDirectory).deletingLastPathComponent()
        let version = try String(contentsOf: root.appendingPathComponent("VERSION"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(version.isEmpty)
        for args in [["--version"], ["version"]] {
            let r = try runProcess(cliPath, args)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "biounlock \(version)\n", "\(args)")
        }
        let j = try runProcess(cliPath, ["version", "--json"])
        XCTAssertEqual(try json(j)["version"] as? String, version)
        // After a command, --version is that command's (unknown) option.
        let misplaced = try runProcess(cliPath, ["status", "--version"])
        XCTAssertEqual(misplaced.status, 64)
        XCTAssertTrue(misplaced.stderr.contains("unknown option '--version' for 'status'"), misplaced.stderr)
    }

    /// fprintd's spellings (`enroll`, `unenroll`) are the same commands, help included.
    func testFprintdSpellingsAreAccepted() throws {
        let help = try runProcess(cliPath, ["enroll", "--help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        XCTAssertTrue(help.stdout.hasPrefix("USAGE: biounlock enrol USER"), help.stdout)
        XCTAssertTrue(help.stdout.contains("Also: biounlock enroll"), help.stdout)
        XCTAssertEqual(try runProcess(cliPath, ["help", "unenroll"]).stdout, try runProcess(cliPath, ["unenrol", "--help"]).stdout)
        // And they run: an enrolment nobody touches ends in the enrol command's own failure.
        let r = try cli(["enroll", user, "--timeout", "1"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("enrolment failed"), r.stderr)
        let u = try cli(["unenroll", user, "--all"])
        XCTAssertEqual(u.status, 1, u.stderr)
        XCTAssertTrue(u.stderr.contains("no finger is enrolled for daemon"), u.stderr)
    }

    /// A mistyped command or option gets the one it most likely meant; nothing close, nothing said.
    func testDidYouMean() throws {
        let cases: [([String], String)] = [
            (["stauts"], "unknown command 'stauts'; did you mean 'status'?"),
            (["enrl", user], "unknown command 'enrl'; did you mean 'enrol'?"),
            (["doctr"], "unknown command 'doctr'; did you mean 'doctor'?"),
            (["sim", "scn", "x"], "unknown command 'sim scn'; did you mean 'sim scan'?"),
            (["passcode", "st", user], "unknown command 'passcode st'; did you mean 'passcode set'?"),
            (["stat"], "unknown command 'stat'; did you mean 'status'?"),
            (["enrol", user, "--fingr", "x"], "unknown option '--fingr' for 'enrol'; did you mean '--finger'?"),
            (["--jsno", "status"], "unknown option '--jsno'; did you mean '--json'?"),
        ]
        for (args, message) in cases {
            let r = try runProcess(cliPath, args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        for args in [["xyzzy"], ["enrol", user, "--toe", "x"]] {
            let r = try runProcess(cliPath, args)
            XCTAssertEqual(r.status, 64)
            XCTAssertFalse(r.stderr.contains("did you mean"), "\(args): \(r.stderr)")
        }
    }

    /// --json is taken by every command that reports and refused (exit 64, nothing done) by
    /// every other one: never silently ignored. The commands come from `biounlock --help`.
    func testJSONIsTakenOrRefusedByEveryCommand() throws {
        let reporting: Set<String> = ["status", "list", "log", "doctor", "sensors", "version"]
        let help = try runProcess(cliPath, ["--help"]).stdout
        let usages = help.components(separatedBy: "\n").drop { $0 != "COMMANDS:" }.dropFirst().prefix { !$0.isEmpty }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
        XCTAssertGreaterThan(usages.count, 15, help)
        var seen = Set<String>()
        for usage in usages {
            // The command words and its required arguments ("sim scan ID", "enable USER").
            let words = (usage.dropFirst(2).components(separatedBy: "  ").first ?? "").split(separator: " ").map(String.init)
                .prefix { !$0.hasPrefix("[") && !$0.hasPrefix("(") }
            let command = words.filter { $0 == $0.lowercased() }.joined(separator: " ")
            let args = words.map { $0 == "USER" ? user : ($0 == $0.lowercased() ? $0 : "1") }
            seen.insert(command)
            let r = try cli(args + ["--json"] + (command == "doctor" ? ["--pam-dir", dir] : []), stdin: "")
            if reporting.contains(command) {
                XCTAssertNotEqual(r.status, 64, "\(command) --json: \(r.stderr)")
                if r.status == 0 { XCTAssertNoThrow(try json(r), "\(command) --json") }
            } else {
                XCTAssertEqual(r.status, 64, "\(command) --json: \(r.stdout)\(r.stderr)")
                XCTAssertTrue(r.stderr.contains("'\(command)' has no --json output"), r.stderr)
            }
        }
        XCTAssertTrue(reporting.isSubset(of: seen), "\(seen)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: db), "nothing was created")
    }

    /// A global option's value is checked by the option table the module uses: a value it
    /// refuses is a usage error, not a warning followed by the default (exit 0).
    func testGlobalOptionValuesAreChecked() throws {
        let cases: [([String], String)] = [
            (["--sensor", "bogus", "status"], "--sensor does not take 'bogus'; use auto, libfprint, fprintd, simulated"),
            (["status", "--policy=finger"], "--policy does not take 'finger'; use biometrics-or-passcode, biometrics"),
            (["--db", "relative.db", "status"], "--db does not take 'relative.db'; use an absolute path"),
            (["--sensor", "bogus", "passcode", "set", user, "--stdin"], "--sensor does not take 'bogus'"),
        ]
        for (args, message) in cases {
            let r = try runProcess(cliPath, args + ["--config", dir + "/biounlock.conf"], stdin: "2468\n")
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("warning"), r.stderr)
        }
    }

    /// The global options are listed once: in `biounlock --help`, not in each command's help.
    func testGlobalOptionsAreShownOnce() throws {
        let top = try runProcess(cliPath, ["--help"]).stdout
        for flag in ["--db PATH", "--config PATH", "--sensor KIND", "--sim-socket PATH", "--policy POLICY", "--json", "--version", "-h, --help"] {
            XCTAssertEqual(top.components(separatedBy: "\n  \(flag)").count, 2, "\(flag) once in:\n\(top)")
        }
        let enrol = try runProcess(cliPath, ["enrol", "--help"]).stdout
        XCTAssertFalse(enrol.contains("\n  --db"), enrol)
        XCTAssertFalse(enrol.contains("--json"), "enrol has no JSON output:\n\(enrol)")
        XCTAssertTrue(enrol.contains("Global options (--db, --config, ...): see 'biounlock --help'."), enrol)
        let status = try runProcess(cliPath, ["status", "--help"]).stdout
        XCTAssertEqual(status.components(separatedBy: "\n  --json").count, 2, status)
        XCTAssertFalse(status.contains("--db PATH"), status)
    }
}
