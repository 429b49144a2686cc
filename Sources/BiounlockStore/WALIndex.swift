import BiounlockCore
import BiounlockSystem
import Synchronization

/// SQLite's WAL index (the `STORE-shm` file), kept from one module transaction to the next.
///
/// SQLite takes the first connection to open a WAL database -- it finds no lock on byte 128 of
/// the -shm file, its "DMS" byte -- as the one that must rebuild the index: it truncates the
/// -shm file, grows it again a byte per page, and reads and checksums every frame of the WAL.
/// A sudo is one process with one connection, so every sudo was that first connection: a
/// measurable part of a whole sudo, enrolled or not (bench/RESULTS.md's history). The module
/// now holds a shared open-file-description lock on that byte while its connection is open,
/// when the index is known to describe the WAL exactly: SQLite then finds another connection
/// and uses the index as it is -- as it does beside `biounlock log --follow`, or any
/// connection that stays open.
///
/// When is the index known to be right? SQLite keeps it right while the system runs: every
/// commit updates it, and the file's pages live in the page cache, shared by every process.
/// What can make it wrong is a reboot (the file on disk can be older than the WAL, or torn) or a
/// writer that went around it (a connection in EXCLUSIVE locking mode, a WAL copied in from
/// elsewhere). So the lock is taken only when all of these hold, and otherwise SQLite does
/// what it always did:
/// - the -shm file carries, in its extended attribute `user.biounlock.boot`, the id of this
///   boot: a connection of the module opened the store the ordinary way in this boot (SQLite
///   built the index, or checked it beside a live connection) and marked it (`mark`);
/// - the index header is whole -- both copies equal, SQLite's checksum over it right -- and
///   names the WAL's salts and page size, and at least one frame (an index of none says the
///   store's size in pages, and nothing in the WAL could confirm it);
/// - the WAL's frame at the index's last place is the one the index ends with (the same salts,
///   the running checksum the index keeps), so the frames before it are those it indexed;
/// - the WAL holds no valid frame after it: frames written without the index;
/// - and from before those checks until the connection closes, a shared lock on the store's
///   SHARED bytes (the lock every WAL connection holds while it is open) keeps a connection in
///   EXCLUSIVE locking mode from writing between the checks and SQLite's first read.
/// Every failure -- a check, an error, a file missing -- means no lock: a lock held by mistake
/// would mean stale reads and lost writes, one not held costs a fraction of a millisecond. The
/// files are opened O_NOFOLLOW|O_CLOEXEC and checked on the open descriptor (root's, not
/// writable by others), as Store.trustProblem checks them by name.
enum WALIndexHold {
    /// What `take` did: whether the lock is held, and whether the -shm file must be marked once
    /// the connection has read the store the ordinary way (its mark is not this boot's).
    struct Outcome: Equatable {
        var held: Bool
        var markAfterFirstRead: Bool
    }

