import BiounlockSystem
import CSQLite
import BiounlockCore

/// One writer at a time across processes (the lock file), bounded waits, nested writes and
/// reads joining the outer transaction.
extension Store {
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
}
