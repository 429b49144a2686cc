import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import TestSupport

/// Store faults (docs/SECURITY.md, item 3): a store that is missing, empty, truncated, garbage,
/// from a newer schema, read-only, locked by a long write, or on a full disk. The module never
/// succeeds without the finger or passcode, never waits unboundedly, says what is wrong in
/// syslog, and never checks a passcode it cannot count. (kill -9 of the CLI is in
/// biounlockTests/KillTests.)
final class StoreFaultTests: ModuleTestCase {

    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let wrong = ModuleFixture.scan("mallory")

    /// One transaction, with the module's syslog lines and a hang guard.
    func transaction(_ answers: [String] = [], touches: [SimCommand] = [], service: String = "biotest", wrapper: [String] = []) throws -> Transaction {
        let t = try fixture.authenticate(service: service, answers: answers, touches: touches, extra: ["--syslog"], wrapper: wrapper, timeout: 30)
        XCTAssertFalse(t.raw.timedOut, "no unbounded wait: \(t.raw.stdout)")
        XCTAssertEqual(t.raw.status, 0, t.raw.stderr)
        return t
    }

    func logged(_ t: Transaction, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(t.syslog.contains { $0.contains(text) }, "syslog should say '\(text)':\n\(t.raw.stdout)", file: file, line: line)
    }

    /// A process that holds the store open (as a concurrent transaction or the CLI would) after
    /// running `sql`, until `release` closes its standard input; then it closes the store cleanly.
    func holdStore(_ sql: [String]) throws -> Process {
        let script = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            for s in sys.argv[2:]: c.execute(s).fetchall()
            sys.stdout.write("held\\n"); sys.stdout.flush()
            sys.stdin.read()
            c.close()
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", script, fixture.storePath] + sql
        let out = try launch(p) { p in
            let out = Pipe()
            p.standardOutput = out
            p.standardInput = Pipe()
            return out
        }
        var said = Data()
        while !said.contains(UInt8(ascii: "\n")) {
            let more = out.fileHandleForReading.availableData
            if more.isEmpty { break }
            said += more
        }
        XCTAssertEqual(String(decoding: said, as: UTF8.self), "held\n", "the holder did not start")
        return p
    }

    func release(_ p: Process) {
        guard p.isRunning else { return }
        try? (p.standardInput as? Pipe)?.fileHandleForWriting.close()
        p.waitUntilExit()
    }

    // MARK: durability

    /// A passcode attempt is counted before it is checked, and that count is on disk -- not just
    /// in the WAL in the page cache -- before the Argon2id check starts: a power cut right after a
    /// wrong guess cannot take the guess back. (Commits are otherwise synchronous=NORMAL; the
    /// counter's writer syncs the WAL itself once the write lock is released.)
    func testAPasscodeAttemptIsOnDiskBeforeItIsChecked() throws {
        fixture.closeStore()
        let trace = fixture.dir + "/strace.out"
        let t = try fixture.authenticate(answers: ["1357"], touches: [.unplug], extra: ["--count-argon2"],
                                         wrapper: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=openat,pwrite64,fsync,fdatasync,write", "-o", trace])
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", t.raw.stdout + t.raw.stderr)
        // Each line: "PID  call(args) = result"; keep "call(args) = result".
        let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map { line -> String in
            String(line.drop { $0 != " " }).trimmingCharacters(in: .whitespaces)
        }
        let walDescriptors = Set(calls.filter { $0.hasPrefix("openat(") && $0.contains("\(fixture.storePath)-wal\"") }
            .compactMap { $0.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } })
        XCTAssertFalse(walDescriptors.isEmpty, "the WAL was opened")
        func touchesWAL(_ call: String, _ prefixes: [String]) -> Bool {
            prefixes.contains { p in walDescriptors.contains { call.hasPrefix("\(p)(\($0),") || call.hasPrefix("\(p)(\($0))") } }
        }
        let check = try XCTUnwrap(calls.firstIndex { $0.hasPrefix("write(1, \"ARGON2: verify") }, "the passcode was checked")
        let counted = try XCTUnwrap(calls[..<check].lastIndex { touchesWAL($0, ["pwrite64"]) }, "the attempt was written to the WAL first")
        XCTAssertTrue(calls[counted..<check].contains { touchesWAL($0, ["fsync", "fdatasync"]) },
                      "the WAL was synced between counting and checking:\n" + calls[counted...check].joined(separator: "\n"))
    }

    // MARK: missing, empty, truncated, garbage, newer

