import XCTest
import TestSupport
import Foundation

/// What the CLI prints: colour only where it belongs.
final class OutputTests: CLIFixture {
    func testColourOnlyOnATerminalAndNeverWithNoColor() throws {
        let plain = try cli(["frobnicate"])
        XCTAssertFalse(plain.stderr.contains("\u{1b}["), "no colour into a pipe")
        let script = """
            set timeout 10
            spawn \(cliPath) frobnicate
            expect eof
            """
        let tty = try runProcess("/usr/bin/expect", ["-c", script], environment: ["PATH": "/usr/bin:/bin", "TERM": "xterm"])
        XCTAssertTrue(tty.stdout.contains("\u{1b}[1;31mbiounlock:"), tty.stdout)
        let noColor = try runProcess("/usr/bin/expect", ["-c", script], environment: ["NO_COLOR": "1", "PATH": "/usr/bin:/bin"])
        XCTAssertFalse(noColor.stdout.contains("\u{1b}["), noColor.stdout)
    }
}
