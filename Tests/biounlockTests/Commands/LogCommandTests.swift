import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore

/// `biounlock log`, and the retention that prunes what it shows.
final class LogCommandTests: CLIFixture {
    func testLogFiltersAndRetention() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        XCTAssertEqual(try cli(["passcode", "set", "bin", "--stdin"], stdin: "1357\n").status, 0)
        let store = try Store.open(path: db, mode: .authenticate)
        let now = Int64(Date().timeIntervalSince1970)
        for (i, (u, s)) in [("daemon", "sudo"), ("bin", "login"), ("daemon", "login")].enumerated() {
            try store.appendEvent(AuditEvent(time: now - Int64(3 - i) * 3600, user: u, service: s, tty: "pts/\(i)", rhost: "",
                                             method: .fingerprint, outcome: "success", reason: "finger-matched"))
        }
        try store.appendEvent(AuditEvent(time: now - 40 * 86400, user: "daemon", service: "sudo", tty: "", rhost: "",
                                         method: .passcode, outcome: "denied", reason: "wrong-passcode"))
        let all = try json(try cli(["log", "--json"]))
        let events = try XCTUnwrap(all["events"] as? [[String: Any]])
        XCTAssertEqual(events.count, 4)
        XCTAssertEqual(Set(events[0].keys), ["time", "user", "service", "tty", "rhost", "method", "outcome", "reason"], "the documented shape")
        XCTAssertEqual(try json(try cli(["log", "--json", "--user", "daemon"]))["events"].map { ($0 as? [Any])?.count }, 3)
        XCTAssertEqual(try json(try cli(["log", "--json", "--service", "login"]))["events"].map { ($0 as? [Any])?.count }, 2)
        XCTAssertEqual(try json(try cli(["log", "--json", "--since", "150m"]))["events"].map { ($0 as? [Any])?.count }, 2)
        XCTAssertEqual(try json(try cli(["log", "--json", "--since", "2026-01-01", "--limit", "1"]))["events"].map { ($0 as? [Any])?.count }, 1)
        XCTAssertEqual(try cli(["log", "--since", "yesterday"]).status, 64)
        let text = try cli(["log", "--user", "bin"])
        XCTAssertTrue(text.stdout.contains("bin  logging in (login) on pts/1  unlocked by a finger (fingerprint, success, finger-matched)"), text.stdout)

        // Retention: prune events past log_retention / log_max_events.
        store.retention = Store.Retention(maxAgeSeconds: 30 * 86400, maxEvents: 2)
        try store.pruneEvents(now: now)
        XCTAssertEqual(try store.recentEvents(limit: 100).map(\.tty), ["pts/2"],
                       "the newest 2 are kept, except the one older than 30 days")
    }
}
