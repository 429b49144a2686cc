import XCTest
import TestSupport
import Foundation
import BiounlockStore

/// `biounlock migrate`.
final class MigrateCommandTests: CLIFixture {
    /// `migrate` (run by the package on upgrade): a store of the previous schema gets this one's,
    /// with everything in it kept; no store, nothing done (and none created).
    func testMigrateBringsAnOlderStoreToThisSchemaAndKeepsItsRows() throws {
        let none = try cli(["migrate"])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.stdout.contains("nothing to migrate"), none.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: db), "migrate never creates a store")

        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        // The same store as 0.1.0 wrote it: schema 2, no uid column.
        let downgrade = try runProcess("/usr/bin/sqlite3", [db, "ALTER TABLE users DROP COLUMN uid; ALTER TABLE users DROP COLUMN fprintd_prints; ALTER TABLE users DROP COLUMN password_boot_id; PRAGMA user_version = 2;"])
        XCTAssertEqual(downgrade.status, 0, downgrade.stderr)
        let migrated = try cli(["migrate"])
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(migrated.stdout.contains("schema version \(Store.currentSchemaVersion)"), migrated.stdout)
        let record = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user))
        XCTAssertEqual(record.passcode?.kind, .pin, "the passcode kept")
        XCTAssertEqual(record.uid, getpwnam(user).map { $0.pointee.pw_uid }, "bound to its account")
    }
}
