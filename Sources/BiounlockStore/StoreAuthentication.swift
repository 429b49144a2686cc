import BiounlockSystem
import CSQLite
import BiounlockCore

/// The module's path through the store (AuthStore): a user's row, the failure counts and the
/// passcode-attempt protocol (count before check, wait for attempts in flight), successes and
/// the audit log. Store.swift opens the file; StoreWriteQueue.swift orders the writes.
extension Store {
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
}