    /// Takes the hold for the store at `path` when the index can be trusted (see above). Call it
    /// after the connection is open and before it reads, and only when no other connection of
    /// this process has the store open (theirs share SQLite's index already). Every descriptor
    /// of the store or its -shm file opened here is kept (`ProcessDescriptors`); the locks live
    /// as long as they do.
    static func take(storePath path: String, key: ProcessDescriptors.Key, bootID: [UInt8]?) -> Outcome {
        guard let bootID, !bootID.isEmpty else { return Outcome(held: false, markAfterFirstRead: false) }
        let indexPath = path + "-shm", walPath = path + "-wal"
        let options: FileDescriptor.OpenOptions = [.noFollow, .noControllingTerminal]
        // The store first: its SHARED lock must be held before anything is checked.
        guard let store = ProcessDescriptors.open(path, .readOnly, options: options, keptFor: key),
              (try? store.setOpenFileDescriptionLock(.shared, start: WALIndex.sharedFirst, length: WALIndex.sharedSize)) == true else {
            return Outcome(held: false, markAfterFirstRead: true)
        }
        // Without the hold, the store's lock goes at once: kept, it would stand in the way of this
        // process's own EXCLUSIVE lock, which a store another tool switched to a rollback
        // journal needs for every write.
        func notHeld(markAfterFirstRead: Bool) -> Outcome {
            _ = try? store.setOpenFileDescriptionLock(.unlock, start: WALIndex.sharedFirst, length: WALIndex.sharedSize)
            return Outcome(held: false, markAfterFirstRead: markAfterFirstRead)
        }
        guard let index = ProcessDescriptors.open(indexPath, .readWrite, options: options, keptFor: key),
              trusted(index, indexPath) != nil else { return notHeld(markAfterFirstRead: true) }
        let mark = try? index.extendedAttribute(WALIndex.markAttribute, maximumLength: 64)
        guard mark == bootID else { return notHeld(markAfterFirstRead: true) }
        // The WAL carries no lock of SQLite's: its descriptor may be closed at once.
        guard let wal = try? FileDescriptor.open(walPath, .readOnly, options: options),
              let walSize = trusted(wal.descriptor, walPath)?.size,
              let header = try? index.read(count: WALIndex.headerSize * 2, atFileOffset: 0),
              WALIndex.describes(indexHeader: header, walSize: walSize, read: { offset, count in
                  try? wal.descriptor.read(count: count, atFileOffset: offset)
              }),
              (try? index.setOpenFileDescriptionLock(.shared, start: WALIndex.dmsByte, length: 1)) == true else {
            return notHeld(markAfterFirstRead: false)
        }
        return Outcome(held: true, markAfterFirstRead: false)
    }

    /// Marks the store's -shm file as opened the ordinary way in this boot. Failures change
    /// nothing but the next transaction's cost (a filesystem without user extended attributes:
    /// every transaction rebuilds the index, as before).
    static func mark(storePath path: String, key: ProcessDescriptors.Key, bootID: [UInt8]?) {
        guard let bootID, !bootID.isEmpty else { return }
        let indexPath = path + "-shm"
        guard let index = ProcessDescriptors.open(indexPath, .readWrite, options: [.noFollow, .noControllingTerminal], keptFor: key),
              trusted(index, indexPath) != nil else { return }
        try? index.setExtendedAttribute(WALIndex.markAttribute, to: bootID)
    }

    /// fstat of an opened store file, when it is one the module may use (regular, root's, not
    /// writable by others).
    private static func trusted(_ file: FileDescriptor, _ path: String) -> FileStatus? {
        guard let st = try? file.status(), TrustedFiles.checkOpened(path, st) == nil else { return nil }
        return st
    }
}

/// This process's connections to each store, and the descriptors of the store's files that
/// biounlock opened itself. SQLite's locks are POSIX record locks: they belong to the process,
/// and closing *any* descriptor of a file releases all of them -- so a descriptor of the store
/// or its -shm file, once opened, stays open until the process's last connection to the store
/// has closed (SQLite's own unix VFS keeps its descriptors the same way). Stores are told apart
/// as SQLite tells them, by device and inode (by path when the file cannot be found); the list is
/// searched in order (a process has one or two stores open).
enum ProcessDescriptors {
    enum Key: Equatable, Sendable {
        case file(device: UInt64, inode: UInt64)
        case path(String)

        init(_ path: String) {
            if let st = try? FileStatus.of(path, followingSymbolicLinks: true) {
                self = .file(device: st.device, inode: st.inode)
            } else {
                self = .path(path)
            }
        }
    }

    struct Entry {
        let key: Key
        var connections: Int
        var kept: [FileDescriptor]
    }
    static let state = Mutex<[Entry]>([])

    /// A connection to the store `key` names is opening; returns how many of this process's
    /// connections had it open already.
    static func opening(_ key: Key) -> Int {
        state.withLock { entries in
            if let i = entries.firstIndex(where: { $0.key == key }) {
                entries[i].connections += 1
                return entries[i].connections - 1
            }
            entries.append(Entry(key: key, connections: 1, kept: []))
            return 0
        }
    }

