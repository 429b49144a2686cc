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
    private var lockFile: LockFile?
    private var lockFileFailure: StoreFailure?
    /// How deep in write() this connection is (nested writes join the outer transaction).
    private var writeDepth = 0
    /// How deep in reading() this connection is (nested reads join the outer transaction).
    private var readDepth = 0
    /// Set once the queue did not move within its bound: later writes of this transaction use
    /// SQLite's busy timeout alone, so the host waits for a stuck queue once, not once per write.
    private var queueStuck = false
    /// Whether this connection checkpoints a long WAL when it closes (the module's connections:
    /// see keepJournalFiles), and whether it committed a write since it opened.
    private var checkpointsLongWAL = false
    private var wrote = false
    /// Whether readyForWriting has run.
    private var readyToWrite = false
    /// Whether the -shm file is to be marked with this boot's id once this connection's first
    /// transaction has read the store the ordinary way (WALIndexHold.mark).
    private var markIndexAfterFirstRead = false
    /// Whether this connection holds SQLite's WAL index from the last transaction (WALIndexHold).
    private(set) var indexHeld = false
    /// This boot's id (read once per process).
    static let bootID: [UInt8]? = SessionProbe.currentBootID.map { Array($0.utf8) }
    /// What requireCurrentSchema found on this connection: nil before it looked, success for
    /// the current version, or why it refuses the store.
    private var schema: Result<Void, StoreFailure>?
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
    /// about 1.5 us a frame (scripts/bench, wal-recovery). The WAL file keeps its length when it
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

    // MARK: AuthStore (the module's path)

    public func loadUser(_ name: String, withTemplates: Bool) throws(StoreFailure) -> UserRecord? {
        try reading { () throws(StoreFailure) -> UserRecord? in
            try requireCurrentSchema()
            let users = try connection.prepare("""
                SELECT enabled, passcode_hash, passcode_kind, bio_failures, passcode_failures, last_success, last_failure,
                       bio_failure_at, passcode_failure_at, passcode_success_at, passcode_boot_id,
                       passcode_enrolment_version, enrolment_version, uid, fprintd_prints, password_boot_id
                FROM users WHERE name = ?
                """).bind([.text(name)])
            guard try users.step() else { return nil }
            let row = Row(handle: users.handle)
            var record = UserRecord(name: name)
            record.enabled = (row.int(0) ?? 0) != 0
            if let hash = row.text(1), let kind = row.text(2).flatMap(PasscodeKind.init(rawValue:)) {
                record.passcode = StoredPasscode(hash: hash, kind: kind)
            }
            record.biometricFailures = Int(clamping: row.int(3) ?? 0)
            record.passcodeFailures = Int(clamping: row.int(4) ?? 0)
            record.lastSuccess = row.int(5)
            record.lastFailure = row.int(6)
            record.biometricFailureAt = row.int(7)
            record.passcodeFailureAt = row.int(8)
            record.passcodeSuccessAt = row.int(9)
            record.passcodeBootID = row.text(10)
            record.passcodeEnrolmentVersion = row.int(11)
            record.enrolmentVersion = row.int(12) ?? 0
            // A value that is no uid (a damaged row) binds the row to no account.
            record.uid = row.int(13).flatMap { UInt32(exactly: $0) }
            record.fprintdPrints = row.text(14)
            record.passwordBootID = row.text(15)

            let overrides = try connection.prepare("SELECT service, enabled FROM service_overrides WHERE user = ?").bind([.text(name)])
            for (service, enabled) in try overrides.rows({ r -> (String, Bool)? in
                guard let s = r.text(0), let e = r.int(1) else { return nil }
                return (s, e != 0)
            }) {
                record.serviceOverrides[service] = enabled
            }
            if withTemplates {
                record.templates = try templates(user: name)
                record.faceTemplates = try faceTemplates(user: name)
            }
            return record
        }
    }

    public func recordBiometricFailure(user: String, at time: Int64) throws(StoreFailure) -> Int {
        // One statement, so concurrent transactions each add exactly one (and see their own count).
        try countedDurably("""
            INSERT INTO users(name, bio_failures, bio_failure_at, last_failure, created) VALUES (?1, 1, ?2, ?2, ?2)
            ON CONFLICT(name) DO UPDATE SET bio_failures = bio_failures + 1, bio_failure_at = ?2, last_failure = ?2
            RETURNING bio_failures
            """, user: user, time: time)
    }

    public func recordPasscodeFailure(user: String, at time: Int64) throws(StoreFailure) -> Int {
        try countedDurably("""
            INSERT INTO users(name, passcode_failures, passcode_failure_at, last_failure, created) VALUES (?1, 1, ?2, ?2, ?2)
            ON CONFLICT(name) DO UPDATE SET passcode_failures = passcode_failures + 1, passcode_failure_at = ?2, last_failure = ?2
            RETURNING passcode_failures
            """, user: user, time: time)
    }

    /// What reserve() found in the write transaction.
    enum Reservation {
        /// Counted: `failures` now; the counter and clock before, to take the count back.
        case counted(failures: Int, before: (failures: Int64?, at: Int64?))
        /// Locked; `inFlight`: other attempts of the user are still being checked (one of them
        /// may be right and lift it).
        case locked(until: Int64?, inFlight: Bool)
        case noRecord
    }

    /// Counts one passcode attempt unless the lockout runs, deciding with Lockouts (the one
    /// implementation of the waits) on the row as it is inside the write transaction -- so no
    /// attempt made at the same time by another process can slip between the test and the count.
    /// With `inFlight` (the lock file and the user's byte), a counted attempt is marked in flight
    /// before its count is committed, and a refusal says whether others are in flight; both are
    /// decided under the write lock, so no attempt's count or result lands in between.
    func reserve(user: String, at time: Int64, threshold: Int, inFlight: (lock: LockFile, byte: Int64)?) throws(StoreFailure) -> Reservation {
        try write { () throws(StoreFailure) -> Reservation in
            let failures: Int64?, failureAt: Int64?
            do {
                let read = try connection.prepare("SELECT passcode_failures, passcode_failure_at FROM users WHERE name = ?").bind([.text(user)])
                guard try read.step() else { return .noRecord }
                let row = Row(handle: read.handle)
                failures = row.int(0)
                failureAt = row.int(1)
            }
            // Read as loadUser reads them, so that `biounlock status` says what this decides.
            let count = Int(clamping: failures ?? 0)
            if case .locked(let until) = Lockouts.passcode(failures: count, failureAt: failureAt, threshold: threshold, now: time) {
                let others = try inFlight.map { (lock, byte) throws(StoreFailure) in try lock.heldByOthers(byte: byte) } ?? false
                return .locked(until: until, inFlight: others)
            }
            if let (lock, byte) = inFlight { try lock.share(byte: byte) }
            let next = count == Int.max ? count : count + 1
            try connection.prepare("UPDATE users SET passcode_failures = ?2, passcode_failure_at = ?3 WHERE name = ?1")
                .bind([.text(user), .int(next), .int(time)]).run()
            return .counted(failures: next, before: (failures, failureAt))
        }
    }

    /// Takes back a count that could not be made durable (its attempt is not checked).
    func undo(user: String, before: (failures: Int64?, at: Int64?)) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("UPDATE users SET passcode_failures = ?2, passcode_failure_at = ?3 WHERE name = ?1")
                .bind([.text(user), .optional(before.failures), .optional(before.at)]).run()
        }
    }

    public func reservePasscodeAttempt(user: String, at time: Int64, threshold: Int) throws(StoreFailure) -> Bool {
        // Counted and never checked (too long to be the passcode): its result is the count itself,
        // so it is not in flight; it still waits for attempts in flight before it is refused.
        let lock = try openLockFile()
        let byte = LockFile.byte(forUser: user)
        let deadline = Deadline.after(milliseconds: passcodeLockWait, clock: clock)
        while true {
            let sync = try SyncTargets(storePath: path)
            switch try reserve(user: user, at: time, threshold: threshold, inFlight: nil) {
            case .counted(_, let before):
                try makeDurable(sync, user: user, before: before)
                return true
            case .locked where try lock.heldByOthers(byte: byte):
                guard try lock.waitUntilFree(byte: byte, until: deadline, clock: clock) else { throw stillInFlight(user) }
            case .locked, .noRecord:
                return false
            }
        }
    }

    /// Syncs a count before its attempt is checked (see "Nobody waits on someone else's fsync");
    /// a count that cannot be made durable is taken back: either the attempt is counted and
    /// checked, or neither.
    func makeDurable(_ sync: SyncTargets, user: String, before: (failures: Int64?, at: Int64?)) throws(StoreFailure) {
        do { try sync.sync() } catch {
            do { try undo(user: user, before: before) } catch {
                throw StoreFailure("\(error); the attempt stays counted and is not checked")
            }
            throw error
        }
    }

    public func passcodeAttemptsInFlight(user: String) -> Bool {
        // Without the lock file no attempt can be made at all (attemptPasscode throws).
        guard let lock = try? openLockFile() else { return false }
        return (try? lock.heldByOthers(byte: LockFile.byte(forUser: user))) ?? false
    }

    func stillInFlight(_ user: String) -> StoreFailure {
        StoreFailure("other passcode attempts of \(sanitizedForLog(user)) were still being checked after \(passcodeLockWait) ms")
    }

    public func attemptPasscode(user: String, threshold: Int, clock: Clock, bootID: String,
                                onAccepted: () -> Void, check: () -> Bool) throws(StoreFailure) -> PasscodeAttempt {
        let lock = try openLockFile()
        let byte = LockFile.byte(forUser: user)
        let deadline = Deadline.after(milliseconds: passcodeLockWait, clock: clock)
        // In flight from the count to the result: whoever finds the lockout reached meanwhile waits
        // for this attempt's result instead of being refused.
        var marked = false
        defer { if marked { lock.unlock(byte: byte) } }
        let failures: Int
        while true {
            // Opened before the count: with no descriptor left for the sync, nothing is counted.
            let sync = try SyncTargets(storePath: path)
            let reservation: Reservation
            do { reservation = try reserve(user: user, at: clock.now(), threshold: threshold, inFlight: (lock, byte)) } catch {
                lock.unlock(byte: byte) // marked in a transaction that did not commit
                throw error
            }
            switch reservation {
            case .noRecord:
                throw StoreFailure("\(sanitizedForLog(user)) has no record in \(path)")
            case .locked(_, inFlight: true):
                guard try lock.waitUntilFree(byte: byte, until: deadline, clock: clock) else { throw stillInFlight(user) }
                continue
            case .locked(let until, inFlight: false):
                return .locked(until: until)
            case .counted(let n, let before):
                marked = true
                try makeDurable(sync, user: user, before: before)
                failures = n
            }
            break
        }
        if check() {
            // Cleared before the attempt leaves flight, so that those waiting for it see it; what
            // onAccepted writes (the audit row) joins this commit, or is rolled back with it.
            do throws(StoreFailure) {
                try write { () throws(StoreFailure) in
                    try recordSuccess(user: user, method: .passcode, at: clock.now(), bootID: bootID)
                    onAccepted()
                }
            } catch {
                return .accepted(resetFailure: error)
            }
            return .accepted(resetFailure: nil)
        }
        do throws(StoreFailure) { try recordLastFailure(user: user, at: clock.now()) } catch {
            return .rejected(failures: failures, writeFailure: error)
        }
        return .rejected(failures: failures, writeFailure: nil)
    }

    public func recordLastFailure(user: String, at time: Int64) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("UPDATE users SET last_failure = ?2 WHERE name = ?1").bind([.text(user), .int(time)]).run()
        }
    }

    /// Runs one counter update and returns the new count once it is on disk.
    func countedDurably(_ sql: String, user: String, time: Int64) throws(StoreFailure) -> Int {
        // Opened first: with no descriptor left for the sync, nothing is counted (see SyncTargets).
        let sync = try SyncTargets(storePath: path)
        let count = try write { () throws(StoreFailure) -> Int in
            let stmt = try connection.prepare(sql).bind([.text(user), .int(time)])
            guard try stmt.step() else { throw StoreFailure("counter update returned no row") }
            let count = Int(clamping: Row(handle: stmt.handle).int(0) ?? 0)
            try stmt.run()
            return count
        }
        try sync.sync()
        return count
    }

    // MARK: the write queue

    /// The lock file, opened on first use; made (0600) if it is missing -- in the store's
    /// directory, which only root can write (trustProblem checked it for the module).
    func openLockFile() throws(StoreFailure) -> LockFile {
        if let lockFile { return lockFile }
        if let lockFileFailure { throw lockFileFailure }
        do {
            let opened = try LockFile.open(lockPath, create: true)
            lockFile = opened
            return opened
        } catch {
            lockFileFailure = error
            throw error
        }
    }

    /// Runs `body` as one write transaction (BEGIN IMMEDIATE ... COMMIT), first taking a turn in
    /// biounlock's write queue (LockFile). Writes made inside `body` join this transaction. When
    /// the lock file cannot be used (a read-only mount, no descriptor left) the write goes
    /// straight to SQLite's own lock: the queue makes waiting fair, SQLite makes writing safe.
    func write<T>(_ body: () throws(StoreFailure) -> T) throws(StoreFailure) -> T {
        if writeDepth > 0 { return try body() }
        // A store refused for its version is not even locked (the audit row of that refusal).
        if case .failure(let refusal)? = schema { throw refusal }
        var queued: LockFile?
        if !queueStuck, let queue = try? openLockFile() {
            let deadline = Deadline.after(milliseconds: writeQueueWait, clock: clock)
            switch Result(catching: { () throws(StoreFailure) -> Bool in try queue.lock(byte: LockFile.writeQueueByte, until: deadline, clock: clock) }) {
            case .success(true): queued = queue
            case .success(false):
                queueStuck = true
                throw StoreFailure("the write queue (\(lockPath)) did not move for \(writeQueueWait) ms")
            case .failure: break // fcntl refused (e.g. ENOLCK): SQLite's lock alone
            }
        }
        defer { queued?.unlock(byte: LockFile.writeQueueByte) }
        try readyForWriting()
        writeDepth += 1
        defer { writeDepth -= 1 }
        let result = try connection.transaction(immediate: true) { () throws(StoreFailure) -> T in
            try requireCurrentSchema()
            return try body()
        }
        wrote = true
        afterTransaction()
        return result
    }

    /// After a transaction at the outermost level: the first one has read the store through
    /// SQLite's index the ordinary way, so the -shm file can carry this boot's mark.
    private func afterTransaction() {
        guard markIndexAfterFirstRead else { return }
        markIndexAfterFirstRead = false
        WALIndexHold.mark(storePath: path, key: connection.storeKey, bootID: Store.bootID)
    }

    public func recordSuccess(user: String, method: AuthMethod, at time: Int64, bootID: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            switch method {
            case .password:
                // The Unix password: the passcode rules, and (login_services) the boot's password.
                try connection.prepare("""
                    UPDATE users SET bio_failures = 0, passcode_failures = 0, last_success = ?2, passcode_success_at = ?2,
                                     passcode_boot_id = ?3, password_boot_id = ?3, passcode_enrolment_version = enrolment_version
                    WHERE name = ?1
                    """).bind([.text(user), .int(time), .text(bootID)]).run()
            case .passcode:
                try connection.prepare("""
                    UPDATE users SET bio_failures = 0, passcode_failures = 0, last_success = ?2, passcode_success_at = ?2,
                                     passcode_boot_id = ?3, passcode_enrolment_version = enrolment_version
                    WHERE name = ?1
                    """).bind([.text(user), .int(time), .text(bootID)]).run()
            case .fingerprint, .face, .none:
                try connection.prepare("UPDATE users SET bio_failures = 0, last_success = ?2 WHERE name = ?1")
                    .bind([.text(user), .int(time)]).run()
            }
        }
    }

    public func resetBiometricFailures(user: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("UPDATE users SET bio_failures = 0 WHERE name = ?").bind([.text(user)]).run()
        }
    }

    /// `biounlock reset`: clears the counters (and so the lockouts) an admin names.
    public func resetCounters(user: String, biometric: Bool, passcode: Bool) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            if biometric {
                try connection.prepare("UPDATE users SET bio_failures = 0 WHERE name = ?").bind([.text(user)]).run()
            }
            if passcode {
                try connection.prepare("UPDATE users SET passcode_failures = 0 WHERE name = ?").bind([.text(user)]).run()
            }
        }
    }

    public func inOneTransaction(_ writes: () -> Void) throws(StoreFailure) {
        // No turn in the queue or no write lock in time: the writes are dropped (and the caller
        // logs it) rather than each waiting out the bound again, so the host waits once at most.
        try write { () throws(StoreFailure) in writes() }
    }

    public func appendEvent(_ event: AuditEvent) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("""
                INSERT INTO events(time, user, service, tty, rhost, method, outcome, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).bind([.int(event.time), .text(event.user), .text(event.service), .text(event.tty), .text(event.rhost),
                           .text(event.method.rawValue), .text(event.outcome), .text(event.reason)]).run()
            let id = sqlite3_last_insert_rowid(connection.handle)
            if id % Store.pruneEvery == 0 {
                try pruneEvents(now: event.time, newestID: id)
            }
        }
    }

    /// Deletes events older than the retention or beyond the newest `maxEvents`, among the
    /// oldest `batch`. Ids only grow, so "beyond the newest N" is "id <= newest - N", and rows
    /// are appended with the time of their writing, so the old ones are the first ids: looking
    /// at the oldest `batch` rows alone bounds the work (searching the whole log for the few
    /// matches cost a scan of up to `maxEvents` rows, ~7 ms at 100,000, in every 256th
    /// authentication). A row written while the clock was set back waits behind newer-dated
    /// ones until they go; the `maxEvents` bound still removes it.
    public func pruneEvents(now: Int64, newestID: Int64? = nil, batch: Int = Store.pruneBatch) throws(StoreFailure) {
        let newest = newestID ?? sqlite3_last_insert_rowid(connection.handle)
        let cutoffTime = now &- Int64(retention.maxAgeSeconds)
        let cutoffID = newest &- Int64(retention.maxEvents)
        try write { () throws(StoreFailure) in
            try connection.prepare("""
                DELETE FROM events WHERE id IN
                    (SELECT id FROM (SELECT id, time FROM events ORDER BY id LIMIT ?3) WHERE time < ?1 OR id <= ?2)
                """).bind([.int(cutoffTime), .int(cutoffID), .int(batch)]).run()
        }
    }

    // MARK: administration (the CLI's path)

    public func templates(user: String) throws(StoreFailure) -> [Template] {
        try requireCurrentSchema()
        return try connection.prepare("""
            SELECT finger, sensor, data, driver, device, created FROM templates WHERE user = ? ORDER BY created, finger
            """).bind([.text(user)]).rows { r -> Template? in
            // Rows that do not parse are skipped, never trusted.
            guard let finger = r.text(0).flatMap(Finger.init(name:)),
                  let sensor = r.text(1).flatMap(SensorKind.init(rawValue:)),
                  let data = r.blob(2), !data.isEmpty else { return nil }
            return Template(finger: finger, sensor: sensor, data: data, driver: r.text(3) ?? "",
                            device: r.text(4) ?? "", created: r.int(5) ?? 0)
        }
    }

    /// Every user with a row, sorted by name.
    public func userNames() throws(StoreFailure) -> [String] {
        try requireCurrentSchema()
        return try connection.prepare("SELECT name FROM users ORDER BY name").rows { $0.text(0) }
    }

    /// Every user's record, by name (`biounlock list` and `status`, doctor's account-binding
    /// checks), as one snapshot: read in one transaction, so a write committed meanwhile shows
    /// in all of them or in none.
    public func allUsers() throws(StoreFailure) -> [UserRecord] {
        try reading { () throws(StoreFailure) -> [UserRecord] in
            var out: [UserRecord] = []
            for name in try userNames() {
                if let record = try loadUser(name) { out.append(record) }
            }
            return out
        }
    }

    /// Runs `body` as one read transaction: one snapshot of the store. Reads made inside it join
    /// it, as do reads made inside a write (write()'s transaction).
    func reading<T>(_ body: () throws(StoreFailure) -> T) throws(StoreFailure) -> T {
        if readDepth > 0 || writeDepth > 0 { return try body() }
        readDepth += 1
        defer { readDepth -= 1 }
        let result = try connection.transaction(immediate: false, body)
        afterTransaction()
        return result
    }

    /// Makes `user`'s row if there is none, bound to the account the name has now (rows made by
    /// counting alone, which only tests do, stay unbound and so enable nothing).
    func ensureUser(_ user: String, at time: Int64) throws(StoreFailure) {
        let uid = lookupAccount(user).map { SQLValue.int(Int64($0.uid)) } ?? .null
        try connection.prepare("INSERT OR IGNORE INTO users(name, uid, created) VALUES (?, ?, ?)").bind([.text(user), uid, .int(time)]).run()
    }

    /// `biounlock forget`: removes `user`'s row with its overrides and templates (the audit log
    /// keeps its history). Returns whether there was one.
    @discardableResult
    public func forget(user: String) throws(StoreFailure) -> Bool {
        try write { () throws(StoreFailure) -> Bool in
            try connection.prepare("DELETE FROM service_overrides WHERE user = ?").bind([.text(user)]).run()
            try connection.prepare("DELETE FROM templates WHERE user = ?").bind([.text(user)]).run()
            try connection.prepare("DELETE FROM users WHERE name = ?").bind([.text(user)]).run()
            return connection.changes > 0
        }
    }

    /// Turns biometric unlock on or off for `user`, or for one PAM service when `service` is set.
    public func setEnabled(_ enabled: Bool, user: String, service: String?, at time: Int64) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            if let service {
                try connection.prepare("""
                    INSERT INTO service_overrides(user, service, enabled) VALUES (?, ?, ?)
                    ON CONFLICT(user, service) DO UPDATE SET enabled = excluded.enabled
                    """).bind([.text(user), .text(service), .int(enabled ? 1 : 0)]).run()
            } else {
                try connection.prepare("UPDATE users SET enabled = ? WHERE name = ?").bind([.int(enabled ? 1 : 0), .text(user)]).run()
            }
        }
    }

    /// Stores `template`, replacing the same finger on the same sensor in one transaction.
    public func saveTemplate(_ template: Template, user: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: template.created)
            try connection.prepare("""
                INSERT OR REPLACE INTO templates(user, finger, sensor, driver, device, data, created) VALUES (?, ?, ?, ?, ?, ?, ?)
                """).bind([.text(user), .text(template.finger.name), .text(template.sensor.rawValue), .text(template.driver),
                           .text(template.device), .blob(template.data), .int(template.created)]).run()
            try bumpEnrolmentVersion(user)
        }
    }

    /// Removes one finger (or all when nil); returns how many templates went. The face stays
    /// (`deleteFaceTemplates`, FaceTemplates.swift).
    @discardableResult
    public func deleteTemplates(user: String, finger: Finger?) throws(StoreFailure) -> Int {
        try write { () throws(StoreFailure) -> Int in
            if let finger {
                try connection.prepare("DELETE FROM templates WHERE user = ? AND finger = ?").bind([.text(user), .text(finger.name)]).run()
            } else {
                try connection.prepare("DELETE FROM templates WHERE user = ? AND sensor <> 'face'").bind([.text(user)]).run()
            }
            let removed = connection.changes
            if removed > 0 { try bumpEnrolmentVersion(user) }
            return removed
        }
    }

    /// Records a change of the enrolled set made outside the store (sensor=fprintd: fprintd keeps
    /// the prints, `biounlock enrol`/`unenrol` change them there), so that require_passcode=enrolment
    /// applies as it does to the store's own templates; `fprintdPrints` is the set fprintd holds
    /// afterwards (FprintdPrints' text; nil when it could not be listed: the next look counts as
    /// a change), so that the module does not take this change for another one.
    public func noteEnrolmentChange(user: String, at time: Int64, fprintdPrints: String?) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            try bumpEnrolmentVersion(user)
            try connection.prepare("UPDATE users SET fprintd_prints = ?2 WHERE name = ?1")
                .bind([.text(user), fprintdPrints.map { .text($0) } ?? .null]).run()
        }
    }

    public func noteFprintdPrints(user: String, prints: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("UPDATE users SET fprintd_prints = ?2, enrolment_version = enrolment_version + 1 WHERE name = ?1")
                .bind([.text(user), .text(prints)]).run()
        }
    }

    /// `biounlock enable` under sensor=fprintd: the prints fprintd holds, as the first set
    /// biounlock knows of a user whose prints it never looked at (no enrolment change: the admin
    /// enabling the user vouches for them). Once there is a set, another one is a change
    /// (noteFprintdPrints).
    public func recordFirstFprintdPrints(user: String, prints: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("UPDATE users SET fprintd_prints = ?2 WHERE name = ?1 AND fprintd_prints IS NULL")
                .bind([.text(user), .text(prints)]).run()
        }
    }

    /// Any change of the enrolled set makes the passcode required again (require_passcode=enrolment).
    func bumpEnrolmentVersion(_ user: String) throws(StoreFailure) {
        try connection.prepare("UPDATE users SET enrolment_version = enrolment_version + 1 WHERE name = ?").bind([.text(user)]).run()
    }

    public func setPasscode(_ passcode: StoredPasscode?, user: String, at time: Int64) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            try connection.prepare("UPDATE users SET passcode_hash = ?, passcode_kind = ?, passcode_failures = 0 WHERE name = ?")
                .bind([passcode.map { .text($0.hash) } ?? .null, passcode.map { .text($0.kind.rawValue) } ?? .null, .text(user)]).run()
        }
    }

    /// The newest audit events first, filtered by user, service and time.
    public func recentEvents(user: String? = nil, service: String? = nil, since: Int64? = nil, limit: Int = 50) throws(StoreFailure) -> [AuditEvent] {
        // NULL parameters switch a filter off; the values are always bound, never spliced in.
        try requireCurrentSchema()
        return try connection.prepare("""
            SELECT time, user, service, tty, rhost, method, outcome, reason FROM events
            WHERE (?2 IS NULL OR user = ?2) AND (?3 IS NULL OR service = ?3) AND (?4 IS NULL OR time >= ?4)
            ORDER BY id DESC LIMIT ?1
            """).bind([.int(limit), user.map { .text($0) } ?? .null, service.map { .text($0) } ?? .null, .optional(since)]).rows { r in
            AuditEvent(time: r.int(0) ?? 0, user: r.text(1) ?? "", service: r.text(2) ?? "", tty: r.text(3) ?? "",
                       rhost: r.text(4) ?? "", method: r.text(5).flatMap(AuthMethod.init(rawValue:)) ?? .none,
                       outcome: r.text(6) ?? "", reason: r.text(7) ?? "")
        }
    }
}
