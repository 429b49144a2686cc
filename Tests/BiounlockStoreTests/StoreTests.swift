import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
@testable import BiounlockStore
import CSQLite

final class StoreTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/store/biounlock.db" }

    override func setUpWithError() throws {
        dir = try makeTrustedTemporaryDirectory()
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// A store as a biounlock of schema `version` left it (its migrations only), with `rows`,
    /// next to the test's store (in the trusted directory).
    func storeAtSchema(_ version: Int, rows: String) throws -> String {
        _ = try Store.open(path: path, mode: .administer) // the trusted directory
        let old = dir + "/store/v\(version).db"
        do {
            let c = try Connection(path: old, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            try c.execute("PRAGMA journal_mode = WAL")
            for m in Schema.migrations.prefix(version) { try c.execute(m.sql) }
            try c.execute("PRAGMA user_version = \(version)")
            try c.execute(rows)
        }
        chmod(old, 0o600)
        return old
    }

    func mode(_ p: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? Int) ?? -1
    }

    func testAdministerCreatesDirectory0700AndFile0600WhateverTheUmask() throws {
        let old = umask(0)
        defer { umask(old) }
        let store = try Store.open(path: path, mode: .administer)
        try store.setEnabled(true, user: "alice", service: nil, at: 1)
        XCTAssertEqual(try mode(dir + "/store"), 0o700)
        XCTAssertEqual(try mode(path), 0o600)
        for side in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + side) {
            XCTAssertEqual(try mode(path + side) & 0o077, 0, side)
        }
        XCTAssertEqual(try store.schemaVersion(), Schema.currentVersion)
    }

    /// allUsers (list, status) reads every user in one transaction: a write another connection
    /// commits meanwhile shows in all of them or in none; reads inside it join it.
    func testAllUsersIsOneSnapshot() throws {
        let reader = try Store.open(path: path, mode: .administer)
        let writer = try Store.open(path: path, mode: .administer)
        for user in ["alice", "bob"] { try writer.setEnabled(true, user: user, service: nil, at: 1) }
        let (alice, bob, listed) = try reader.reading { () throws(StoreFailure) -> (UserRecord?, UserRecord?, [UserRecord]) in
            let alice = try reader.loadUser("alice")
            try writer.setEnabled(false, user: "bob", service: nil, at: 2) // committed by another connection
            try writer.setEnabled(true, user: "carol", service: nil, at: 2)
            return (alice, try reader.loadUser("bob"), try reader.allUsers())
        }
        XCTAssertEqual(alice?.enabled, true)
        XCTAssertEqual(bob?.enabled, true, "the snapshot the first read took")
        XCTAssertEqual(listed.map(\.name), ["alice", "bob"], "no carol: allUsers joined the snapshot")
        XCTAssertEqual(try reader.allUsers().map { "\($0.name)=\($0.enabled)" }, ["alice=true", "bob=false", "carol=true"],
                       "a new snapshot sees both writes")
    }

    func testTheModuleNeverCreatesAStore() {
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate)) { error in
            XCTAssertTrue("\(error)".contains("does not exist"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/store"))
    }

    func testTheModuleRefusesUnsafeFiles() throws {
        _ = try Store.open(path: path, mode: .administer)
        chmod(path, 0o666)
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate)) { XCTAssertTrue("\($0)".contains("writable by group or others"), "\($0)") }
        chmod(path, 0o600)
        chmod(dir + "/store", 0o777)
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate))
        chmod(dir + "/store", 0o700)
        let link = dir + "/store/link.db"
        symlink(path, link)
        XCTAssertThrowsError(try Store.open(path: link, mode: .authenticate)) { XCTAssertTrue("\($0)".contains("symbolic link"), "\($0)") }
        chown(path, 65534, 65534)
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate)) { XCTAssertTrue("\($0)".contains("not root"), "\($0)") }
        chown(path, 0, 0)
        XCTAssertNoThrow(try Store.open(path: path, mode: .authenticate))
    }

    func testTheModulesConnectionLeavesItsWritesInTheWALUntilItIsLong() throws {
        do {
            let admin = try Store.open(path: path, mode: .administer)
            try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        }
        var sizes: [Int64] = []
        var frames: [Int] = []
        for round in 1...60 {
            do {
                let store = try Store.open(path: path, mode: .authenticate)
                XCTAssertEqual(try store.loadUser("alice")?.enabled, true)
                try store.appendEvent(AuditEvent(time: Int64(round), user: "alice", service: "sudo", tty: "", rhost: "",
                                                 method: .fingerprint, outcome: "success", reason: "finger-matched"))
                frames.append(store.connection.framesInWAL ?? -1)
            }
            // Closed: neither file was deleted, so the next sudo creates none; both keep the
            // store's owner and mode, so the module trusts them.
            for side in ["-wal", "-shm"] {
                XCTAssertTrue(FileManager.default.fileExists(atPath: path + side), side)
                XCTAssertEqual(try mode(path + side) & 0o077, 0, side)
            }
            XCTAssertNil(Store.trustProblem(path: path))
            sizes.append(Int64(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? -1))
        }
        // No checkpoint at close: each connection's writes stay in the WAL (each connection
        // rebuilds the WAL index from the frames there and adds its own)...
        let own = frames[0]
        XCTAssertGreaterThan(own, 0, "\(frames)")
        XCTAssertEqual(frames[1], 2 * own, "\(frames)")
        // ...until it holds more than longWALFrames: the connection that then closes checkpoints
        // it into the store and starts it again (one frame), so no reader ever replays more than
        // that and one connection's frames -- the next connection finds only those.
        let restarts = frames.indices.filter { $0 > 0 && frames[$0] < frames[$0 - 1] }
        XCTAssertGreaterThanOrEqual(restarts.count, 2, "\(frames)")
        for i in restarts {
            XCTAssertGreaterThan(frames[i - 1], Store.longWALFrames, "\(frames)")
            XCTAssertEqual(frames[i], 1 + own, "\(frames)")
        }
        XCTAssertLessThanOrEqual(frames.max() ?? 0, Store.longWALFrames + own, "\(frames)")
        // The file keeps its length once it has had it (a WAL started again is overwritten from
        // its start): a count's fdatasync then writes in place.
        for i in sizes.indices.dropFirst() { XCTAssertGreaterThanOrEqual(sizes[i], sizes[i - 1], "\(sizes)") }
        XCTAssertLessThanOrEqual(sizes.max() ?? 0, Int64(32 + (Store.longWALFrames + own) * (4096 + 24)), "\(sizes)")
        // Every row is there, whether in the WAL or checkpointed into the store.
        XCTAssertEqual(try Store.open(path: path, mode: .administer).recentEvents(limit: 100).map(\.time), (1...60).reversed().map(Int64.init))
    }

    func testTheModulesConnectionIsMadeReadyToWriteAtItsFirstWrite() throws {
        func pragma(_ store: Store, _ name: String) throws -> Int64? {
            let stmt = try store.connection.prepare("PRAGMA \(name)")
            guard try stmt.step() else { return nil }
            return Row(handle: stmt.handle).int(0)
        }
        do {
            let admin = try Store.open(path: path, mode: .administer)
            XCTAssertEqual(try pragma(admin, "foreign_keys"), 1)
            XCTAssertEqual(try pragma(admin, "synchronous"), 1, "NORMAL")
            try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        }
        let store = try Store.open(path: path, mode: .authenticate)
        XCTAssertEqual(try store.loadUser("alice")?.enabled, true)
        // A sudo that only reads (a user without biometric unlock) runs none of the write set-up...
        XCTAssertEqual(try pragma(store, "foreign_keys"), 0)
        XCTAssertNotEqual(try pragma(store, "synchronous"), 1)
        // ...and the first write has all of it before it begins.
        try store.appendEvent(AuditEvent(time: 2, user: "alice", service: "sudo", tty: "", rhost: "",
                                         method: .fingerprint, outcome: "success", reason: "finger-matched"))
        XCTAssertEqual(try pragma(store, "foreign_keys"), 1)
        XCTAssertEqual(try pragma(store, "synchronous"), 1, "NORMAL")
        XCTAssertEqual(try pragma(store, "journal_size_limit"), Int64(Store.walSizeLimit))
    }

    /// SQLite's process-wide settings are made before the first open, or refused (a process that
    /// used SQLite first keeps its defaults); made, SQLite keeps no memory statistics.
    func testSQLiteIsConfiguredBeforeTheFirstOpen() throws {
        let store = try Store.open(path: path, mode: .administer)
        try store.setEnabled(true, user: "alice", service: nil, at: 1)
        XCTAssertTrue([SQLITE_OK, SQLITE_MISUSE].contains(Connection.configured), "\(Connection.configured)")
        var current: Int64 = -1, highest: Int64 = -1
        XCTAssertEqual(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0), SQLITE_OK)
        if Connection.configured == SQLITE_OK {
            XCTAssertEqual(current, 0, "no memory statistics")
        } else {
            XCTAssertGreaterThan(current, 0, "SQLite's defaults: statistics kept")
        }
    }

    func testWritesInOneTransactionCommitTogether() throws {
        let admin = try Store.open(path: path, mode: .administer)
        try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        _ = try admin.recordPasscodeFailure(user: "alice", at: 2)
        let store = try Store.open(path: path, mode: .authenticate)
        var seenInside: (Int?, Int)?
        try store.inOneTransaction {
            try? store.recordSuccess(user: "alice", method: .passcode, at: 3, bootID: "b")
            try? store.appendEvent(AuditEvent(time: 3, user: "alice", service: "sudo", tty: "", rhost: "",
                                              method: .passcode, outcome: "success", reason: "passcode-accepted"))
            // Another connection does not see either write before the commit.
            seenInside = (try? admin.loadUser("alice")?.passcodeFailures, (try? admin.recentEvents().count) ?? -1)
        }
        XCTAssertEqual(seenInside?.0, 1)
        XCTAssertEqual(seenInside?.1, 0)
        XCTAssertEqual(try admin.loadUser("alice")?.passcodeFailures, 0)
        XCTAssertEqual(try admin.recentEvents().map(\.reason), ["passcode-accepted"])
    }

    func testWritesInOneTransactionAreDroppedWhenTheLockDoesNotCome() throws {
        let admin = try Store.open(path: path, mode: .administer)
        try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        let store = try Store.open(path: path, mode: .authenticate)
        try admin.connection.execute("BEGIN IMMEDIATE") // another writer holds the lock throughout
        var ran = false
        XCTAssertThrowsError(try store.inOneTransaction { ran = true }) { XCTAssertTrue("\($0)".contains("locked"), "\($0)") }
        XCTAssertFalse(ran, "no write waits out the timeout a second time: the writes are not even tried")
        try admin.connection.execute("ROLLBACK")
    }

    /// Issue 31: a service group is written as its overrides in one transaction; the main switch
    /// sets the toggle and clears every override in one.
    func testAGroupAndEverywhereAreOneTransactionEach() throws {
        let admin = try Store.open(path: path, mode: .administer)
        try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        try admin.setEnabled(true, user: "alice", service: "sudo", at: 1)
        let login = ServiceGroup.login.services
        // Another connection sees none of the group before the commit, all of it after.
        var seenInside: [String: Bool]?
        try admin.inOneTransaction {
            try? admin.setEnabled(false, user: "alice", services: login, at: 2)
            let other = try? Store.open(path: path, mode: .authenticate)
            seenInside = try? other?.loadUser("alice")?.serviceOverrides
        }
        XCTAssertEqual(seenInside, ["sudo": true])
        let module = try Store.open(path: path, mode: .authenticate)
        var r = try XCTUnwrap(module.loadUser("alice"))
        XCTAssertEqual(r.serviceOverrides.count, login.count + 1)
        for s in login { XCTAssertFalse(r.isEnabled(for: s), s) }
        XCTAssertTrue(r.isEnabled(for: "sudo")); XCTAssertTrue(r.isEnabled(for: "polkit-1"))
        XCTAssertEqual(ServiceGroup.login.state(of: r), .off)
        XCTAssertEqual(ServiceGroup.sudo.state(of: r), .on)

        // A group that fails half-way leaves nothing behind: the same transaction.
        try admin.connection.execute("CREATE TRIGGER refuse_kde BEFORE INSERT ON service_overrides WHEN NEW.service = 'kde' BEGIN SELECT RAISE(ABORT, 'no'); END")
        XCTAssertThrowsError(try admin.setEnabled(true, user: "alice", services: ServiceGroup.login.services, at: 3))
        r = try XCTUnwrap(module.loadUser("alice"))
        for s in login { XCTAssertFalse(r.isEnabled(for: s), "\(s): nothing of the failed group") }
        try admin.connection.execute("DROP TRIGGER refuse_kde")

        try admin.setEnabledEverywhere(false, user: "alice", at: 4)
        r = try XCTUnwrap(module.loadUser("alice"))
        XCTAssertEqual(r.serviceOverrides, [:])
        XCTAssertFalse(r.isEnabledForAnyService)
        try admin.setEnabledEverywhere(true, user: "alice", at: 5)
        r = try XCTUnwrap(module.loadUser("alice"))
        XCTAssertTrue(r.enabled); XCTAssertEqual(r.serviceOverrides, [:])
    }

    func testGarbageAndNewerSchemasAreRefused() throws {
        _ = try Store.open(path: path, mode: .administer)
        let store = try Store.open(path: path, mode: .administer)
        try store.connection.execute("PRAGMA user_version = 99")
        // The module's connection checks the version in its first transaction, read or write,
        // and reads or writes nothing in a store of another version.
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate).loadUser("alice")) { XCTAssertTrue("\($0)".contains("newer"), "\($0)") }
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate).templates(user: "alice")) { XCTAssertTrue("\($0)".contains("newer"), "\($0)") }
        let module = try Store.open(path: path, mode: .authenticate)
        XCTAssertThrowsError(try module.appendEvent(AuditEvent(time: 1, user: "alice", service: "sudo", tty: "", rhost: "",
                                                               method: .passcode, outcome: "success", reason: "passcode-accepted"))) {
            XCTAssertTrue("\($0)".contains("newer"), "\($0)")
        }
        XCTAssertThrowsError(try module.loadUser("alice"), "still refused after a failed write")
        XCTAssertEqual(try store.recentEvents().count, 0, "nothing written")
        // Once refused, a write does not even take the write lock: another writer holding it
        // does not make the refusal wait.
        try store.connection.execute("BEGIN IMMEDIATE")
        XCTAssertThrowsError(try module.recordLastFailure(user: "alice", at: 2)) { XCTAssertTrue("\($0)".contains("newer"), "\($0)") }
        try store.connection.execute("ROLLBACK")
        XCTAssertThrowsError(try Store.open(path: path, mode: .administer))

        let garbage = dir + "/store/garbage.db"
        _ = FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0x41, count: 4096), attributes: [.posixPermissions: 0o600])
        XCTAssertThrowsError(try Store.open(path: garbage, mode: .authenticate).loadUser("alice"))
    }

    func testANegativeSchemaVersionIsRefusedWithoutATrap() throws {
        let store = try Store.open(path: path, mode: .administer)
        try store.connection.execute("PRAGMA user_version = -3")
        XCTAssertThrowsError(try Store.open(path: path, mode: .administer)) { XCTAssertTrue("\($0)".contains("which no biounlock writes"), "\($0)") }
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate).loadUser("alice"))
    }

    func testOlderSchemaIsMigratedByTheCLIOnlyAndKeepsData() throws {
        _ = try Store.open(path: path, mode: .administer) // creates the trusted directory
        let empty = dir + "/store/old.db"
        _ = FileManager.default.createFile(atPath: empty, contents: nil, attributes: [.posixPermissions: 0o600])
        XCTAssertThrowsError(try Store.open(path: empty, mode: .authenticate).loadUser("alice")) { XCTAssertTrue("\($0)".contains("older"), "\($0)") }
        let store = try Store.open(path: empty, mode: .administer)
        try store.setEnabled(true, user: "alice", service: nil, at: 5)
        let again = try Store.open(path: empty, mode: .administer)
        XCTAssertEqual(try again.loadUser("alice")?.enabled, true)
    }

    /// Schema 3 binds each row to an account: the migration fills the uid each name has at that
    /// moment (a name that is no account stays unbound), and rows made later are bound as made.
    func testTheMigrationBindsExistingRowsToTheirAccounts() throws {
        let old = try storeAtSchema(2, rows: "INSERT INTO users(name, enabled, passcode_hash, passcode_kind) VALUES ('alice', 1, 'h', 'pin'), ('ghost', 1, 'h', 'pin')")
        let accounts = ["alice": Account(name: "alice", uid: 1001), "carol": Account(name: "carol", uid: 1003)]
        let store = try Store.open(path: old, mode: .administer) { accounts[$0] }
        XCTAssertEqual(try store.schemaVersion(), Schema.currentVersion)
        XCTAssertEqual(try store.loadUser("alice")?.uid, 1001)
        XCTAssertEqual(try store.loadUser("alice")?.enabled, true, "data kept")
        XCTAssertNil(try store.loadUser("ghost")?.uid, "no account has the name: bound to none")
        try store.setEnabled(true, user: "carol", service: nil, at: 1)
        XCTAssertEqual(try store.loadUser("carol")?.uid, 1003, "a new row is bound to the account it is made for")
        try store.connection.execute("UPDATE users SET uid = -5 WHERE name = 'carol'")
        XCTAssertNil(try store.loadUser("carol")?.uid, "a value that is no uid binds to nothing")
        XCTAssertTrue(try store.forget(user: "alice"))
        XCTAssertNil(try store.loadUser("alice"))
        XCTAssertFalse(try store.forget(user: "alice"))
    }

    func testUserRoundTrip() throws {
        let store = try Store.open(path: path, mode: .administer)
        XCTAssertNil(try store.loadUser("alice"))
        try store.setEnabled(true, user: "alice", service: nil, at: 10)
        try store.setEnabled(false, user: "alice", service: "sudo", at: 10)
        try store.setPasscode(StoredPasscode(hash: "$argon2id$fake", kind: .pin), user: "alice", at: 10)
        let t1 = Template(finger: .rightIndex, sensor: .simulated, data: Array("a".utf8), created: 11)
        try store.saveTemplate(t1, user: "alice")
        var t2 = t1; t2.data = Array("b".utf8); t2.created = 12
        try store.saveTemplate(t2, user: "alice")
        try store.saveTemplate(Template(finger: .leftThumb, sensor: .libfprint, data: [0x46, 0x50, 0x33, 1], driver: "virtual_device", device: "0", created: 13), user: "alice")

        let module = try Store.open(path: path, mode: .authenticate)
        let r = try XCTUnwrap(module.loadUser("alice"))
        XCTAssertTrue(r.enabled)
        XCTAssertEqual(r.serviceOverrides, ["sudo": false])
        XCTAssertFalse(r.isEnabled(for: "sudo")); XCTAssertTrue(r.isEnabled(for: "login"))
        XCTAssertEqual(r.passcode, StoredPasscode(hash: "$argon2id$fake", kind: .pin))
        XCTAssertEqual(r.templates.count, 2, "re-enrolling a finger replaces it")
        XCTAssertEqual(r.templates[0].data, Array("b".utf8))
        XCTAssertEqual(r.templates[1].driver, "virtual_device")

        XCTAssertEqual(try store.deleteTemplates(user: "alice", finger: .rightIndex), 1)
        try store.setPasscode(nil, user: "alice", at: 14)
        XCTAssertNil(try module.loadUser("alice")?.passcode)
        XCTAssertEqual(try store.userNames(), ["alice"])
    }

    func testCorruptTemplateRowsAreSkipped() throws {
        let store = try Store.open(path: path, mode: .administer)
        try store.setEnabled(true, user: "alice", service: nil, at: 1)
        try store.connection.execute("""
            INSERT INTO templates(user, finger, sensor, data, created) VALUES
              ('alice', 'nose', 'simulated', x'41', 1),
              ('alice', 'right-index-finger', 'teleport', x'41', 1),
              ('alice', 'left-thumb', 'simulated', x'', 1)
            """)
        XCTAssertEqual(try store.loadUser("alice")?.templates, [])
    }

    func testCountersAndSuccess() throws {
        let store = try Store.open(path: path, mode: .administer)
        _ = try store.recordBiometricFailure(user: "alice", at: 1)
        _ = try store.recordBiometricFailure(user: "alice", at: 2)
        _ = try store.recordPasscodeFailure(user: "alice", at: 3)
        var r = try XCTUnwrap(store.loadUser("alice"))
        XCTAssertEqual([r.biometricFailures, r.passcodeFailures], [2, 1])
        XCTAssertFalse(r.enabled, "a counter row does not enable anything")
        XCTAssertEqual(r.lastFailure, 3)
        try store.recordSuccess(user: "alice", method: .fingerprint, at: 4, bootID: "b")
        r = try XCTUnwrap(store.loadUser("alice"))
        XCTAssertEqual([r.biometricFailures, r.passcodeFailures], [0, 1])
        try store.recordSuccess(user: "alice", method: .passcode, at: 5, bootID: "b")
        r = try XCTUnwrap(store.loadUser("alice"))
        XCTAssertEqual([r.biometricFailures, r.passcodeFailures], [0, 0])
        XCTAssertEqual(r.lastSuccess, 5)
    }

    func testConcurrentFailuresAreCountedExactlyAcrossConnections() throws {
        _ = try Store.open(path: path, mode: .administer)
        let workers = 50, each = 1 // 50 first-ever failures at once, on a row that does not exist yet
        let errors = Locked(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            do {
                let s = try Store.open(path: path, mode: .authenticate)
                for i in 0..<each { _ = try s.recordBiometricFailure(user: "newuser", at: Int64(i)) }
            } catch { errors.mutate { $0 += 1 } }
        }
        XCTAssertEqual(errors.value, 0)
        XCTAssertEqual(try Store.open(path: path, mode: .authenticate).loadUser("newuser")?.biometricFailures, workers * each)
    }

    func testAuditEvents() throws {
        let store = try Store.open(path: path, mode: .administer)
        for (i, user) in ["alice", "bob", "alice"].enumerated() {
            try store.appendEvent(AuditEvent(time: Int64(i), user: user, service: "sudo", tty: "pts/0", rhost: "",
                                             method: .fingerprint, outcome: "success", reason: "finger-matched"))
        }
        XCTAssertEqual(try store.recentEvents().map(\.time), [2, 1, 0])
        XCTAssertEqual(try store.recentEvents(user: "alice").map(\.time), [2, 0])
        XCTAssertEqual(try store.recentEvents(limit: 1).count, 1)
    }

    /// Schema 4 drops the audit log's indexes (no query used them; every row wrote them): a
    /// store made at schema 3 keeps its events, loses the two indexes, and the log still reads.
    func testSchema4DropsTheAuditIndexesAndKeepsTheEvents() throws {
        let old = try storeAtSchema(3, rows: """
            INSERT INTO events(time, user, service, tty, rhost, method, outcome, reason)
            VALUES (1, 'alice', 'sudo', '', '', 'passcode', 'success', 'passcode-accepted'),
                   (2, 'bob', 'login', '', '', 'fingerprint', 'denied', 'finger-mismatch')
            """)
        func indexes(_ store: Store) throws -> [String] {
            try store.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name").rows { $0.text(0) }
        }
        let before = try Connection(path: old, flags: SQLITE_OPEN_READONLY)
        XCTAssertEqual(try before.prepare("SELECT count(*) FROM sqlite_master WHERE name LIKE 'events_by_%'").rows { $0.int(0) }, [2])
        let store = try Store.open(path: old, mode: .administer)
        XCTAssertEqual(try store.schemaVersion(), Schema.currentVersion)
        XCTAssertEqual(try indexes(store), [])
        XCTAssertEqual(try store.recentEvents().map(\.user), ["bob", "alice"])
        XCTAssertEqual(try store.recentEvents(user: "alice").map(\.time), [1])
    }

    /// Schema 6: the boot in which the Unix password last proved the user (login_services, issue
    /// 32). Existing rows start with none; a password success records it besides the passcode's
    /// columns, a passcode success does not touch it.
    func testSchema6KeepsTheBootOfTheLastUnixPassword() throws {
        let old = try storeAtSchema(5, rows: "INSERT INTO users(name, enabled, uid) VALUES ('alice', 1, 1000)")
        let store = try Store.open(path: old, mode: .administer)
        XCTAssertEqual(try store.schemaVersion(), Schema.currentVersion)
        XCTAssertNil(try XCTUnwrap(try store.loadUser("alice")).passwordBootID)
        try store.recordSuccess(user: "alice", method: .password, at: 10, bootID: "boot-1")
        var alice = try XCTUnwrap(try store.loadUser("alice"))
        XCTAssertEqual(alice.passwordBootID, "boot-1")
        XCTAssertEqual(alice.passcodeBootID, "boot-1", "the password satisfies the passcode rules too")
        try store.recordSuccess(user: "alice", method: .passcode, at: 20, bootID: "boot-2")
        alice = try XCTUnwrap(try store.loadUser("alice"))
        XCTAssertEqual(alice.passwordBootID, "boot-1", "the passcode is not the Unix password")
        XCTAssertEqual(alice.passcodeBootID, "boot-2")
    }

    /// Schema 5: the prints fprintd held when biounlock last looked (FprintdPrints). Existing rows
    /// start with none recorded, which the module counts as a change; enable records the first
    /// set without one, a different set is one, and enrol/unenrol record the set they leave.
    func testSchema5KeepsTheFprintdPrintsBiounlockLastSaw() throws {
        let old = try storeAtSchema(4, rows: "INSERT INTO users(name, enabled, uid) VALUES ('alice', 1, 1000)")
        let store = try Store.open(path: old, mode: .administer)
        XCTAssertEqual(try store.schemaVersion(), Schema.currentVersion)
        var alice = try XCTUnwrap(try store.loadUser("alice"))
        XCTAssertNil(alice.fprintdPrints)
        XCTAssertEqual(alice.enrolmentVersion, 0)

        try store.recordFirstFprintdPrints(user: "alice", prints: "0:right-thumb")
        try store.recordFirstFprintdPrints(user: "alice", prints: "0:left-thumb") // a set is there: not the first
        alice = try XCTUnwrap(try store.loadUser("alice"))
        XCTAssertEqual(alice.fprintdPrints, "0:right-thumb")
        XCTAssertEqual(alice.enrolmentVersion, 0, "the first set is no change")

        try store.noteFprintdPrints(user: "alice", prints: "0:left-thumb,0:right-thumb")
        alice = try XCTUnwrap(try store.loadUser("alice"))
        XCTAssertEqual(alice.fprintdPrints, "0:left-thumb,0:right-thumb")
        XCTAssertEqual(alice.enrolmentVersion, 1)

        try store.noteEnrolmentChange(user: "alice", at: 5, fprintdPrints: "0:left-thumb")
        XCTAssertEqual(try store.loadUser("alice").map { "\($0.fprintdPrints ?? "nil") v\($0.enrolmentVersion)" }, "0:left-thumb v2")
        try store.noteEnrolmentChange(user: "alice", at: 6, fprintdPrints: nil) // fprintd could not be listed afterwards
        XCTAssertEqual(try store.loadUser("alice").map { "\($0.fprintdPrints ?? "nil") v\($0.enrolmentVersion)" }, "nil v3")
        try store.noteEnrolmentChange(user: "bob", at: 7, fprintdPrints: "1:right-index-finger") // no row yet
        XCTAssertEqual(try store.loadUser("bob").map { "\($0.fprintdPrints ?? "nil") v\($0.enrolmentVersion)" }, "1:right-index-finger v1")
    }

    /// Pruning looks at the oldest `batch` rows only, so its work is bounded whatever the size of
    /// the log: among them it removes those past the age or count bound; an old-dated row behind
    /// them waits for a later pass.
    func testPruningRemovesExpiredRowsAmongTheOldestBatch() throws {
        let store = try Store.open(path: path, mode: .administer)
        store.retention = Store.Retention(maxAgeSeconds: 100, maxEvents: 1000)
        // Times as written: the fifth row was written while the clock was set back.
        for (i, time) in [Int64(10), 20, 500, 600, 30, 700].enumerated() {
            try store.appendEvent(AuditEvent(time: time, user: "u\(i)", service: "sudo", tty: "", rhost: "",
                                             method: .passcode, outcome: "success", reason: "passcode-accepted"))
        }
        try store.pruneEvents(now: 550, batch: 3)
        XCTAssertEqual(try store.recentEvents(limit: 10).map(\.user), ["u5", "u4", "u3", "u2"],
                       "the two expired rows among the oldest three go; the set-back one beyond them stays")
        try store.pruneEvents(now: 550, batch: 3)
        XCTAssertEqual(try store.recentEvents(limit: 10).map(\.user), ["u5", "u3", "u2"], "the next pass reaches it")
        // The count bound, by id: ids 5 and 6 are the newest two; id 5 is already gone.
        store.retention = Store.Retention(maxAgeSeconds: 100_000, maxEvents: 2)
        try store.pruneEvents(now: 550, batch: 3)
        XCTAssertEqual(try store.recentEvents(limit: 10).map(\.user), ["u5"])
    }
}
