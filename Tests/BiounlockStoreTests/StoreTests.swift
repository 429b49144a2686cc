import XCTest
import TestSupport
import Foundation
import BiounlockCore
@testable import BiounlockStore

final class StoreTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/store/biounlock.db" }

    override func setUpWithError() throws {
        dir = try makeTrustedTemporaryDirectory()
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
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

    func testTheModulesConnectionKeepsItsJournalFilesEmptyAndTrusted() throws {
        do {
            let admin = try Store.open(path: path, mode: .administer)
            try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        }
        for round in 1...2 {
            do {
                let store = try Store.open(path: path, mode: .authenticate)
                XCTAssertEqual(try store.loadUser("alice")?.enabled, true)
                try store.appendEvent(AuditEvent(time: Int64(round), user: "alice", service: "sudo", tty: "", rhost: "",
                                                 method: .fingerprint, outcome: "success", reason: "finger-matched"))
            }
            // Closed: the WAL was checkpointed and emptied, but neither file was deleted, so the
            // next sudo creates none; both keep the store's owner and mode, so the module trusts them.
            for side in ["-wal", "-shm"] {
                XCTAssertTrue(FileManager.default.fileExists(atPath: path + side), side)
                XCTAssertEqual(try mode(path + side) & 0o077, 0, side)
            }
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int, 0)
            XCTAssertNil(Store.trustProblem(path: path))
        }
        XCTAssertEqual(try Store.open(path: path, mode: .administer).recentEvents().map(\.time), [2, 1])
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
        let start = SystemClock().now()
        XCTAssertThrowsError(try store.inOneTransaction { ran = true }) { XCTAssertTrue("\($0)".contains("locked"), "\($0)") }
        XCTAssertFalse(ran, "no write waits out the timeout a second time")
        XCTAssertLessThanOrEqual(SystemClock().now() - start, 4, "one busy timeout, not one per write")
        try admin.connection.execute("ROLLBACK")
    }

    func testGarbageAndNewerSchemasAreRefused() throws {
        _ = try Store.open(path: path, mode: .administer)
        let store = try Store.open(path: path, mode: .administer)
        try store.connection.execute("PRAGMA user_version = 99")
        XCTAssertThrowsError(try Store.open(path: path, mode: .authenticate)) { XCTAssertTrue("\($0)".contains("newer"), "\($0)") }
        XCTAssertThrowsError(try Store.open(path: path, mode: .administer))

        let garbage = dir + "/store/garbage.db"
        FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0x41, count: 4096), attributes: [.posixPermissions: 0o600])
        XCTAssertThrowsError(try Store.open(path: garbage, mode: .authenticate).loadUser("alice"))
    }

    func testOlderSchemaIsMigratedByTheCLIOnlyAndKeepsData() throws {
        _ = try Store.open(path: path, mode: .administer) // creates the trusted directory
        let empty = dir + "/store/old.db"
        FileManager.default.createFile(atPath: empty, contents: nil, attributes: [.posixPermissions: 0o600])
        XCTAssertThrowsError(try Store.open(path: empty, mode: .authenticate)) { XCTAssertTrue("\($0)".contains("older"), "\($0)") }
        let store = try Store.open(path: empty, mode: .administer)
        try store.setEnabled(true, user: "alice", service: nil, at: 5)
        let again = try Store.open(path: empty, mode: .administer)
        XCTAssertEqual(try again.loadUser("alice")?.enabled, true)
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
        try store.recordBiometricFailure(user: "alice", at: 1)
        try store.recordBiometricFailure(user: "alice", at: 2)
        try store.recordPasscodeFailure(user: "alice", at: 3)
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
                for i in 0..<each { try s.recordBiometricFailure(user: "newuser", at: Int64(i)) }
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
}


/// A fresh directory that passes the store's trust checks (root-owned, 0700).
func makeTrustedTemporaryDirectory() throws -> String {
    var template = Array("/tmp/biounlock-test.XXXXXX".utf8CString)
    guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    return String(cString: p)
}
