import XCTest
import TestSupport
import Foundation
import BiounlockCore
@testable import BiounlockStore
import CSQLite

/// kill -9 of the CLI (docs/SECURITY.md, item 3) in the middle of an enrolment, a passcode change
/// or a schema migration leaves the previous state whole -- or the new one, whole: SQLite's
/// transactions, one per change. Each test kills at spread-out moments around the write and
/// checks after every kill that the module can open the store and that it holds exactly one of
/// the two states.
final class KillTests: XCTestCase {
    var dir = ""
    var db: String { dir + "/db/biounlock.db" }
    var socket: String { dir + "/sim" }
    let user = "daemon"

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: cliPath), "run scripts/build first: \(cliPath)")
        var template = Array("/tmp/bu-kill.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    var globals: [String] { ["--db", db, "--sensor", "simulated", "--sim-socket", socket, "--config", dir + "/none.conf"] }

    func start(_ args: [String], stdin: String? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cliPath)
        p.arguments = globals + args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        let input = try launch(p) { p in
            let input = Pipe()
            p.standardInput = input
            return input
        }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        return p
    }

    func killNow(_ p: Process) {
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    func touch(_ id: String) throws {
        let r = try runProcess(cliPath, ["--sim-socket", socket, "sim", "scan", id, "--wait", "10"])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func enrol(_ id: String) throws {
        let p = try start(["enrol", user, "--finger", "right-index", "--timeout", "20"])
        for _ in 0..<5 { try touch(id) }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
    }

    /// What the module sees: the store opens in the module's mode (trust checks, exact schema)
    /// and passes SQLite's integrity check.
    func moduleView() throws -> UserRecord {
        let check = try runProcess("/usr/bin/sqlite3", [db, "PRAGMA integrity_check"])
        XCTAssertEqual(check.stdout, "ok\n", check.stderr)
        return try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user))
    }

    func testKillDuringEnrolmentLeavesTheOldFingerOrTheNewOneWhole() throws {
        try enrol("first")
        var previous = try moduleView()
        var replaced = 0
        for i in 0..<12 {
            let id = "finger-\(i)"
            let p = try start(["enrol", user, "--finger", "right-index", "--timeout", "20", "--replace"])
            for _ in 0..<5 { try touch(id) } // the fifth touch is taken just before the template is written
            usleep(useconds_t(i * 700))
            killNow(p)
            let now = try moduleView()
            XCTAssertEqual(now.templates.count, 1)
            let data = String(decoding: now.templates.first?.data ?? [], as: UTF8.self)
            if data == id {
                XCTAssertEqual(now.enrolmentVersion, previous.enrolmentVersion + 1, "the new finger, with its version bump")
                replaced += 1
            } else {
                XCTAssertEqual(now.templates, previous.templates, "the old finger, untouched")
                XCTAssertEqual(now.enrolmentVersion, previous.enrolmentVersion)
            }
            previous = now
        }
        print("KillTests: the enrolment was complete before the kill in \(replaced) of 12 runs")
    }

    func testKillDuringPasscodeChangeLeavesTheOldPasscodeOrTheNewOneWhole() throws {
        XCTAssertEqual(try runProcess(cliPath, globals + ["passcode", "set", user, "--stdin"], stdin: "1000\n").status, 0)
        var current = "1000"
        var changed = 0
        for i in 1...8 {
            let next = String(1000 + i)
            let p = try start(["passcode", "set", user, "--stdin"], stdin: next + "\n")
            usleep(useconds_t(i * 40_000)) // spread over the Argon2id hash (~0.1-0.3 s) and the write
            killNow(p)
            let stored = try XCTUnwrap(moduleView().passcode)
            XCTAssertEqual(stored.kind, .pin)
            let old = try Passcode.verify(Secret(bytes: Array(current.utf8))!, against: stored.hash)
            let new = old ? false : try Passcode.verify(Secret(bytes: Array(next.utf8))!, against: stored.hash)
            XCTAssertTrue(old || new, "the stored hash is the old PIN's or the new one's")
            if new { current = next; changed += 1 }
        }
        print("KillTests: the passcode change was complete before the kill in \(changed) of 8 runs")
    }

    /// A store at schema version 1 (made from the first migration, as an old biounlock left it);
    /// `biounlock status` migrates it, and is killed at moments spread around that.
    func testKillDuringMigrationLeavesTheOldSchemaOrTheNewOneWhole() throws {
        let old = dir + "/v1.db"
        do {
            _ = try Store.open(path: db, mode: .administer) // the trusted directory
            let c = try Connection(path: old, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            try c.execute("PRAGMA journal_mode = WAL")
            try c.execute(Schema.migrations[0].sql)
            try c.execute("PRAGMA user_version = 1")
            try c.execute("INSERT INTO users(name, enabled, passcode_kind) VALUES ('daemon', 1, 'pin')")
        }
        chmod(old, 0o600)
        let v1Columns = try columns(old)
        var migrated = 0
        for i in 0..<15 {
            unlink(db); unlink(db + "-wal"); unlink(db + "-shm")
            XCTAssertNoThrow(try FileManager.default.copyItem(atPath: old, toPath: db))
            let p = try start(["status"])
            usleep(useconds_t(i * 1_500))
            killNow(p)
            let check = try runProcess("/usr/bin/sqlite3", [db, "PRAGMA integrity_check"])
            XCTAssertEqual(check.stdout, "ok\n", check.stderr)
            let version = try runProcess("/usr/bin/sqlite3", [db, "PRAGMA user_version"]).stdout
            let cols = try columns(db)
            switch version {
            case "1\n":
                XCTAssertEqual(cols, v1Columns, "version 1 with version 1's table")
                XCTAssertThrowsError(try Store.open(path: db, mode: .authenticate).loadUser(user)) { XCTAssertTrue("\($0)".contains("older"), "\($0)") }
            case "\(Schema.currentVersion)\n":
                XCTAssertTrue(cols.isSuperset(of: v1Columns) && cols.count > v1Columns.count, "the new columns, all of them")
                XCTAssertEqual(try Store.open(path: db, mode: .authenticate).loadUser(user)?.enabled, true, "data kept")
                XCTAssertEqual(try Store.open(path: db, mode: .authenticate).loadUser(user)?.uid, getpwnam(user)?.pointee.pw_uid,
                               "bound to the account the name has")
                migrated += 1
            default:
                XCTFail("user_version \(version)")
            }
        }
        print("KillTests: the migration was complete before the kill in \(migrated) of 15 runs")
        XCTAssertEqual(try runProcess(cliPath, globals + ["status"]).status, 0, "an interrupted migration completes next time")
        XCTAssertEqual(try Store.open(path: db, mode: .authenticate).loadUser(user)?.enabled, true)
    }

    func columns(_ path: String) throws -> Set<String> {
        let r = try runProcess("/usr/bin/sqlite3", [path, "SELECT name FROM pragma_table_info('users')"])
        return Set(r.stdout.split(separator: "\n").map(String.init))
    }
}
