import BiounlockSystem
import CSystem
import Glibc
import BiounlockCore

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
    let fd: Int32

    /// The write queue's byte.
    static let writeQueueByte: Int64 = 0

    private init(path: String, fd: Int32) { self.path = path; self.fd = fd }
    deinit { close(fd) }

    /// Opens the lock file, creating it (0600) when `create` is set and it is missing.
    static func open(_ path: String, create: Bool) throws(StoreFailure) -> LockFile {
        var fd = Glibc.open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY)
        if fd < 0 && errno == ENOENT && create {
            fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0o600)
            if fd >= 0 { fchmod(fd, 0o600) }
            else if errno == EEXIST { fd = Glibc.open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY) }
        }
        guard fd >= 0 else {
            let e = errno
            if e == ELOOP { throw StoreFailure(FileTrustProblem.symlink(path).description) }
            throw StoreFailure("cannot open \(path): \(errnoDescription(e))")
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw StoreFailure("cannot check \(path): \(errnoDescription(e))")
        }
        let problem: FileTrustProblem?
        if (st.st_mode & S_IFMT) != S_IFREG { problem = .notRegularFile(path) }
        else if st.st_uid != trustedOwner { problem = .wrongOwner(path, uid: st.st_uid) }
        else if st.st_mode & (S_IWGRP | S_IWOTH) != 0 { problem = .writableByOthers(path, mode: st.st_mode) }
        else { problem = nil }
        if let problem {
            close(fd)
            throw StoreFailure(problem.description)
        }
        return LockFile(path: path, fd: fd)
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
            if biounlock_ofd_setlk(fd, Int32(F_WRLCK), byte, 1) == 0 { return true }
            let e = errno
            if e == EINTR { continue }
            guard e == EAGAIN || e == EACCES else {
                throw StoreFailure("cannot lock \(path): \(errnoDescription(e))")
            }
            let left = deadline.remaining(clock: clock)
            if left == 0 { return false }
            // 1-2 ms, so that waiters do not retry in step with each other.
            var pause = timespec(tv_sec: 0, tv_nsec: Int.random(in: 1_000_000...2_000_000))
            if Int(left) < 2 { pause.tv_nsec = Int(left) * 1_000_000 }
            _ = nanosleep(&pause, nil)
        }
    }

    func unlock(byte: Int64) {
        _ = biounlock_ofd_setlk(fd, Int32(F_UNLCK), byte, 1)
    }

    /// Takes a shared lock on `byte` (marks an attempt in flight). Nobody takes `byte` exclusively,
    /// so it never waits.
    func share(byte: Int64) throws(StoreFailure) {
        while biounlock_ofd_setlk(fd, Int32(F_RDLCK), byte, 1) != 0 {
            let e = errno
            if e == EINTR { continue }
            throw StoreFailure("cannot lock \(path): \(errnoDescription(e))")
        }
    }

    /// Whether another open of the file holds any lock on `byte`.
    func heldByOthers(byte: Int64) throws(StoreFailure) -> Bool {
        while true {
            switch biounlock_ofd_held_by_others(fd, Int32(F_WRLCK), byte, 1) {
            case 0: return false
            case 1: return true
            default:
                let e = errno
                if e == EINTR { continue }
                throw StoreFailure("cannot test the locks of \(path): \(errnoDescription(e))")
            }
        }
    }

    /// Waits until no other open of the file holds a lock on `byte`, until `deadline` at most:
    /// true when free, false when the deadline passed first.
    func waitUntilFree(byte: Int64, until deadline: Deadline, clock: Clock) throws(StoreFailure) -> Bool {
        while try heldByOthers(byte: byte) {
            let left = deadline.remaining(clock: clock)
            if left == 0 { return false }
            var pause = timespec(tv_sec: 0, tv_nsec: Int.random(in: 1_000_000...2_000_000))
            if Int(left) < 2 { pause.tv_nsec = Int(left) * 1_000_000 }
            _ = nanosleep(&pause, nil)
        }
        return true
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
    private var fds: [Int32] = []
    /// The WAL did not exist yet when these were opened (a connection that has not read yet).
    private var walPath: String?

    init(storePath: String) throws(StoreFailure) {
        let wal = storePath + "-wal"
        for (file, flags) in [(wal, O_RDONLY)] {
            let fd = Glibc.open(file, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY)
            if fd < 0 {
                let e = errno
                if e == ENOENT && file == wal { walPath = wal; continue }
                for open in fds { close(open) }
                fds = []
                throw StoreFailure("cannot open \(file) to sync it: \(errnoDescription(e))")
            }
            fds.append(fd)
        }
    }

    deinit { for fd in fds { close(fd) } }

    /// fsync of each, outside any lock that other writers wait for.
    func sync() throws(StoreFailure) {
        if let walPath {
            let fd = Glibc.open(walPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY)
            if fd >= 0 { fds.insert(fd, at: 0); self.walPath = nil }
            else if errno != ENOENT { throw StoreFailure("cannot open \(walPath) to sync it: \(errnoDescription(errno))") }
        }
        for fd in fds {
            guard fsync(fd) == 0 else { throw StoreFailure("fsync: \(errnoDescription(errno))") }
        }
    }
}