    /// A connection to the store has closed (sqlite3_close has returned): the last one closes
    /// the descriptors kept for it.
    static func closed(_ key: Key) {
        let toClose: [FileDescriptor] = state.withLock { entries in
            guard let i = entries.firstIndex(where: { $0.key == key }) else { return [] }
            entries[i].connections -= 1
            guard entries[i].connections <= 0 else { return [] }
            return entries.remove(at: i).kept
        }
        for fd in toClose { fd.close() }
    }

    /// open(2) of one of the files of the store `store` names, kept until this process's last
    /// connection to it has closed; nil when it cannot be opened (or no connection is open:
    /// closed at once).
    static func open(_ path: String, _ mode: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions,
                     keptFor store: Key) -> FileDescriptor? {
        guard let opened = try? FileDescriptor.open(path, mode, options: options) else { return nil }
        let fd = opened.release()
        let kept = state.withLock { entries -> Bool in
            guard let i = entries.firstIndex(where: { $0.key == store }) else { return false }
            entries[i].kept.append(fd)
            return true
        }
        if !kept { fd.close() }
        return kept ? fd : nil
    }
}

/// SQLite's WAL and WAL-index formats (sqlite.org/walformat.html, src/wal.c), as far as
/// WALIndexHold checks them. Every function reads only what it was given and never traps.
enum WALIndex {
    /// SQLite's DMS byte in the -shm file: UNIX_SHM_BASE (120) + SQLITE_SHM_NLOCK (8).
    static let dmsByte: Int64 = 128
    /// The store's SHARED lock: SHARED_FIRST (PENDING_BYTE 0x40000000 + 2), SHARED_SIZE bytes.
    static let sharedFirst: Int64 = 0x4000_0000 + 2
    static let sharedSize: Int64 = 510
    /// The extended attribute of the -shm file naming the boot it was last opened the
    /// ordinary way in.
    static let markAttribute = "user.biounlock.boot"
    /// WalIndexHdr (two copies at the start of the -shm file), the WAL header, a frame header.
    static let headerSize = 48
    static let walHeaderSize = 32
    static let frameHeaderSize = 24
    static let version: UInt32 = 3_007_000

    /// Whether `indexHeader` (the first 96 bytes of the -shm file) is a whole index header that
    /// describes exactly the committed frames of a WAL of `walSize` bytes, whose bytes `read`
    /// gives (nil: cannot be read).
    static func describes(indexHeader bytes: [UInt8], walSize: Int64, read: (Int64, Int) -> [UInt8]?) -> Bool {
        guard bytes.count >= 2 * headerSize,
              bytes[0..<headerSize].elementsEqual(bytes[headerSize..<2 * headerSize]) else { return false }
        let h = bytes[0..<headerSize]
        // The fields are the C struct's, in this machine's byte order.
        guard native32(h, 0) == version, h[12] == 1,
              same(checksum(h[0..<40], nativeOrder: true, seed: (0, 0)), (native32(h, 40), native32(h, 44))) else { return false }
        let mxFrame = Int64(native32(h, 16))
        let lastChecksum = (native32(h, 24), native32(h, 28))
        let salts = Array(h[32..<40])
        let rawPageSize = Int(native16(h, 14))
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        // An index of no frame is not taken: its header's database size (nPage) could be
        // another's than the store's, and nothing in the WAL would say so.
        guard mxFrame >= 1, pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return false }

        // The WAL's header: its magic, the index's page size and salts, its own checksum.
        guard let w = read(0, walHeaderSize), w.count == walHeaderSize else { return false }
        let magic = big32(w[...], 0)
        guard magic & 0xFFFF_FFFE == 0x377F_0682, big32(w[...], 4) == version,
              Int(big32(w[...], 8)) == pageSize, w[16..<24].elementsEqual(salts) else { return false }
        // Checksums are of 32-bit words in the order the magic's low bit names: 0 little-endian.
        let nativeOrder = (magic & 1 == 0) == isLittleEndian
        guard same(checksum(w[0..<24], nativeOrder: nativeOrder, seed: (0, 0)), (big32(w[...], 24), big32(w[...], 28))) else { return false }

