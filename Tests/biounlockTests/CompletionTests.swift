import XCTest
import TestSupport
import Foundation

/// The bash and zsh completions the package installs (packaging/completions): the bash
/// function is run as bash-completion runs it (COMP_WORDS, COMP_CWORD), with and without
/// bash-completion loaded; both files are checked against what `biounlock --help` and each
/// command's help list, so that a new command or option fails here until it completes.
final class CompletionTests: XCTestCase {
    let completions = URL(fileURLWithPath: cliBuildDirectory).deletingLastPathComponent().appendingPathComponent("packaging/completions").path

    /// COMPREPLY for the words typed so far (the last one is the word being completed).
    func complete(_ words: [String], withBashCompletion: Bool = false) throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let script = (withBashCompletion ? "source /usr/share/bash-completion/bash_completion\n" : "") + """
            source \(completions)/biounlock.bash
            COMP_WORDS=(biounlock \(quoted)); COMP_CWORD=\(words.count)
            _biounlock
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try runProcess("/bin/bash", ["--norc", "--noprofile", "-c", script])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// The commands of `biounlock --help` (their words) and each one's options from its help.
    func commands() throws -> [(words: [String], options: Set<String>)] {
        let help = try runProcess(cliPath, ["--help"]).stdout
        let lines = help.components(separatedBy: "\n").drop { $0 != "COMMANDS:" }.dropFirst().prefix { !$0.isEmpty }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
        return try lines.map { line in
            let words = line.dropFirst(2).split(separator: " ").map(String.init).prefix { $0 == $0.lowercased() && !$0.hasPrefix("[") && !$0.hasPrefix("(") }
            let own = try runProcess(cliPath, Array(words) + ["--help"]).stdout
            let options = own.components(separatedBy: "\n").drop { $0 != "OPTIONS:" }.dropFirst().prefix { !$0.isEmpty }
                .compactMap { $0.split(separator: " ").first.map(String.init) }
            return (Array(words), Set(options))
        }
    }

    func testBashCompletesEveryCommandAndOption() throws {
        let all = try commands()
        XCTAssertGreaterThan(all.count, 15)
        let firstWords = Set(try complete([""]))
        for (words, options) in all {
            XCTAssertTrue(firstWords.contains(words[0]), "\(words[0]) in \(firstWords)")
            if words.count == 2 { XCTAssertTrue(try complete([words[0], ""]).contains(words[1]), "\(words)") }
            XCTAssertEqual(Set(try complete(words + ["--"])), options.union(["--help"]), "\(words)")
        }
        // fprintd's spellings, and a prefix.
        XCTAssertTrue(firstWords.isSuperset(of: ["enroll", "unenroll", "version", "help"]))
        XCTAssertEqual(try complete(["sta"]), ["status"])
        XCTAssertEqual(Set(try complete(["enroll", "--"])), Set(try complete(["enrol", "--"])))
    }

    func testBashCompletesValuesAndSkipsGlobalOptions() throws {
        let top = try runProcess(cliPath, ["--help"]).stdout
        let sensors = try XCTUnwrap(top.components(separatedBy: "\n").first { $0.hasPrefix("  --sensor KIND") })
            .split(separator: " ").last.map { $0.split(separator: "|").map(String.init) }
        XCTAssertEqual(try complete(["--sensor", ""]), sensors)
        XCTAssertEqual(try complete(["--sensor", "=", ""]), sensors, "--sensor=VALUE as readline splits it")
        XCTAssertEqual(try complete(["--policy", "b"]), ["biometrics-or-passcode", "biometrics"])
        XCTAssertEqual(try complete(["passcode", "set", "daemon", "--kind", ""]), ["pin", "password", "pattern"])
        XCTAssertEqual(try complete(["enrol", "daemon", "--finger", "left-i"]), ["left-index-finger"])
        XCTAssertEqual(try complete(["--db", "/x", "--sensor", "simulated", "enable", "daem"]), ["daemon"], "a user after the global options")
        XCTAssertEqual(try complete(["status", "daemon", ""]), [], "status takes one user")
        XCTAssertEqual(try complete(["--"]).sorted(), ["--config", "--db", "--help", "--json", "--policy", "--sensor", "--sim-socket", "--version"])
        // With bash-completion itself loaded, as on a desktop, and registered for the command.
        XCTAssertEqual(try complete(["sta"], withBashCompletion: true), ["status"])
        let registered = try runProcess("/bin/bash", ["--norc", "-c", "source \(completions)/biounlock.bash; complete -p biounlock"])
        XCTAssertEqual(registered.stdout, "complete -F _biounlock biounlock\n")
    }

    /// zsh: the file parses, compinit registers it for biounlock, and it names every command
    /// and option the help lists.
    func testZshCompletionIsRegisteredAndComplete() throws {
        let file = completions + "/_biounlock"
        XCTAssertEqual(try runProcess("/usr/bin/zsh", ["-n", file]).status, 0)
        let home = NSTemporaryDirectory() + "bu-zsh-\(getpid())"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let r = try runProcess("/usr/bin/zsh", ["-f", "-c", "fpath=(\(completions) $fpath); autoload -U compinit; compinit -u -d \(home)/dump; print -r -- $_comps[biounlock]"],
                               environment: ["PATH": "/usr/bin:/bin", "HOME": home])
        XCTAssertEqual(r.stdout, "_biounlock\n", r.stderr)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        for (words, options) in try commands() {
            for word in words { XCTAssertTrue(text.contains("'\(word):") || text.contains(" \(word) ") || text.contains(" \(word)\n") || text.contains("\(word)|") || text.contains("\(word))"), "\(word)") }
            for option in options where option != "--json" { XCTAssertTrue(text.contains("'\(option)"), "\(words): \(option)") }
        }
    }
}
