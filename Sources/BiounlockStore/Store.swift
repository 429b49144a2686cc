import BiounlockSystem
import CSQLite
import BiounlockCore

/// The biounlock store: one root-only SQLite file with settings, templates, passcode hashes,
/// counters and the audit log.
///
/// Security choices:
/// - The module opens an existing store only (never creates one), read-write, with
///   SQLITE_OPEN_NOFOLLOW, after checking that the file, its directory and any -wal/-shm/-journal
///   file are root-owned, not group/world-writable and not symlinks. Anything else is
///   "unavailable" (PAM_AUTHINFO_UNAVAIL), never success or ignore.
/// - The CLI creates the directory 0700 and the file 0600 with O_EXCL before SQLite touches it, so
///   the caller's umask never decides the mode. SQLite gives -wal/-shm the database file's mode.
/// - Waits for locks are bounded: biounlock's writers queue on the lock file (LockFile, at most
///   writeQueueWaitMilliseconds), SQLite's lock by the busy timeout; then the caller falls back.
/// - An attempt that finds the passcode lockout reached waits for the user's attempts in flight
///   (attemptPasscode), across processes, before it is refused.
/// - Nobody waits on someone else's fsync: commits are synchronous=NORMAL (in the WAL, durable
///   against a crash of the process, not yet against power loss), and the one write that must
///   survive a power loss -- a failure count, made before the attempt is checked -- is synced by
///   its writer after the write lock is released (SyncTargets). With an fsync inside every
///   commit, 64 concurrent logins on two busy cores queued behind lock holders asleep in fsync
///   for more than the busy timeout (Tests/EndToEnd/load.sh). The module's connections do not
///   checkpoint at close or inside a commit; a closing writer checkpoints a long WAL outside
///   biounlock's write queue and without waiting for any lock (keepJournalFiles, checkpointIfLong).
/// - The module's connection uses the WAL index (-shm) the last one left, instead of SQLite
///   rebuilding it for every sudo, only when it was built in this boot and describes the WAL
///   exactly (WALIndexHold: a mark with the boot id, SQLite's checksums, no frame written around
///   it); anything else is SQLite's own first-connection path. Descriptors of the store's files
///   that biounlock opens stay open until the process's last connection closes
///   (ProcessDescriptors): closing one would drop SQLite's POSIX locks.
public final class Store: AuthStore {
    public enum Mode {
        /// The PAM module: existing store only, exact schema version, trust checks.
        case authenticate
        /// The admin CLI: creates the store if needed and applies migrations.
        case administer
    }

    /// Longest wait for SQLite's write lock (held by a writer outside biounlock's queue, such as
    /// the sqlite3 tool) before giving up (the module then falls back).
    public static let busyTimeoutMilliseconds: Int32 = 2000
    /// Longest wait in biounlock's write queue. Longer than the busy timeout: a queue moves as fast
    /// as its writers commit (a few ms each), and at 64 concurrent logins on two cores busy with
    /// Argon2id the last in line can wait more than 2 s for a turn that is sure to come.
    public static let writeQueueWaitMilliseconds: Int64 = 10_000
    /// Longest wait, once the lockout is reached, for the user's attempts in flight, each running
    /// one Argon2id check (about 0.1 s at the shipped cost on an idle core).
    public static let passcodeLockWaitMilliseconds: Int64 = 20_000

    let connection: Connection
    public let path: String
    /// The lock file's path: the store's, plus "-lock".
    public var lockPath: String { path + "-lock" }
    /// Opened on the first write (nil until then, or when it cannot be used).
    var lockFile: LockFile?
    var lockFileFailure: StoreFailure?
    /// How deep in write() this connection is (nested writes join the outer transaction).
    var writeDepth = 0
    /// How deep in reading() this connection is (nested reads join the outer transaction).
    var readDepth = 0
    /// Set once the queue did not move within its bound: later writes of this transaction use
    /// SQLite's busy timeout alone, so the host waits for a stuck queue once, not once per write.
    var queueStuck = false
    /// Whether this connection checkpoints a long WAL when it closes (the module's connections:
    /// see keepJournalFiles), and whether it committed a write since it opened.
    var checkpointsLongWAL = false
    var wrote = false
    /// Whether readyForWriting has run.
    var readyToWrite = false
    /// Whether the -shm file is to be marked with this boot's id once this connection's first
    /// transaction has read the store the ordinary way (WALIndexHold.mark).
    var markIndexAfterFirstRead = false
    /// Whether this connection holds SQLite's WAL index from the last transaction (WALIndexHold).
    private(set) var indexHeld = false
    /// This boot's id (read once per process).
    static let bootID: [UInt8]? = SessionProbe.currentBootID.map { Array($0.utf8) }
    /// What requireCurrentSchema found on this connection: nil before it looked, success for
    /// the current version, or why it refuses the store.
    var schema: Result<Void, StoreFailure>?
    let clock: Clock = SystemClock()
    /// The two bounds, per connection (tests shorten them).
    var writeQueueWait = Store.writeQueueWaitMilliseconds
    var passcodeLockWait = Store.passcodeLockWaitMilliseconds

