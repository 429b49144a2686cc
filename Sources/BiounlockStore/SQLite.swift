import BiounlockCore
import BiounlockSystem
import CSQLite

/// The one funnel for SQLite result codes: every failing call becomes a `StoreFailure`
/// naming the call and SQLite's message. Bound values never appear in it.
@inline(__always)
func check(_ rc: Int32, _ call: StaticString, _ db: OpaquePointer?) throws(StoreFailure) {
    guard rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE else {
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "code \(rc)"
        throw StoreFailure("\(call) failed: \(message) (\(rc))")
    }
}

/// Owns one sqlite3 connection; closes it in deinit.
final class Connection {
    let handle: OpaquePointer
    /// Frames in the WAL after this connection's last commit, -1 before one (trackWALFrames
    /// makes it: a connection that is never tracked, or whose open fails, has none to free).
    private var walFrames: UnsafeMutablePointer<Int32>?

    /// SQLite's process-wide settings (biounlock_sqlite3_configure, CSQLite/shim.h), made once,
    /// before the first open: no memory statistics, no bulk page-cache allocation per
    /// connection. In the module they apply to the SQLite linked into it
    /// (no one else's); in the CLI to the system's, which nothing else in the process uses. A
    /// process that used SQLite before gets SQLITE_MISUSE and SQLite's defaults, which work the
    /// same, a little slower (interleaved in-process runs: about 0.04 ms per passcode attempt).
    static let configured: Int32 = biounlock_sqlite3_configure()

    /// The store it was opened on, and how many other connections of this process had that
    /// store open when it was (ProcessDescriptors).
    let storeKey: ProcessDescriptors.Key
    let othersOpenInProcess: Int

    init(path: String, flags: Int32) throws(StoreFailure) {
        _ = Connection.configured
        let key = ProcessDescriptors.Key(path)
        let others = ProcessDescriptors.opening(key)
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "code \(rc)"
            if let db { sqlite3_close_v2(db) }
            ProcessDescriptors.closed(key)
            throw StoreFailure("cannot open \(path): \(message)")
        }
        handle = db
        storeKey = key
        othersOpenInProcess = others
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        sqlite3_close_v2(handle)
        walFrames?.deallocate()
        ProcessDescriptors.closed(storeKey)
    }

    /// Keeps `framesInWAL` up to date: SQLite's WAL hook runs after each commit of this
    /// connection with the number of frames the WAL then holds (the valid ones: a WAL that was
    /// started again keeps its length on disk, so the file's size does not say it). It replaces
    /// SQLite's automatic checkpoint, which is the default WAL hook.
    func trackWALFrames() {
        guard walFrames == nil else { return }
        let frames = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        frames.initialize(to: -1)
        walFrames = frames
        sqlite3_wal_hook(handle, { context, _, _, frames in
            context?.assumingMemoryBound(to: Int32.self).pointee = frames
            return SQLITE_OK
        }, frames)
    }

    /// See trackWALFrames; nil before this connection has committed a write.
    var framesInWAL: Int? { walFrames.flatMap { $0.pointee < 0 ? nil : Int($0.pointee) } }

    func execute(_ sql: String) throws(StoreFailure) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), "sqlite3_exec", handle)
    }

    func prepare(_ sql: String) throws(StoreFailure) -> Statement {
        try Statement(self, sql)
    }

    /// Runs `body` in a transaction. IMMEDIATE takes the write lock up front, so two writers
    /// never deadlock upgrading read locks; the busy timeout bounds the wait.
    func transaction<T>(immediate: Bool = true, _ body: () throws(StoreFailure) -> T) throws(StoreFailure) -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
}

/// A prepared statement; finalized in deinit.
final class Statement {
    let connection: Connection
    let handle: OpaquePointer

    init(_ connection: Connection, _ sql: String) throws(StoreFailure) {
        var stmt: OpaquePointer?
        try check(sqlite3_prepare_v2(connection.handle, sql, -1, &stmt, nil), "sqlite3_prepare_v2", connection.handle)
        guard let stmt else { throw StoreFailure("sqlite3_prepare_v2 returned no statement") }
        self.connection = connection
        self.handle = stmt
    }

    deinit { sqlite3_finalize(handle) }

    @discardableResult
    func bind(_ values: [SQLValue]) throws(StoreFailure) -> Statement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .int(let n): rc = sqlite3_bind_int64(handle, index, n)
            case .text(let s):
                rc = s.withCString { biounlock_sqlite3_bind_text(handle, index, $0, Int32(clamping: CString.length($0, maximumLength: Int.max))) }
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { biounlock_sqlite3_bind_blob(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(clamping: $0.count)) }
            }
            try check(rc, "sqlite3_bind", connection.handle)
        }
        return self
    }

    /// Steps once: true when a row is available.
    func step() throws(StoreFailure) -> Bool {
        let rc = sqlite3_step(handle)
        try check(rc, "sqlite3_step", connection.handle)
        return rc == SQLITE_ROW
    }

    /// Steps to completion, ignoring rows.
    func run() throws(StoreFailure) {
        while try step() {}
    }

    /// Collects every row through `read`.
    func rows<T>(_ read: (Row) -> T?) throws(StoreFailure) -> [T] {
        var out: [T] = []
        while try step() {
            if let value = read(Row(handle: handle)) { out.append(value) }
        }
        return out
    }
}

enum SQLValue {
    case null
    case int(Int64)
    case text(String)
    case blob([UInt8])

    static func int(_ n: Int) -> SQLValue { .int(Int64(n)) }
    static func optional(_ n: Int64?) -> SQLValue { n.map { .int($0) } ?? .null }
}

/// Typed, non-trapping access to the current row: a column of the wrong type reads as nil.
struct Row {
    let handle: OpaquePointer

    func int(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_INTEGER ? sqlite3_column_int64(handle, column) : nil
    }

    func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT, let p = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        guard sqlite3_column_type(handle, column) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let p = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: count))
    }
}

/// Which SQLite a program was built against and which one it runs with. pam_biounlock.so links
/// SQLite in (Package.swift, docs/SECURITY.md "SQLite inside the module"), so its SQLite is the
/// one of the libsqlite3-dev that the same build compiled every program against (`built`); the
/// CLI runs with the system's libsqlite3.so (`running`). `biounlock doctor` compares the two for
/// a source install (a package install compares the packages' versions, BiounlockAdmin's
/// InstalledPackages): a system SQLite other than the module's has fixes the module lacks.
public enum SQLiteLibrary {
    public static var built: String { SQLITE_VERSION }
    public static var running: String { sqlite3_libversion().map { String(cString: $0) } ?? "?" }
}
