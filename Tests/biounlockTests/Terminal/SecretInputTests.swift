import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore

/// Secrets typed on a terminal (expect gives the CLI one): no echo, notes on the terminal only.
final class SecretInputTests: CLIFixture {
    /// Interactively (expect gives the CLI a terminal) the drawing is shown on the terminal while
    /// the pattern is confirmed, then erased (cursor up over it and the prompt, erase below);
    /// standard output, redirected to a file here, never holds it.
    func testPatternIsDrawnOnTheTerminalWhileConfirmingThenErased() throws {
        let out = dir + "/stdout"
        let command = ([cliPath, "--db", db, "--sensor", "simulated", "--sim-socket", socket, "--config", dir + "/biounlock.conf",
                        "passcode", "set", user, "--kind", "pattern"]).joined(separator: " ") + " >\(out)"
        let script = """
            set timeout 30
            spawn /bin/sh -c "\(command)"
            expect {
                -ex "New pattern for daemon: " {}
                timeout { exit 124 }
            }
            send -- "1369\\r"
            expect {
                -ex "Repeat the pattern: " {}
                timeout { exit 124 }
            }
            send -- "1369\\r"
            expect {
                eof {}
                timeout { exit 124 }
            }
            catch wait result
            exit [lindex $result 3]
            """
        let r = try runProcess("/usr/bin/expect", ["-c", script], environment: ["PATH": "/usr/bin:/bin", "TERM": "xterm"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let shown = r.stdout
        let drawing = try XCTUnwrap(shown.range(of: "path: 1 → 2 → 3 → 6 → 9"), shown)
        let repeatPrompt = try XCTUnwrap(shown.range(of: "Repeat the pattern: "), shown)
        XCTAssertLessThan(drawing.lowerBound, repeatPrompt.lowerBound, "drawn before the repeat is asked for")
        XCTAssertTrue(shown[repeatPrompt.upperBound...].contains("\u{1b}[9A\r\u{1b}[J"), "then erased: 8 lines of drawing and the prompt:\n\(shown.debugDescription)")
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "Pattern set for daemon.\n", "nothing of it on standard output")
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("12369".utf8))!, against: XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode?.hash)))
    }

    /// From a terminal: asked twice, nothing echoed (driven through a pseudo-terminal by expect).
    /// As passwd does, a PIN that breaks a rule or a repeat that differs is asked for again, three
    /// times at most; then the command fails and nothing is stored.
    func testInteractivePasscodeEntryOnATerminal() throws {
        /// Each round: what is typed at "New PIN", and at "Repeat the PIN" (nil: not asked).
        func session(_ rounds: [(String, String?)]) throws -> ProcessResult {
            var steps = ""
            for (first, second) in rounds {
                steps += """
                    expect {
                        -ex "New PIN for \(user): " {}
                        timeout { exit 124 }
                    }
                    send "\(first)\\r"

                    """
                if let second {
                    steps += """
                        expect {
                            -ex "Repeat the PIN: " {}
                            timeout { exit 124 }
                        }
                        send "\(second)\\r"

                        """
                }
            }
            let script = """
                set timeout 20
                spawn \(cliPath) --db \(db) --config \(dir)/biounlock.conf passcode set \(user)
                \(steps)
                expect {
                    eof {}
                    -ex "New PIN for" { exit 125 }
                    timeout { exit 124 }
                }
                catch wait result
                exit [lindex $result 3]
                """
            return try runProcess("/usr/bin/expect", ["-c", script])
        }
        let r = try session([("97531", "97531")])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("PIN set for \(user)."), r.stdout)
        XCTAssertFalse(r.stdout.contains("97531"), "the passcode was echoed: \(r.stdout)")

        // Too short, then different, then right: set.
        let again = try session([("12", nil), ("86420", "86421"), ("86420", "86420")])
        XCTAssertEqual(again.status, 0, again.stdout)
        XCTAssertTrue(again.stdout.contains("a PIN needs at least 4 digits; try again."), again.stdout)
        XCTAssertTrue(again.stdout.contains("The two entries differ; try again."), again.stdout)
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("86420".utf8))!, against: XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode?.hash)))

        // Three times wrong: not set, exit 1, the stored one kept.
        let short = try session([("12", nil), ("1", nil), ("123", nil)])
        XCTAssertEqual(short.status, 1, short.stdout)
        XCTAssertTrue(short.stdout.contains("passcode not set: a PIN needs at least 4 digits"), short.stdout)
        let m = try session([("97531", "97532"), ("97531", "97532"), ("97531", "97530")])
        XCTAssertEqual(m.status, 1, m.stdout)
        XCTAssertTrue(m.stdout.contains("passcode not set: the two entries differ"), m.stdout)
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("86420".utf8))!, against: XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode?.hash)))
    }
}
