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

    /// The directory 0700 and every file 0600, whatever the umask the admin's shell has: none
    /// (0), the usual (022), or one that takes every bit away (0777).
    func testStoreIsCreatedRootOnlyWhateverTheUmask() throws {
        for mask: mode_t in [0, 0o022, 0o777] {
            try? FileManager.default.removeItem(atPath: dir + "/db")
            let old = umask(mask)
            let r = try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n")
            umask(old)
            XCTAssertEqual(r.status, 0, r.stderr)
            let mode = { (path: String) in try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int }
            XCTAssertEqual(try mode(dir + "/db"), 0o700, "umask \(String(mask, radix: 8))")
            for file in [db, db + "-lock", db + "-wal", db + "-shm"] where FileManager.default.fileExists(atPath: file) {
                XCTAssertEqual(try mode(file), 0o600, "\(file), umask \(String(mask, radix: 8))")
            }
        }
    }
}
