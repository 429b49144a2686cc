import BiounlockCore
import BiounlockSystem

/// The store's lock file (`STORE-lock`, next to the store, root's, 0600, always empty): byte-range
/// locks that put biounlock's own processes in line, with a bounded wait, where SQLite's locks
/// alone do not serve.
///
/// - Byte 0 is the **write queue**: every write transaction of the module and the CLI holds it
///   (Store.write). SQLite's busy handler sleeps longer and longer between tries (up to 100 ms),
///   so under 64 concurrent logins a waiter that had slept long lost the lock again and again to
///   newcomers and gave up at the busy timeout with its audit row or counter reset (8 of 1,920
///   writes in scripts/bench). Here every waiter tries again every 1-2 ms, so whoever has waited
///   longest is as likely as anyone to go next, and the wait is bounded by
///   Store.writeQueueWaitMilliseconds (longer than the busy timeout, which still bounds waits
///   for writers outside biounlock).
/// - Byte 1 + hash(user) (up to 2^62) marks that **user's passcode attempts in flight**
///   (Store.attemptPasscode): each attempt holds a shared lock on it from its count until its
///   result is written. An attempt that finds the lockout reached waits until no attempt of the
///   user is in flight -- one of them may be right and clear the count -- and only then is
///   refused; so right passcodes typed at the same moment all succeed, attempts run side by side
///   while the lockout is far, and users never wait for each other (a hash collision would only
///   make two users wait for each other's attempts).
///
/// Security choices: the locks are open-file-description locks (F_OFD_SETLK): they belong to
/// this open of the file, so two connections in one process (threads of a host) exclude each
/// other, closing some other descriptor of the file releases nothing, and the kernel releases
/// them when the process dies (kill -9 leaves nothing held). The wait polls F_OFD_SETLK instead
/// of blocking in F_OFD_SETLKW, which could only be interrupted by a signal -- and the module
/// must not touch the host's signals, while anyone can SIGSTOP their own sudo with a lock held.
/// The file is opened O_NOFOLLOW|O_CLOEXEC and checked (regular, root's, not writable by
/// others) on the open descriptor; Store.trustProblem checks it with the store's other files.
final class LockFile {
    let path: String
    private let file: OwnedDescriptor
    private var fd: FileDescriptor { file.descriptor }

    /// The write queue's byte.
    static let writeQueueByte: Int64 = 0

    private init(path: String, file: consuming OwnedDescriptor) { self.path = path; self.file = file }

    /// Opens the lock file, creating it (0600) when `create` is set and it is missing.
    static func open(_ path: String, create: Bool) throws(StoreFailure) -> LockFile {
        let options: FileDescriptor.OpenOptions = [.noFollow, .noControllingTerminal]
        let file: OwnedDescriptor
        do throws(Errno) {
            do throws(Errno) {
                file = try FileDescriptor.open(path, .readWrite, options: options)
            } catch where error.code == .noSuchFileOrDirectory && create {
                do throws(Errno) {
                    let created = try FileDescriptor.open(path, .readWrite, options: options.union([.create, .exclusive]), permissions: 0o600)
                    try? created.descriptor.changePermissions(0o600)
                    file = created
                } catch where error.code == .fileExists {
                    file = try FileDescriptor.open(path, .readWrite, options: options)
                }
            }
        } catch {
            if error.code == .tooManySymbolicLinks { throw StoreFailure(FileTrustProblem.symlink(path).description) }
            throw StoreFailure("cannot open \(path)", error)
        }
        let st: FileStatus
        do throws(Errno) { st = try file.descriptor.status() } catch { throw StoreFailure("cannot check \(path)", error) }
        if let problem = TrustedFiles.checkOpened(path, st) { throw StoreFailure(problem.description) }
        return LockFile(path: path, file: file)
    }

