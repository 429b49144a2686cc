import XCTest
import TestSupport
import Foundation

/// `biounlock list`.
final class ListCommandTests: CLIFixture {
    func testListShowsEveryUserWithARow() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        XCTAssertEqual(try cli(["passcode", "set", "bin", "--stdin"], stdin: "1357\n").status, 0)
        let list = try cli(["list"])
        XCTAssertEqual(list.status, 0)
        XCTAssertTrue(list.stdout.contains("daemon: off · 0 fingers · passcode: PIN"), list.stdout)
        XCTAssertTrue(list.stdout.contains("bin: off"), list.stdout)
        let listJSON = try json(try cli(["list", "--json"]))
        XCTAssertEqual((listJSON["users"] as? [[String: Any]])?.compactMap { $0["user"] as? String }, ["bin", "daemon"])
    }
}
