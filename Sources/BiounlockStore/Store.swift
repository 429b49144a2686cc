import CSQLite
import Glibc
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
/// - Waits for locks are bounded by the busy timeout; then the caller falls back.
/// - Nobody waits on someone else's fsync: commits are synchronous=NORMAL (in the WAL, durable
///   against a crash of the process, not yet against power loss), and the one write that must
///   survive a power loss -- a failure count, made before the attempt is checked -- is synced by
///   its writer after the write lock is released (syncCommits). With an fsync inside every
///   commit, 64 concurrent logins on two busy cores queued behind lock holders asleep in fsync
///   for more than the busy timeout (Tests/EndToEnd/load.sh).
public final class Store: AuthStore {
    public enum Mode {
        /// The PAM module: existing store only, exact schema version, trust checks.
        case authenticate
        /// The admin CLI: creates the store if needed and applies migrations.
        case administer
    }

    /// Longest wait for another writer before giving up (the module then falls back).
    public static let busyTimeoutMilliseconds: Int32 = 2000

    let connection: Connection
    public let path: String

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

    private init(connection: Connection, path: String) {
        self.connection = connection
        self.path = path
    }

    public static func open(path: String, mode: Mode) throws(StoreFailure) -> Store {
        switch mode {
        case .authenticate:
            if let problem = trustProblem(path: path) { throw StoreFailure(problem.description) }
        case .administer:
            try createIfMissing(path: path)
        }
        let connection = try Connection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX)
        try check(sqlite3_busy_timeout(connection.handle, busyTimeoutMilliseconds), "sqlite3_busy_timeout", connection.handle)
        try connection.execute("PRAGMA foreign_keys = ON")
        try connection.execute("PRAGMA synchronous = NORMAL") // see "Nobody waits on someone else's fsync" above
        let store = Store(connection: connection, path: path)
        let version = try store.schemaVersion()
        switch mode {
        case .authenticate:
            try store.keepJournalFiles()
            if version > Schema.currentVersion {
                throw StoreFailure("\(path) has schema version \(version), newer than this module (\(Schema.currentVersion)); upgrade biounlock")
            }
            if version < Schema.currentVersion {
                throw StoreFailure("\(path) has schema version \(version), older than this module (\(Schema.currentVersion)); run 'biounlock status' as root to migrate it")
            }
        case .administer:
            try store.migrate(from: version)
        }
        return store
    }

    /// The module's connection keeps the -wal and -shm files when it closes (the last connection
    /// to close would otherwise delete them, so every sudo created and deleted two files), and
    /// truncates the WAL to zero bytes once its close-time checkpoint has completed (so the next
    /// process has no log to replay). Durability is unchanged: commits still sync as before.
    func keepJournalFiles() throws(StoreFailure) {
        var persist: Int32 = 1
        try check(sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist),
                  "sqlite3_file_control", connection.handle)
        try connection.execute("PRAGMA journal_size_limit = 0")
    }

    /// Why the module must not use the store at `path`, or nil when it may.
    public static func trustProblem(path: String) -> FileTrustProblem? {
        if let problem = TrustedFiles.checkFile(path) { return problem }
        for suffix in ["-wal", "-shm", "-journal"] {
            let side = path + suffix
            switch TrustedFiles.checkFile(side) {
            case nil, .missing?: continue
            case let problem?: return problem
            }
        }
        return nil
    }

    static func createIfMissing(path: String) throws(StoreFailure) {
        let directory = TrustedFiles.parentDirectory(of: path)
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw StoreFailure("cannot create \(directory): \(errnoDescription(errno))")
        }
        if let problem = TrustedFiles.checkDirectory(directory) { throw StoreFailure(problem.description) }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 {
            fchmod(fd, 0o600)
            close(fd)
        } else if errno != EEXIST {
            throw StoreFailure("cannot create \(path): \(errnoDescription(errno))")
        }
        if let problem = TrustedFiles.checkFile(path) { throw StoreFailure(problem.description) }
    }

    func schemaVersion() throws(StoreFailure) -> Int {
        let stmt = try connection.prepare("PRAGMA user_version")
        guard try stmt.step() else { return 0 }
        return Int(Row(handle: stmt.handle).int(0) ?? 0)
    }

    func migrate(from version: Int) throws(StoreFailure) {
        guard version <= Schema.currentVersion else {
            throw StoreFailure("\(path) has schema version \(version), newer than this biounlock (\(Schema.currentVersion)); upgrade biounlock")
        }
        if version == 0 {
            // WAL lets authentications read while the CLI writes; persistent in the file.
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        for index in version..<Schema.currentVersion {
            try connection.transaction { () throws(StoreFailure) in
                // Re-read inside the write lock: another process may have migrated meanwhile.
                guard try schemaVersion() == index else { return }
                try connection.execute(Schema.migrations[index])
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    // MARK: AuthStore (the module's path)

    public func loadUser(_ name: String) throws(StoreFailure) -> UserRecord? {
        try connection.transaction(immediate: false) { () throws(StoreFailure) -> UserRecord? in
            let users = try connection.prepare("""
                SELECT enabled, passcode_hash, passcode_kind, bio_failures, passcode_failures, last_success, last_failure,
                       bio_failure_at, passcode_failure_at, passcode_success_at, passcode_boot_id,
                       passcode_enrolment_version, enrolment_version
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

            let overrides = try connection.prepare("SELECT service, enabled FROM service_overrides WHERE user = ?").bind([.text(name)])
            for (service, enabled) in try overrides.rows({ r -> (String, Bool)? in
                guard let s = r.text(0), let e = r.int(1) else { return nil }
                return (s, e != 0)
            }) {
                record.serviceOverrides[service] = enabled
            }
            record.templates = try templates(user: name)
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

    public func reservePasscodeAttempt(user: String, at time: Int64, threshold: Int) throws(StoreFailure) -> Bool {
        // The lockout test is Lockouts.passcode, written in SQL so it is decided in the same
        // statement that counts: wait n (1, 5, 15, 60 min...) after the threshold-th failure.
        let waits = Lockouts.passcodeWaits
        let stmt = try connection.prepare("""
            UPDATE users SET passcode_failures = passcode_failures + 1, passcode_failure_at = ?2
            WHERE name = ?1 AND NOT (passcode_failures >= ?3 AND COALESCE(passcode_failure_at, 0) +
                CASE passcode_failures - ?3 WHEN 0 THEN ?4 WHEN 1 THEN ?5 WHEN 2 THEN ?6 ELSE ?7 END > ?2)
            RETURNING passcode_failures
            """).bind([.text(user), .int(time), .int(threshold), .int(waits[0]), .int(waits[1]), .int(waits[2]), .int(waits[3])])
        let reserved = try stmt.step()
        try stmt.run()
        // The count must survive a power cut before the guess is checked (see syncCommits).
        if reserved { try syncCommits() }
        return reserved
    }

    public func recordLastFailure(user: String, at time: Int64) throws(StoreFailure) {
        try connection.prepare("UPDATE users SET last_failure = ?2 WHERE name = ?1").bind([.text(user), .int(time)]).run()
    }

    /// Runs one counter update and returns the new count once it is on disk.
    func countedDurably(_ sql: String, user: String, time: Int64) throws(StoreFailure) -> Int {
        let count: Int
        do {
            let stmt = try connection.prepare(sql).bind([.text(user), .int(time)])
            guard try stmt.step() else { throw StoreFailure("counter update returned no row") }
            count = Int(clamping: Row(handle: stmt.handle).int(0) ?? 0)
            try stmt.run()
        }
        try syncCommits()
        return count
    }

    /// Makes every commit so far durable: fsync of the WAL and of its directory (the WAL may have
    /// just been created), outside any SQLite lock. Without a WAL (a store another tool switched
    /// to a rollback journal) SQLite has synced the commit itself.
    func syncCommits() throws(StoreFailure) {
        for (file, flags) in [(path + "-wal", O_RDONLY), (TrustedFiles.parentDirectory(of: path), O_RDONLY | O_DIRECTORY)] {
            let fd = Glibc.open(file, flags | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 {
                if errno == ENOENT { return }
                throw StoreFailure("cannot open \(file) to sync it: \(errnoDescription(errno))")
            }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw StoreFailure("fsync \(file): \(errnoDescription(errno))") }
        }
    }

    public func recordSuccess(user: String, method: AuthMethod, at time: Int64, bootID: String) throws(StoreFailure) {
        switch method {
        case .passcode, .password:
            try connection.prepare("""
                UPDATE users SET bio_failures = 0, passcode_failures = 0, last_success = ?2, passcode_success_at = ?2,
                                 passcode_boot_id = ?3, passcode_enrolment_version = enrolment_version
                WHERE name = ?1
                """).bind([.text(user), .int(time), .text(bootID)]).run()
        case .fingerprint, .none:
            try connection.prepare("UPDATE users SET bio_failures = 0, last_success = ?2 WHERE name = ?1")
                .bind([.text(user), .int(time)]).run()
        }
    }

    public func resetBiometricFailures(user: String) throws(StoreFailure) {
        try connection.prepare("UPDATE users SET bio_failures = 0 WHERE name = ?").bind([.text(user)]).run()
    }

    /// `biounlock reset`: clears the counters (and so the lockouts) an admin names.
    public func resetCounters(user: String, biometric: Bool, passcode: Bool) throws(StoreFailure) {
        if biometric {
            try connection.prepare("UPDATE users SET bio_failures = 0 WHERE name = ?").bind([.text(user)]).run()
        }
        if passcode {
            try connection.prepare("UPDATE users SET passcode_failures = 0 WHERE name = ?").bind([.text(user)]).run()
        }
    }

    public func inOneTransaction(_ writes: () -> Void) throws(StoreFailure) {
        // No write lock within the busy timeout: the writes are dropped (and the caller logs it)
        // rather than each waiting out the timeout again, so the host waits one timeout at most.
        try connection.execute("BEGIN IMMEDIATE")
        writes()
        do {
            try connection.execute("COMMIT")
        } catch {
            _ = sqlite3_exec(connection.handle, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    public func appendEvent(_ event: AuditEvent) throws(StoreFailure) {
        try connection.prepare("""
            INSERT INTO events(time, user, service, tty, rhost, method, outcome, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """).bind([.int(event.time), .text(event.user), .text(event.service), .text(event.tty), .text(event.rhost),
                       .text(event.method.rawValue), .text(event.outcome), .text(event.reason)]).run()
        let id = sqlite3_last_insert_rowid(connection.handle)
        if id % Store.pruneEvery == 0 {
            try pruneEvents(now: event.time, newestID: id)
        }
    }

    /// Deletes (at most `pruneBatch`) events older than the retention or beyond the newest
    /// `maxEvents`. Ids only grow, so "beyond the newest N" is "id <= newest - N".
    public func pruneEvents(now: Int64, newestID: Int64? = nil, batch: Int = Store.pruneBatch) throws(StoreFailure) {
        let newest = newestID ?? sqlite3_last_insert_rowid(connection.handle)
        let cutoffTime = now &- Int64(retention.maxAgeSeconds)
        let cutoffID = newest &- Int64(retention.maxEvents)
        try connection.prepare("""
            DELETE FROM events WHERE id IN (SELECT id FROM events WHERE time < ?1 OR id <= ?2 ORDER BY id LIMIT ?3)
            """).bind([.int(cutoffTime), .int(cutoffID), .int(batch)]).run()
    }

    // MARK: administration (the CLI's path)

    func templates(user: String) throws(StoreFailure) -> [Template] {
        try connection.prepare("""
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
        try connection.prepare("SELECT name FROM users ORDER BY name").rows { $0.text(0) }
    }

    func ensureUser(_ user: String, at time: Int64) throws(StoreFailure) {
        try connection.prepare("INSERT OR IGNORE INTO users(name, created) VALUES (?, ?)").bind([.text(user), .int(time)]).run()
    }

    /// Turns biometric unlock on or off for `user`, or for one PAM service when `service` is set.
    public func setEnabled(_ enabled: Bool, user: String, service: String?, at time: Int64) throws(StoreFailure) {
        try connection.transaction { () throws(StoreFailure) in
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
        try connection.transaction { () throws(StoreFailure) in
            try ensureUser(user, at: template.created)
            try connection.prepare("""
                INSERT OR REPLACE INTO templates(user, finger, sensor, driver, device, data, created) VALUES (?, ?, ?, ?, ?, ?, ?)
                """).bind([.text(user), .text(template.finger.name), .text(template.sensor.rawValue), .text(template.driver),
                           .text(template.device), .blob(template.data), .int(template.created)]).run()
            try bumpEnrolmentVersion(user)
        }
    }

    /// Removes one finger (or all when nil); returns how many templates went.
    @discardableResult
    public func deleteTemplates(user: String, finger: Finger?) throws(StoreFailure) -> Int {
        try connection.transaction { () throws(StoreFailure) -> Int in
            if let finger {
                try connection.prepare("DELETE FROM templates WHERE user = ? AND finger = ?").bind([.text(user), .text(finger.name)]).run()
            } else {
                try connection.prepare("DELETE FROM templates WHERE user = ?").bind([.text(user)]).run()
            }
            let removed = connection.changes
            if removed > 0 { try bumpEnrolmentVersion(user) }
            return removed
        }
    }

    /// Records a change of the enrolled set made outside the store (sensor=fprintd: fprintd keeps
    /// the prints, `biounlock enrol`/`unenrol` change them there), so that require_passcode=enrolment
    /// applies as it does to the store's own templates.
    public func noteEnrolmentChange(user: String, at time: Int64) throws(StoreFailure) {
        try connection.transaction { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            try bumpEnrolmentVersion(user)
        }
    }

    /// Any change of the enrolled set makes the passcode required again (require_passcode=enrolment).
    func bumpEnrolmentVersion(_ user: String) throws(StoreFailure) {
        try connection.prepare("UPDATE users SET enrolment_version = enrolment_version + 1 WHERE name = ?").bind([.text(user)]).run()
    }

    public func setPasscode(_ passcode: StoredPasscode?, user: String, at time: Int64) throws(StoreFailure) {
        try connection.transaction { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            try connection.prepare("UPDATE users SET passcode_hash = ?, passcode_kind = ?, passcode_failures = 0 WHERE name = ?")
                .bind([passcode.map { .text($0.hash) } ?? .null, passcode.map { .text($0.kind.rawValue) } ?? .null, .text(user)]).run()
        }
    }

    /// The newest audit events first, filtered by user, service and time.
    public func recentEvents(user: String? = nil, service: String? = nil, since: Int64? = nil, limit: Int = 50) throws(StoreFailure) -> [AuditEvent] {
        // NULL parameters switch a filter off; the values are always bound, never spliced in.
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