    /// The byte that stands for `user`'s passcode checks: 1 + the low 62 bits of the name's
    /// FNV-1a hash.
    static func byte(forUser user: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in user.utf8 { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return 1 + Int64(hash & 0x3fff_ffff_ffff_ffff)
    }

    /// Takes the exclusive lock on `byte`, waiting until `deadline` at most: true when held,
    /// false when the deadline passed first. Throws when the lock cannot be taken at all.
    func lock(byte: Int64, until deadline: Deadline, clock: Clock) throws(StoreFailure) -> Bool {
        while true {
            do throws(Errno) {
                if try fd.setOpenFileDescriptionLock(.exclusive, start: byte, length: 1) { return true }
            } catch {
                throw StoreFailure("cannot lock \(path)", error)
            }
            let left = deadline.remaining(clock: clock)
            if left == 0 { return false }
            LockFile.pause(left: left)
        }
    }

    func unlock(byte: Int64) {
        _ = try? fd.setOpenFileDescriptionLock(.unlock, start: byte, length: 1)
    }

    /// Takes a shared lock on `byte` (marks an attempt in flight). Nobody takes `byte` exclusively,
    /// so it never waits.
    func share(byte: Int64) throws(StoreFailure) {
        let held: Bool
        do throws(Errno) { held = try fd.setOpenFileDescriptionLock(.shared, start: byte, length: 1) } catch {
            throw StoreFailure("cannot lock \(path)", error)
        }
        if !held { throw StoreFailure("cannot lock \(path)", Errno(.wouldBlock, call: "fcntl(F_OFD_SETLK)")) }
    }

    /// Whether another open of the file holds any lock on `byte`.
    func heldByOthers(byte: Int64) throws(StoreFailure) -> Bool {
        do throws(Errno) {
            return try fd.openFileDescriptionLockHeldByOthers(.exclusive, start: byte, length: 1)
        } catch {
            throw StoreFailure("cannot test the locks of \(path)", error)
        }
    }

    /// Waits until no other open of the file holds a lock on `byte`, until `deadline` at most:
    /// true when free, false when the deadline passed first.
    func waitUntilFree(byte: Int64, until deadline: Deadline, clock: Clock) throws(StoreFailure) -> Bool {
        while try heldByOthers(byte: byte) {
            let left = deadline.remaining(clock: clock)
            if left == 0 { return false }
            LockFile.pause(left: left)
        }
        return true
    }

    /// 1-2 ms (less when the deadline is nearer), so that waiters do not retry in step with each other.
    private static func pause(left: Int32) {
        Sleep.nanoseconds(left < 2 ? Int(left) * 1_000_000 : Int.random(in: 1_000_000...2_000_000))
    }
}

/// The descriptor a durable count needs (the WAL's), opened *before* the count is taken: an
/// attempt that could be counted but not made durable -- say with too few descriptors left
/// (RLIMIT_NOFILE) -- would be counted and never checked. Without a WAL (a store another tool
/// switched to a rollback journal) SQLite syncs each commit itself.
///
/// The store's directory is not synced here: the WAL's name in it is durable from its first
/// commit on, because SQLite syncs a new WAL's header before the first frame is written, and its
/// unix VFS syncs the directory with a connection's first sync of a journal it opened. (Syncing
/// the directory again cost one fsync per counted attempt: scripts/bench, bench/RESULTS.md.)
final class SyncTargets {
    private var files: [FileDescriptor] = []
    /// The WAL did not exist yet when these were opened (a connection that has not read yet).
    private var walPath: String?

    init(storePath: String) throws(StoreFailure) {
        let wal = storePath + "-wal"
        do throws(Errno) {
            files.append(try FileDescriptor.open(wal, .readOnly, options: [.noFollow, .noControllingTerminal]).release())
        } catch {
            guard error.code == .noSuchFileOrDirectory else { throw StoreFailure("cannot open \(wal) to sync it", error) }
            walPath = wal
        }
    }

    deinit { for file in files { file.close() } }

    /// fdatasync of each, outside any lock that other writers wait for: the frames and what
    /// reading them back needs (a grown file's size, new blocks).
    func sync() throws(StoreFailure) {
        if let walPath {
            do throws(Errno) {
                files.insert(try FileDescriptor.open(walPath, .readOnly, options: [.noFollow, .noControllingTerminal]).release(), at: 0)
                self.walPath = nil
            } catch where error.code == .noSuchFileOrDirectory {
            } catch {
                throw StoreFailure("cannot open \(walPath) to sync it", error)
            }
        }
        for file in files {
            do throws(Errno) { try file.syncData() } catch { throw StoreFailure("fdatasync", error) }
        }
    }
}
