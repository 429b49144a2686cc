import XCTest
import TestSupport
import Foundation

/// What every command goes through (Context): the account USER names, the store it opens.
final class ContextTests: CLIFixture {
    func testUnknownSystemUserIsRefused() throws {
        let r = try cli(["passcode", "set", "biounlock-no-such-user", "--stdin"], stdin: "2468\n")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("no such user"), r.stderr)
    }

    func testStoreIsCreatedRootOnly() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let dirMode = try FileManager.default.attributesOfItem(atPath: dir + "/db")[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: db)[.posixPermissions] as? Int
        XCTAssertEqual(dirMode, 0o700)
        XCTAssertEqual(fileMode, 0o600)
    }
}
