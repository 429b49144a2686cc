import XCTest
import TestSupport
import Foundation

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
}
