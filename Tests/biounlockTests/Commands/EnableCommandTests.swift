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
}
