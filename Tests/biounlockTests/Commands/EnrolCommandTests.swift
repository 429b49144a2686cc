import XCTest
import TestSupport
import Foundation
import BiounlockStore

/// `biounlock enrol`.
final class EnrolCommandTests: CLIFixture {
    func testEnrolmentThatTimesOutStoresNothing() throws {
        let r = try cli(["enrol", user, "--timeout", "1"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("nothing was stored"), r.stderr)
        let status = try json(try cli(["status", user, "--json"]))
        let fingers = (status["users"] as? [[String: Any]])?.first?["fingers"] as? [Any]
        XCTAssertEqual(fingers?.count, 0)
    }

    /// Re-enrolling a finger replaces the print the user may still be using: refused (exit 1,
    /// the store unchanged, the command with --replace shown) unless --replace says so, and
    /// then said.
    func testReEnrollingAFingerNeedsReplace() throws {
        XCTAssertEqual(try enrol("daemon-first").status, 0)
        let before = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.templates)
        XCTAssertEqual(before.count, 1)
        let refused = try cli(["enrol", user, "--finger", "right-index-finger", "--timeout", "1"], stdin: "y\n")
        XCTAssertEqual(refused.status, 1, refused.stdout)
        XCTAssertTrue(refused.stderr.contains("right-index-finger is already enrolled for daemon; nothing was changed. To enrol it again, replacing its print: biounlock"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("enrol daemon --finger right-index-finger --replace"), refused.stderr)
        XCTAssertFalse(refused.stdout.contains("touch the reader"), "refused before the reader is opened: \(refused.stdout)")
        XCTAssertEqual(try Store.open(path: db, mode: .authenticate).loadUser(user)?.templates.map(\.data), before.map(\.data))

        let replaced = try enrol("daemon-second", finger: "right-index", ["--replace"])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertTrue(replaced.stdout.contains("Enrolled right-index-finger for daemon, replacing the earlier print."), replaced.stdout)
        let after = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.templates)
        XCTAssertEqual(after.count, 1)
        XCTAssertNotEqual(after.map(\.data), before.map(\.data))
        // Another finger needs no --replace.
        XCTAssertEqual(try enrol("daemon-left", finger: "left-index").status, 0)
    }

    /// On a terminal the question is asked; anything but yes keeps the finger as it is.
    func testReEnrollingOnATerminalAsks() throws {
        XCTAssertEqual(try enrol("daemon-first").status, 0)
        let script = """
            set timeout 20
            spawn \(cliPath) --db \(db) --sensor simulated --sim-socket \(socket) --config \(dir)/biounlock.conf enrol \(user) --timeout 1
            expect {
                -ex "right-index-finger is already enrolled for daemon. Enrol it again, replacing its print? \\[y/N\\] " {}
                timeout { exit 124 }
            }
            send "n\\r"
            expect {
                eof {}
                timeout { exit 124 }
            }
            catch wait result
            exit [lindex $result 3]
            """
        let r = try runProcess("/usr/bin/expect", ["-c", script])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.stdout.contains("nothing was changed"), r.stdout)
    }
}
