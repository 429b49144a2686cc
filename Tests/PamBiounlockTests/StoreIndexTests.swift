import XCTest
import Foundation
import TestSupport
import BiounlockCore

/// SQLite's WAL index kept from one transaction to the next (BiounlockStore/WALIndex.swift), as
/// sudo meets it: each transaction its own process through libpam, the store as the module and
/// the admin's tools leave it.
final class StoreIndexTests: ModuleTestCase {

    override func prepare() throws {
        try fixture.service("touch_first=0") // the PIN at once: no wait for a finger
        fixture.closeStore() // nobody else has the store open, as in production
    }

    var indexPath: String { fixture.storePath + "-shm" }

    /// One transaction with the PIN, under strace: what it did to the -shm file.
    func tracedTransaction(_ user: String = ModuleFixture.enrolledUser) throws -> (code: String, rebuilt: Bool, held: Bool, messages: [String]) {
        let trace = fixture.dir + "/strace.out"
        let t = try fixture.authenticate(user, answers: [ModuleFixture.pin],
                                         wrapper: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=ftruncate,fcntl", "-o", trace])
        let calls = try String(contentsOfFile: trace, encoding: .utf8)
        // SQLite's first connection truncates the -shm file to 3 bytes before it builds the index
        // (no other file of the store is ever cut to 3 bytes).
        let rebuilt = calls.range(of: #"ftruncate\([0-9]+, 3\) += 0"#, options: .regularExpression) != nil
        let held = calls.contains("F_OFD_SETLK, {l_type=F_RDLCK, l_whence=SEEK_SET, l_start=128, l_len=1}) = 0")
        return (t.code, rebuilt, held, t.messages)
    }

    func setMark(_ value: String) throws {
        let r = try runProcess("/usr/bin/python3", ["-c", "import os, sys; os.setxattr(sys.argv[1], 'user.biounlock.boot', sys.argv[2].encode())",
                                                    indexPath, value])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testTheNextTransactionUsesTheIndexTheLastOneLeft() throws {
        let first = try tracedTransaction()
        XCTAssertEqual(first.code, "PAM_SUCCESS")
        XCTAssertTrue(first.rebuilt, "no mark in this boot yet: SQLite builds the index")
        XCTAssertFalse(first.held)
        for _ in 0..<3 {
            let next = try tracedTransaction()
            XCTAssertEqual(next.code, "PAM_SUCCESS")
            XCTAssertTrue(next.held)
            XCTAssertFalse(next.rebuilt, "the index was used as it was")
        }
    }

    /// The sqlite3 tool in EXCLUSIVE locking mode writes without the index (and, the last
    /// connection, checkpoints and removes the WAL): the next transaction must see the change.
    func testAChangeMadeAroundTheIndexIsSeen() throws {
        _ = try tracedTransaction()
        XCTAssertTrue(try tracedTransaction().held)
        let r = try runProcess("/usr/bin/sqlite3", [fixture.storePath, "PRAGMA locking_mode = EXCLUSIVE; UPDATE users SET enabled = 0;"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let off = try tracedTransaction()
        XCTAssertEqual(off.code, "PAM_TRY_AGAIN", "not enabled any more: the module stepped aside")
        XCTAssertEqual(off.messages, [], "and asked nothing")
        XCTAssertFalse(off.held)
        XCTAssertTrue(off.rebuilt)
    }

    /// A store another tool switched to a rollback journal has no index to keep: the module's
    /// check must leave no lock behind that would stand in the way of its own writes (a
    /// rollback journal's writer takes the store's EXCLUSIVE lock).
    func testAStoreWithARollbackJournalIsWrittenAsBefore() throws {
        _ = try tracedTransaction()
        let r = try runProcess("/usr/bin/sqlite3", [fixture.storePath, "PRAGMA journal_mode = DELETE"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try fixture.authenticate(answers: ["1357"]).code, "PAM_AUTHINFO_UNAVAIL", "a wrong PIN, handed on")
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.passcodeFailures, 1, "counted")
        fixture.closeStore()
        XCTAssertEqual(try fixture.authenticate(answers: [ModuleFixture.pin]).code, "PAM_SUCCESS", "counted and checked")
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.passcodeFailures, 0, "the right PIN cleared the count")
        XCTAssertEqual(try fixture.store.recentEvents().map(\.reason).prefix(2), ["passcode-accepted", "wrong-passcode"])
    }

    /// An index marked in another boot -- a -shm file left on disk by a power cut -- is built
    /// again, then marked with this boot's id.
    func testAnIndexFromAnotherBootIsBuiltAgain() throws {
        _ = try tracedTransaction()
        try setMark("00000000-0000-0000-0000-000000000000")
        let after = try tracedTransaction()
        XCTAssertEqual(after.code, "PAM_SUCCESS")
        XCTAssertTrue(after.rebuilt)
        XCTAssertFalse(after.held)
        XCTAssertTrue(try tracedTransaction().held, "marked again")
    }
}
