import XCTest
import TestSupport
import Foundation

/// main.swift's dispatch: commands that change the store are root's.
final class MainTests: CLIFixture {
    func testWritesNeedRoot() throws {
        for args in [["enable", user], ["passcode", "set", user, "--stdin"], ["enrol", user], ["disable", user], ["unenrol", user, "--all"]] {
            let r = try cli(args, stdin: "2468\n", asUser: 65534)
            XCTAssertEqual(r.status, 1, "\(args)")
            XCTAssertTrue(r.stderr.contains("only root may do"), r.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
    }
}