    func testStoresThatCannotBeReadAreUnavailableAndSyslogSaysWhy() throws {
        fixture.closeStore() // the file is now complete: the last connection checkpointed the WAL
        let pristine = try Data(contentsOf: URL(fileURLWithPath: fixture.storePath))
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })
        let variants: [(name: String, contents: Data?, logs: String)] = [
            ("missing", nil, "does not exist"),
            ("empty", Data(), "has schema version 0, older than this module"),
            ("truncated", pristine.prefix(pristine.count / 2), "malformed"),
            ("garbage", garbage, "file is not a database"),
        ]
        for v in variants {
            for side in ["", "-wal", "-shm"] { unlink(fixture.storePath + side) }
            if let contents = v.contents {
                XCTAssertTrue(FileManager.default.createFile(atPath: fixture.storePath, contents: contents, attributes: [.posixPermissions: 0o600]))
            }
            let t = try transaction()
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", v.name)
            XCTAssertEqual(t.messages, [], "\(v.name): nothing asked, nothing shown")
            logged(t, v.logs)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.storePath + "-journal"), "the module never writes a broken store")
    }

    func testAStoreFromANewerSchemaIsUnavailable() throws {
        let newer = try holdStore(["PRAGMA user_version = 99"])
        release(newer)
        let t = try transaction()
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        logged(t, "has schema version 99, newer than this module")
    }

    // MARK: read-only

    /// File modes do not bind root (the module runs as root): a 0400 store is trusted (only root
    /// can write it) and works as usual.
    func testAReadOnlyFileModeChangesNothingForRoot() throws {
        chmod(fixture.storePath, 0o400)
        XCTAssertEqual(try transaction(touches: [wrong, touch]).code, "PAM_SUCCESS")
        XCTAssertEqual(try fixture.store.recentEvents().first?.reason, "finger-matched")
    }

    /// The store's directory mounted read-only (in a private mount namespace). While another
    /// process holds the store open, it can be read but not written: a touch still succeeds (the
    /// decision stands), but a passcode is not checked, right or wrong, because the attempt cannot
    /// be counted -- an uncounted attempt would be a free guess. With nobody holding it, SQLite
    /// cannot even set up its shared memory: unavailable.
    func testAReadOnlyMount() throws {
        let readOnly = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                        "mount --bind -o ro \"$0\" \"$0\" && exec \"$@\"", fixture.dir + "/db"]
        fixture.closeStore()
        let holder = try holdStore(["SELECT count(*) FROM users"])
        defer { release(holder) }

        let touched = try transaction(touches: [touch], wrapper: readOnly)
        XCTAssertEqual(touched.code, "PAM_SUCCESS", "the decision stands")
        logged(touched, "cannot write audit event")

        for pin in [ModuleFixture.pin, "1357"] {
            let t = try transaction([pin], touches: [.unplug], wrapper: readOnly)
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", "PIN \(pin): not checked, the stack moves on to the password")
            logged(t, "cannot count the passcode attempt")
        }
        let wrongFinger = try transaction([ModuleFixture.pin], touches: [wrong], wrapper: readOnly)
        XCTAssertEqual(wrongFinger.code, "PAM_AUTHINFO_UNAVAIL", "an uncounted wrong finger ends the finger step, and the PIN is not checked")
        logged(wrongFinger, "cannot record failed match")

        release(holder)
        let unheld = try transaction([ModuleFixture.pin], wrapper: readOnly)
        XCTAssertEqual(unheld.code, "PAM_AUTHINFO_UNAVAIL")
        logged(unheld, "store unavailable")
    }

    // MARK: locked

    /// Another process holds the write lock far longer than the 2 s busy timeout. The WAL store
    /// can still be read; each write gives up after 2 s and the module falls back.
    func testAStoreLockedByALongWriteTransaction() throws {
        let holder = try holdStore(["BEGIN IMMEDIATE", "UPDATE users SET enabled = enabled"])
        defer { release(holder) }
        let touched = try transaction(touches: [touch])
        XCTAssertEqual(touched.code, "PAM_SUCCESS", "reading is not blocked; the success stands")
        logged(touched, "database is locked")

        let pin = try transaction([ModuleFixture.pin], touches: [.unplug])
        // transaction() fails the test if the harness's limit (30 s) ends it: every wait is bounded.
        XCTAssertEqual(pin.code, "PAM_AUTHINFO_UNAVAIL", "the attempt cannot be counted within 2 s: not checked")
        release(holder)
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
    }

    /// A store in rollback-journal mode (made or changed by another tool) cannot even be read
    /// while another process holds an exclusive lock: unavailable after the busy timeout.
    func testARollbackJournalStoreLockedExclusively() throws {
        fixture.closeStore()
        release(try holdStore(["PRAGMA journal_mode = DELETE"]))
        let holder = try holdStore(["BEGIN EXCLUSIVE", "UPDATE users SET enabled = enabled"])
        defer { release(holder) }
        let t = try transaction()
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(t.messages, [])
        logged(t, "store unavailable")
        logged(t, "database is locked")
    }

    // MARK: disk full

    /// The store on a full filesystem (a 256 KiB tmpfs in a private mount namespace, filled up).
    /// Another process holds the store open, so its shared memory exists and it can be read; every
    /// write fails. A touch succeeds although neither the success nor the audit row can be written;
    /// a passcode is not checked because the attempt cannot be counted.
    func testAFullDisk() throws {
        fixture.closeStore()
        let full = fixture.dir + "/full"
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try fixture.service("db=\(full)/biounlock.db", name: "full")
        let setup = """
            full=$0 store=$1; shift
            mount -t tmpfs -o size=256k,mode=0700 biounlock-full "$full" || exit 97
            cp -p "$store" "$full/" || exit 97
            /usr/bin/python3 -c 'import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            c.execute("SELECT count(*) FROM users").fetchall(); print("held", flush=True); time.sleep(60)' "$full/biounlock.db" >"$full/held" &
            holder=$!
            while ! grep -q held "$full/held" 2>/dev/null; do sleep 0.05; done
            dd if=/dev/zero of="$full/fill" bs=4k >/dev/null 2>&1
            "$@"; rc=$?
            kill $holder
            exit $rc
            """
        let inFullDisk = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", setup, full, fixture.storePath]

        let touched = try transaction(touches: [touch], service: "full", wrapper: inFullDisk)
        XCTAssertEqual(touched.code, "PAM_SUCCESS", "the decision stands: \(touched.raw.stdout)")
        // The counter reset and the audit row go in one transaction (scripts/bench): one line says both failed.
        logged(touched, "cannot commit the success of \(ModuleFixture.enrolledUser) and its audit event")
        logged(touched, "database or disk is full")

        let pin = try transaction([ModuleFixture.pin], touches: [.unplug], service: "full", wrapper: inFullDisk)
        XCTAssertEqual(pin.code, "PAM_AUTHINFO_UNAVAIL", "the attempt cannot be counted: not checked")
        logged(pin, "cannot count the passcode attempt")
    }
}