    /// Audit retention: events older than `maxAgeSeconds` or beyond the newest `maxEvents` go.
    public struct Retention: Sendable {
        public var maxAgeSeconds: Int
        public var maxEvents: Int
        public init(maxAgeSeconds: Int, maxEvents: Int) { self.maxAgeSeconds = maxAgeSeconds; self.maxEvents = maxEvents }
        public init(_ options: Options) { self.init(maxAgeSeconds: options.logRetentionSeconds, maxEvents: options.logMaxEvents) }
    }
    public var retention = Retention(Options())
    /// Pruning runs after one append in this many, and deletes at most `pruneBatch` rows, so no
    /// single authentication pays for a large clean-up.
    static let pruneEvery: Int64 = 256
    public static let pruneBatch = 2000

    /// How the CLI's writes (and the migration that binds old rows) find the account a new row
    /// belongs to; NSS in production, injected in tests.
    let lookupAccount: (String) -> Account?

    private init(connection: Connection, path: String, lookupAccount: @escaping (String) -> Account?) {
        self.connection = connection
        self.path = path
        self.lookupAccount = lookupAccount
    }

    deinit {
        if checkpointsLongWAL && wrote { checkpointIfLong() }
    }

    public static func open(path: String, mode: Mode, lookupAccount: @escaping (String) -> Account? = Accounts.lookup) throws(StoreFailure) -> Store {
        switch mode {
        case .authenticate:
            if let problem = trustProblem(path: path) { throw StoreFailure(problem.description) }
        case .administer:
            try createIfMissing(path: path)
        }
        let connection = try Connection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX)
        try check(sqlite3_busy_timeout(connection.handle, busyTimeoutMilliseconds), "sqlite3_busy_timeout", connection.handle)
        let store = Store(connection: connection, path: path, lookupAccount: lookupAccount)
        // The CLI's connection is made ready to write at once; the module's at its first write
        // (write()), so that a sudo that only reads runs none of these statements.
        if case .administer = mode { try store.readyForWriting() }
        switch mode {
        case .authenticate:
            // The schema version is checked in the connection's first transaction
            // (requireCurrentSchema), with what it reads or writes: a sudo's first read
            // transaction holds the version and the user's row, not the version alone.
            try store.keepJournalFiles()
            // SQLite's WAL index, kept from the last transaction when it can be trusted
            // (WALIndex.swift); another connection of this process shares it already.
            if connection.othersOpenInProcess == 0 {
                let outcome = WALIndexHold.take(storePath: path, key: connection.storeKey, bootID: Store.bootID)
                store.indexHeld = outcome.held
                store.markIndexAfterFirstRead = outcome.markAfterFirstRead
            }
        case .administer:
            // Made here for the module; a lock file that cannot be used (a read-only mount, one that
            // is not root's) leaves the CLI working without the queue, and the module refuses it.
            _ = try? store.openLockFile()
            store.schema = .success(()) // migrate decides on the version itself
            try store.migrate(from: try store.schemaVersion())
        }
        return store
    }

    /// Throws unless the store is at this build's schema version -- nothing is read or written
    /// in a store of another version. Checked once per connection, inside its first transaction
    /// (loadUser, templates, write); the CLI's connection at open, where it migrates.
    func requireCurrentSchema() throws(StoreFailure) {
        if schema == nil {
            let version = try schemaVersion()
            if version > Schema.currentVersion {
                schema = .failure(StoreFailure("\(path) has schema version \(version), newer than this module (\(Schema.currentVersion)); upgrade biounlock"))
            } else if version < Schema.currentVersion {
                schema = .failure(StoreFailure("\(path) has schema version \(version), older than this module (\(Schema.currentVersion)); run 'biounlock status' as root to migrate it"))
            } else {
                schema = .success(())
            }
        }
        if case .failure(let refusal)? = schema { throw refusal }
    }

    /// The store as an authentication opens it -- the module, biounlock-check and `biounlock
    /// verify` alike: `options.storePath`, existing and trusted only (mode .authenticate), with the
    /// configured audit retention. One opener, so the three cannot drift apart.
    public static func openForAuthentication(_ options: Options) -> Result<AuthStore, StoreFailure> {
        Result { () throws(StoreFailure) -> AuthStore in
            let store = try Store.open(path: options.storePath, mode: .authenticate)
            store.retention = Retention(options)
            return store
        }
    }

    /// The module's connection keeps the -wal and -shm files when it closes (the last connection
    /// to close would otherwise delete them, so every sudo created and deleted two files), and
    /// leaves what it wrote in the WAL: no checkpoint at close, none inside a commit (SQLite's
    /// automatic one would sync twice while biounlock's write queue waits), but one when the
    /// connection closes after writing and the WAL holds more than `longWALFrames`
    /// (checkpointIfLong). A checkpoint syncs the WAL, the directory and then the store, and the
    /// WAL started again syncs its header: syncs that every passcode and touch success paid at
    /// close, now paid once per few of them. What it costs instead: a connection that finds no
    /// other one open rebuilds the WAL index from the frames left (every sudo, enrolled or not):
    /// a cost per frame that scripts/bench's wal-recovery case measures (bench/RESULTS.md). The WAL file keeps its length when it
    /// is started again (journal_size_limit `walSizeLimit`), so the frames of later commits
    /// overwrite blocks it has: the sync of a count writes them and no new block (a WAL truncated
    /// to zero and grown again made every count's sync allocate blocks: 0.2 to 0.3 ms of each
    /// passcode attempt in interleaved in-process runs).
    /// Durability: a counted failure is synced before its attempt is checked, as before (that
    /// sync is the WAL's, and covers every frame before it); commits stay synchronous=NORMAL, so
    /// a power cut can drop the last audit rows and success resets (the last few, until a count
    /// or a checkpoint syncs the WAL or the kernel writes it back), never a counted failure.
    func keepJournalFiles() throws(StoreFailure) {
        var persist: Int32 = 1
        try check(sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist),
                  "sqlite3_file_control", connection.handle)
        try check(biounlock_sqlite3_no_checkpoint_on_close(connection.handle, 1), "sqlite3_db_config", connection.handle)
        try check(sqlite3_wal_autocheckpoint(connection.handle, 0), "sqlite3_wal_autocheckpoint", connection.handle)
        connection.trackWALFrames()
        checkpointsLongWAL = true
    }

    /// What a connection needs before it writes: foreign keys enforced, commits that do not sync
    /// (see "Nobody waits on someone else's fsync" above), and -- for the module's connection --
    /// a WAL that keeps its length when it is started again (keepJournalFiles). Outside any
    /// transaction: `foreign_keys` is a no-op inside one.
    func readyForWriting() throws(StoreFailure) {
        guard !readyToWrite else { return }
        try connection.execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL")
        if checkpointsLongWAL { try connection.execute("PRAGMA journal_size_limit = \(Store.walSizeLimit)") }
        readyToWrite = true
    }

    /// A WAL holding more than this many frames (4 KiB pages: a few successes' writes) is
    /// checkpointed by the next module connection that writes, when it closes.
    static let longWALFrames = 24

    /// The most the WAL file is cut back to when it is started again (journal_size_limit): well
    /// above a long WAL, so that it keeps its length; a WAL the CLI grew past it is cut back.
    static let walSizeLimit = 1 << 20

    /// Checkpoints a WAL holding more than `longWALFrames` frames (counted by SQLite's WAL hook:
    /// the file's size says nothing, it keeps its length) and starts it again, so that the next
    /// connection finds one frame to replay. The WAL restarts only at a write: how far a
    /// checkpoint got is kept only in the -shm index, which the next process rebuilds from the
    /// WAL, so a WAL checkpointed but left as it was would look new to it -- copied (and synced)
    /// again by every later closer. So, once every frame is copied (RESTART), one write in this
    /// connection starts it again: the schema version written back as it is read, in one
    /// transaction (a newer biounlock migrating the store meanwhile is never undone). It waits
    /// for no one (busy timeout 0): with another connection reading or writing it gives up
    /// (SQLITE_BUSY) and a later closer does it; frames left in the WAL are as safe as in the store.
    private func checkpointIfLong() {
        guard let frames = connection.framesInWAL, frames > Store.longWALFrames else { return }
        _ = sqlite3_busy_timeout(connection.handle, 0)
        var inWAL: Int32 = 0, copied: Int32 = 0
        guard sqlite3_wal_checkpoint_v2(connection.handle, "main", SQLITE_CHECKPOINT_RESTART, &inWAL, &copied) == SQLITE_OK,
              inWAL == copied else { return }
        _ = try? connection.transaction(immediate: true) { () throws(StoreFailure) in
            try connection.execute("PRAGMA user_version = \(try schemaVersion())")
        }
    }

    /// Why the module must not use the store at `path`, or nil when it may.
    public static func trustProblem(path: String) -> FileTrustProblem? {
        // The directory once: the side files are in it.
        if let problem = TrustedFiles.checkFile(path) { return problem }
        for suffix in ["-wal", "-shm", "-journal", "-lock"] {
            let side = path + suffix
            switch TrustedFiles.checkRegularFile(side) {
            case nil, .missing?: continue
            case let problem?: return problem
            }
        }
        return nil
    }

    static func createIfMissing(path: String) throws(StoreFailure) {
        let directory = TrustedFiles.parentDirectory(of: path)
        do throws(Errno) {
            try FileSystem.makeDirectory(directory, permissions: 0o700)
            // mkdir's mode passes through the umask: a made directory is set to 0700 whatever it is.
            try? FileSystem.changePermissions(directory, 0o700)
        } catch where error.code == .fileExists {
        } catch {
            throw StoreFailure("cannot create \(directory)", error)
        }
        if let problem = TrustedFiles.checkDirectory(directory) { throw StoreFailure(problem.description) }
        do throws(Errno) {
            let created = try FileDescriptor.open(path, .writeOnly, options: [.create, .exclusive, .noFollow], permissions: 0o600)
            try? created.descriptor.changePermissions(0o600)
        } catch where error.code == .fileExists {
        } catch {
            throw StoreFailure("cannot create \(path)", error)
        }
        if let problem = TrustedFiles.checkFile(path) { throw StoreFailure(problem.description) }
    }

    /// The schema version this build writes (and the module requires).
    public static var currentSchemaVersion: Int { Schema.currentVersion }

    /// The store's schema version (`PRAGMA user_version`).
    public func schemaVersion() throws(StoreFailure) -> Int {
        let stmt = try connection.prepare("PRAGMA user_version")
        guard try stmt.step() else { return 0 }
        return Int(Row(handle: stmt.handle).int(0) ?? 0)
    }

    func migrate(from version: Int) throws(StoreFailure) {
        guard version >= 0 else { throw StoreFailure("\(path) has schema version \(version), which no biounlock writes") }
        guard version <= Schema.currentVersion else {
            throw StoreFailure("\(path) has schema version \(version), newer than this biounlock (\(Schema.currentVersion)); upgrade biounlock")
        }
        if version == 0 {
            // WAL lets authentications read while the CLI writes; persistent in the file.
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        guard version < Schema.currentVersion else { return }
        // Every pending step in one transaction: a kill (or a failing step) leaves the version the
        // store had, or the current one, never one in between.
        try write { () throws(StoreFailure) in
            // Re-read inside the write lock: another process may have migrated meanwhile.
            let found = try schemaVersion()
            guard found < Schema.currentVersion else { return }
            guard found >= 0 else { throw StoreFailure("\(path) has schema version \(found), which no biounlock writes") }
            for migration in Schema.migrations[found...] {
                try connection.execute(migration.sql)
                try migration.fill?(connection, lookupAccount)
            }
            try connection.execute("PRAGMA user_version = \(Schema.currentVersion)")
        }
    }
}