        // The index's last frame is the WAL's frame at that place (the same salts and running
        // checksum: the frames before it are those indexed), and it ends the transaction that
        // left the database the size the index says.
        let frameSize = Int64(frameHeaderSize + pageSize)
        let lastOffset = Int64(walHeaderSize) + (mxFrame - 1) * frameSize // < 2^32 * 2^17: no overflow
        guard lastOffset + frameSize <= walSize,
              let last = read(lastOffset, frameHeaderSize), last.count == frameHeaderSize,
              big32(last[...], 4) != 0, big32(last[...], 4) == native32(h, 20), last[8..<16].elementsEqual(salts),
              same((big32(last[...], 16), big32(last[...], 20)), lastChecksum) else { return false }

        // No valid frame after it: none written without the index.
        let nextOffset = lastOffset + frameSize
        guard nextOffset + frameSize <= walSize else { return true }
        guard let next = read(nextOffset, Int(frameSize)), next.count == Int(frameSize) else { return false }
        return !isValidFrame(next, salts: salts, nativeOrder: nativeOrder, seed: lastChecksum)
    }

    /// Whether `frame` (header and page) is a frame SQLite's recovery would take after one whose
    /// running checksum is `seed`: the WAL's salts, a page number, and the checksum of its first
    /// 8 header bytes and its page, run on from `seed`.
    static func isValidFrame(_ frame: [UInt8], salts: [UInt8], nativeOrder: Bool, seed: (UInt32, UInt32)) -> Bool {
        guard frame.count > frameHeaderSize, frame[8..<16].elementsEqual(salts), big32(frame[...], 0) != 0,
              let afterHeader = checksum(frame[0..<8], nativeOrder: nativeOrder, seed: seed),
              let sum = checksum(frame[frameHeaderSize...], nativeOrder: nativeOrder, seed: afterHeader) else { return false }
        return same(sum, (big32(frame[...], 16), big32(frame[...], 20)))
    }

    static func same(_ a: (UInt32, UInt32)?, _ b: (UInt32, UInt32)) -> Bool {
        guard let a else { return false }
        return a.0 == b.0 && a.1 == b.1
    }

    /// SQLite's walChecksumBytes: over pairs of 32-bit words, s1 += w0 + s2, s2 += w1 + s1,
    /// wrapping; nil unless `bytes` is a whole number of pairs.
    static func checksum(_ bytes: ArraySlice<UInt8>, nativeOrder: Bool, seed: (UInt32, UInt32)) -> (UInt32, UInt32)? {
        guard bytes.count % 8 == 0, !bytes.isEmpty else { return nil }
        var s1 = seed.0, s2 = seed.1
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let w0 = nativeOrder ? native32(bytes, i - bytes.startIndex) : big32(bytes, i - bytes.startIndex)
            let w1 = nativeOrder ? native32(bytes, i - bytes.startIndex + 4) : big32(bytes, i - bytes.startIndex + 4)
            s1 = s1 &+ w0 &+ s2
            s2 = s2 &+ w1 &+ s1
            i += 8
        }
        return (s1, s2)
    }

    static let isLittleEndian = UInt16(littleEndian: 1) == 1

    /// The 32-bit word at `offset` of `bytes` (from its start), most significant byte first.
    static func big32(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> UInt32 {
        let i = bytes.startIndex + offset
        return UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
    }

    /// The same in this machine's byte order.
    static func native32(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> UInt32 {
        let i = bytes.startIndex + offset
        let little = UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
        return isLittleEndian ? little : little.byteSwapped
    }

    static func native16(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> UInt16 {
        let i = bytes.startIndex + offset
        let little = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
        return isLittleEndian ? little : little.byteSwapped
    }
}
