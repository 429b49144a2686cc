import XCTest
import Foundation
import BiounlockCore
import BiounlockSystem
import TestSupport
import CSQLite
@testable import BiounlockStore

/// SQLite's WAL index kept from one module transaction to the next (WALIndex.swift): taken only
/// when it describes the WAL exactly and was built in this boot; every other case is SQLite's
/// own first-connection path, and what the module reads is the store as it is.
final class WALIndexTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/store/biounlock.db" }
    var indexPath: String { path + "-shm" }
    var walPath: String { path + "-wal" }

    override func setUpWithError() throws {
        dir = try makeTrustedTemporaryDirectory()
        // A store with alice enabled, as the CLI leaves it (its connection removes the WAL and
        // the -shm file when it closes), then a write of the module's (which keeps them).
        let admin = try Store.open(path: path, mode: .administer, lookupAccount: { Account(name: $0, uid: 4242) })
        try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        try admin.setEnabled(true, user: "carol", service: nil, at: 1)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// One transaction as the module makes it: opens the store, reads alice's row, writes when
    /// asked; returns whether it held the index and what it read.
    @discardableResult
    func transaction(write: Bool = false) throws -> (held: Bool, aliceEnabled: Bool?) {
        let store = try Store.open(path: path, mode: .authenticate)
        let alice = try store.loadUser("alice", withTemplates: false)
        if write { try store.recordLastFailure(user: "carol", at: 2) }
        return (store.indexHeld, alice?.enabled)
    }

    /// The mark, read by name in another process: opening the -shm file here and closing it
    /// again would drop this process's own SQLite locks on it (what ProcessDescriptors prevents).
    func mark() throws -> String? {
        let script = """
            import os, sys
            try: sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2]).decode())
            except OSError: sys.stdout.write("<none>")
            """
        let r = try runProcess("/usr/bin/python3", ["-c", script, indexPath, WALIndex.markAttribute])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout == "<none>" ? nil : r.stdout
    }

    func setMark(_ text: String) throws {
        let index = try FileDescriptor.open(indexPath, .readWrite)
        try index.descriptor.setExtendedAttribute(WALIndex.markAttribute, to: Array(text.utf8))
    }

    /// Whether the files on disk pass the checks (the mark aside).
    func describes() throws -> Bool {
        let index = try FileDescriptor.open(indexPath, .readOnly)
        let wal = try FileDescriptor.open(walPath, .readOnly)
        let header = try index.descriptor.read(count: 2 * WALIndex.headerSize, atFileOffset: 0)
        return WALIndex.describes(indexHeader: header, walSize: try wal.descriptor.status().size) { offset, count in
            try? wal.descriptor.read(count: count, atFileOffset: offset)
        }
    }

    var bootID: String? { SessionProbe.bootID() }

    func testTheIndexIsKeptOnceTheStoreWasOpenedTheOrdinaryWayInThisBoot() throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: indexPath), "the CLI's last connection removed it")
        XCTAssertEqual(try transaction(write: true).held, false, "no mark yet: SQLite builds the index")
        XCTAssertEqual(try mark(), bootID, "marked once read")
        XCTAssertTrue(try describes())
        for _ in 0..<5 {
            let t = try transaction(write: true)
            XCTAssertTrue(t.held)
            XCTAssertEqual(t.aliceEnabled, true)
        }
        XCTAssertTrue(try describes(), "each commit kept the index right")
    }

    func testAnIndexMarkedInAnotherBootIsBuiltAgainAndMarkedAnew() throws {
        try transaction(write: true)
        try setMark("0f0f0f0f-another-boot")
        XCTAssertFalse(try transaction().held)
        XCTAssertEqual(try mark(), bootID)
        XCTAssertTrue(try transaction().held)
    }

    /// A writer that went around the index -- a connection in EXCLUSIVE locking mode keeps its
    /// index in its own memory -- left frames the -shm file does not know: the module must read
    /// them. With the index taken as it is, alice would still be enabled.
    func testFramesWrittenAroundTheIndexAreRead() throws {
        try transaction(write: true)
        XCTAssertTrue(try transaction(write: true).held)
        do {
            let c = try Connection(path: path, flags: SQLITE_OPEN_READWRITE)
            try c.execute("PRAGMA locking_mode = EXCLUSIVE")
            var persist: Int32 = 1
            XCTAssertEqual(sqlite3_file_control(c.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist), SQLITE_OK)
            XCTAssertEqual(biounlock_sqlite3_no_checkpoint_on_close(c.handle, 1), SQLITE_OK)
            try c.execute("UPDATE users SET enabled = 0 WHERE name = 'alice'")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: walPath))
        XCTAssertFalse(try describes(), "a valid frame after the index's last one")
        let t = try transaction()
        XCTAssertFalse(t.held)
        XCTAssertEqual(t.aliceEnabled, false, "the frames written around the index are read")
        XCTAssertTrue(try transaction().held, "SQLite built the index again; the next transaction keeps it")
    }

    /// A WAL (and store) copied over the store's files in place, the -shm file left: the index
    /// names other salts, and the module reads the copy.
    func testAWALFromAnotherStoreIsNotTakenForThisOne() throws {
        try transaction(write: true)
        let other = dir + "/other/biounlock.db"
        do {
            let admin = try Store.open(path: other, mode: .administer, lookupAccount: { Account(name: $0, uid: 4242) })
            try admin.setEnabled(false, user: "alice", service: nil, at: 1)
        }
        do {
            let store = try Store.open(path: other, mode: .authenticate)
            try store.recordLastFailure(user: "alice", at: 3)
        }
        XCTAssertTrue(try transaction().held)
        for suffix in ["", "-wal"] {
            let copy = try Data(contentsOf: URL(fileURLWithPath: other + suffix))
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path + suffix))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: copy)
            try handle.close()
        }
        XCTAssertFalse(try describes())
        let t = try transaction()
        XCTAssertFalse(t.held)
        XCTAssertEqual(t.aliceEnabled, false, "the copied store is read, not the index of the one before")
    }

    func testAWALCutShortIsNotTaken() throws {
        try transaction(write: true)
        try transaction(write: true)
        XCTAssertTrue(try describes())
        let wal = try FileDescriptor.open(walPath, .readOnly)
        let size = try wal.descriptor.status().size
        XCTAssertEqual(truncate(walPath, off_t(size - 100)), 0)
        XCTAssertFalse(try describes())
        XCTAssertFalse(try transaction().held)
    }

    /// The header's two copies must agree and carry SQLite's checksum; any byte changed in one
    /// copy, or in both, is refused; bytes of any kind never trap.
    func testTheIndexHeaderMustBeWholeAndNothingTraps() throws {
        try transaction(write: true)
        try transaction(write: true)
        let index = try FileDescriptor.open(indexPath, .readOnly)
        let wal = try FileDescriptor.open(walPath, .readOnly)
        let header = try index.descriptor.read(count: 2 * WALIndex.headerSize, atFileOffset: 0)
        let walSize = try wal.descriptor.status().size
        let read: (Int64, Int) -> [UInt8]? = { offset, count in try? wal.descriptor.read(count: count, atFileOffset: offset) }
        XCTAssertTrue(WALIndex.describes(indexHeader: header, walSize: walSize, read: read))
        for i in 0..<WALIndex.headerSize {
            var one = header
            one[WALIndex.headerSize + i] ^= 0x01
            XCTAssertFalse(WALIndex.describes(indexHeader: one, walSize: walSize, read: read), "copy 2, byte \(i)")
            var both = one
            both[i] ^= 0x01
            XCTAssertFalse(WALIndex.describes(indexHeader: both, walSize: walSize, read: read), "both copies, byte \(i)")
        }
        XCTAssertFalse(WALIndex.describes(indexHeader: Array(header.prefix(95)), walSize: walSize, read: read))
        XCTAssertFalse(WALIndex.describes(indexHeader: header, walSize: walSize, read: { _, _ in nil }))
        // Random bytes, and the real files with one byte changed anywhere (which reach every
        // check): never a trap; a changed byte of the WAL's header or last frame is refused.
        var generator = SystemRandomNumberGenerator()
        let walBytes = try wal.descriptor.read(count: Int(walSize), atFileOffset: 0)
        func readFrom(_ bytes: [UInt8]) -> (Int64, Int) -> [UInt8]? {
            { offset, count in
                guard offset >= 0, offset < bytes.count else { return [] }
                return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + max(0, count))])
            }
        }
        for _ in 0..<300 {
            let bytes = (0..<Int.random(in: 0...120, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = WALIndex.describes(indexHeader: bytes, walSize: Int64.random(in: -5...Int64.max, using: &generator), read: readFrom(walBytes))
        }
        let frameSize = WALIndex.frameHeaderSize + 4096
        let lastFrame = (walBytes.count - WALIndex.walHeaderSize) / frameSize - 1
        for _ in 0..<300 {
            var changedHeader = header, changedWAL = walBytes
            if Bool.random(using: &generator) {
                changedHeader[Int.random(in: 0..<header.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                _ = WALIndex.describes(indexHeader: changedHeader, walSize: walSize, read: readFrom(walBytes))
            } else {
                let i = Int.random(in: 0..<walBytes.count, using: &generator)
                changedWAL[i] ^= UInt8.random(in: 1...255, using: &generator)
                // The WAL's header (its checksum covers it) and the last frame's commit size,
                // salts and running checksum.
                let inFrame = (i - WALIndex.walHeaderSize) % frameSize
                let checked = i < WALIndex.walHeaderSize
                    || (i - WALIndex.walHeaderSize) / frameSize == lastFrame && (4..<WALIndex.frameHeaderSize).contains(inFrame)
                let described = WALIndex.describes(indexHeader: header, walSize: walSize, read: readFrom(changedWAL))
                if checked { XCTAssertFalse(described, "WAL byte \(i) changed") }
            }
        }
    }

    /// SQLite's locks belong to the process, and closing any descriptor of a file drops them all:
    /// the descriptor the mark was written through stays open while the connection does, so the
    /// connection keeps its lock on the DMS byte (another process sees it) until it closes.
    func testTheModulesOwnDescriptorsNeverDropSQLitesLocks() throws {
        func dmsLocked() throws -> Bool {
            let script = """
                import fcntl, struct, sys, os
                if not os.path.exists(sys.argv[1]): print(False); sys.exit(0)
                fd = os.open(sys.argv[1], os.O_RDWR)
                lock = struct.pack('hhqqi', fcntl.F_WRLCK, 0, 128, 1, 0)
                print(struct.unpack('hhqqi', fcntl.fcntl(fd, fcntl.F_GETLK, lock))[0] != fcntl.F_UNLCK)
                """
            let r = try runProcess("/usr/bin/python3", ["-c", script, indexPath])
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.stdout.hasPrefix("True")
        }
        // This process's descriptors of the store's files.
        let fds = { () -> [String] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
                .filter { $0.hasPrefix(self.dir) }.sorted()
        }
        XCTAssertFalse(try dmsLocked(), "nobody has the store open")
        let before = fds()
        XCTAssertEqual(before, [])
        do {
            let store = try Store.open(path: path, mode: .authenticate)
            XCTAssertFalse(store.indexHeld)
            _ = try store.loadUser("alice", withTemplates: false)
            try store.recordLastFailure(user: "carol", at: 2)
            XCTAssertEqual(try mark(), bootID, "marked through a descriptor of the -shm file")
            XCTAssertTrue(try dmsLocked(), "SQLite's lock on the DMS byte survived that descriptor")
            // The same store under another spelling of its path: the same file (device and inode).
            let second = try Store.open(path: dir + "/store/./biounlock.db", mode: .authenticate)
            XCTAssertEqual(second.connection.othersOpenInProcess, 1, "known as the same store")
            XCTAssertFalse(second.indexHeld, "a second connection of the process shares SQLite's index: nothing taken")
            _ = try second.loadUser("alice", withTemplates: false)
        }
        XCTAssertEqual(fds(), [], "every descriptor closed with the last connection")
        XCTAssertFalse(try dmsLocked())
        do {
            let store = try Store.open(path: path, mode: .authenticate)
            XCTAssertTrue(store.indexHeld)
            XCTAssertTrue(try dmsLocked(), "held before SQLite has even read")
        }
        XCTAssertFalse(try dmsLocked(), "released with the connection")
        XCTAssertEqual(fds(), [])
    }
}
