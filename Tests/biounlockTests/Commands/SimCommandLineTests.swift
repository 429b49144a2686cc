import XCTest
import TestSupport
import Foundation

/// `biounlock sim`.
final class SimCommandLineTests: CLIFixture {
    func testSimWithNoSensorFailsQuickly() throws {
        let r = try cli(["sim", "scan", "x", "--wait", "0"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("no simulated sensor listening"), r.stderr)
        XCTAssertEqual(try cli(["sim", "retry", "abc"]).status, 64)
    }
}
