import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockStore
import CSQLite
import Glibc

// Fuzz target: what the module reads back from the store.
//
// Two stores are made once: the real schema (STRICT tables, as the CLI creates it) and the same
// tables without STRICT, as a store written by another tool or a damaged one could hold them
// (any column may then hold any type). Each input picks one, writes fuzzed values into every
// column of a `users` row, some `service_overrides` rows and some `templates` rows for one
// user, and then does what the module and the CLI do with them: Store.loadUser, the lockout
// and passcode-required rules, `biounlock status` (text and JSON), and -- when no expensive
// Argon2id work would follow -- the whole policy chain with a scripted sensor and conversation.
// Nothing may trap, and the chain may only succeed with the finger or passcode it was given.

let user = "daemon"
let fingerID: [UInt8] = Array("daemon-right-index".utf8)
let pin: [UInt8] = Array("2468".utf8)
let userUID: UInt32 = Accounts.lookup(user)?.uid ?? 1

/// A cursor over the input; reads past the end return zeros.
struct Input {
    var bytes: ArraySlice<UInt8>
    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }
    mutating func take(_ n: Int) -> [UInt8] {
        let out = Array(bytes.prefix(n))
        bytes = bytes.dropFirst(n)
        return out
    }
    mutating func int64() -> Int64 {
        // Mostly small numbers and the edges; sometimes eight raw bytes.
        switch byte() % 8 {
        case 0: return Int64.max &- Int64(byte())
        case 1: return Int64.min &+ Int64(byte())
        case 2: return -Int64(byte())
        case 3: return Int64(time(nil)) &+ Int64(Int8(bitPattern: byte())) &* 3600
        case 4: return take(8).reduce(0) { $0 << 8 | Int64($1) }
        case 5: return Int64(byte()) << 48 | Int64(byte()) << 40 // every magnitude, coarsely
        default: return Int64(byte())
        }
    }
}

/// One statement on a raw sqlite3 handle; false when SQLite refuses it (a STRICT type error).
func run(_ db: OpaquePointer, _ sql: String, _ bind: (OpaquePointer) -> Void = { _ in }) -> Bool {
    var stmt: OpaquePointer?
    guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else { return false }
    defer { sqlite3_finalize(stmt) }
    bind(stmt)
    while true {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { continue }
        return rc == SQLITE_DONE
    }
}

func columns(_ db: OpaquePointer, _ table: String) -> [String] {
    var stmt: OpaquePointer?
    guard sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('\(table)')", -1, &stmt, nil) == SQLITE_OK, let stmt else { return [] }
    defer { sqlite3_finalize(stmt) }
    var names: [String] = []
    while sqlite3_step(stmt) == SQLITE_ROW { names.append(String(cString: sqlite3_column_text(stmt, 0))) }
    return names
}

/// Binds a fuzzed value of a fuzzed type: NULL, INTEGER, TEXT (any bytes), BLOB or REAL.
func bindValue(_ stmt: OpaquePointer, _ index: Int32, _ input: inout Input, column: String) {
    // Key columns mostly hold the user, so that loadUser finds the rows.
    if column == "name" || column == "user", input.byte() % 8 != 0 {
        _ = biounlock_sqlite3_bind_text(stmt, index, user, Int32(user.utf8.count))
        return
    }
    // The row mostly belongs to the account (else the chain stops at AccountBinding).
    if column == "uid", input.byte() % 4 != 0 {
        sqlite3_bind_int64(stmt, index, Int64(userUID))
        return
    }
    switch input.byte() % 6 {
    case 0: sqlite3_bind_null(stmt, index)
    case 1, 2: sqlite3_bind_int64(stmt, index, input.int64())
    case 3:
        let text = input.take(Int(input.byte()))
        var chars = text.map { CChar(bitPattern: $0) }
        chars.append(0)
        _ = biounlock_sqlite3_bind_text(stmt, index, chars, Int32(text.count))
    case 4:
        let blob = input.take(Int(input.byte()))
        blob.withUnsafeBytes { _ = biounlock_sqlite3_bind_blob(stmt, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32($0.count)) }
    default: sqlite3_bind_double(stmt, index, Double(bitPattern: UInt64(bitPattern: input.int64())))
    }
}

final class World {
    let dir: String
    let stores: [(path: String, db: OpaquePointer, tables: [(String, [String])])]

    init() {
        var template = Array("/dev/shm/bu-fuzz-store.XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { fatalError("mkdtemp failed") }
        dir = String(cString: p)
        let strict = dir + "/strict.db", loose = dir + "/loose.db"
        do { _ = try Store.open(path: strict, mode: .administer) } catch { fatalError("cannot create the store: \(error)") }
        var s: OpaquePointer?, l: OpaquePointer?
        guard sqlite3_open_v2(strict, &s, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let s,
              sqlite3_open_v2(loose, &l, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let l else {
            fatalError("cannot open the stores")
        }
        chmod(loose, 0o600)
        // The loose store: the real schema's tables and indexes, without STRICT, same version.
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(s, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL", -1, &stmt, nil)
        while sqlite3_step(stmt) == SQLITE_ROW {
            let sql = String(cString: sqlite3_column_text(stmt, 0))
            _ = run(l, sql.replacingOccurrences(of: " STRICT", with: ""))
        }
        sqlite3_finalize(stmt)
        var version: Int32 = 0
        sqlite3_prepare_v2(s, "PRAGMA user_version", -1, &stmt, nil)
        if sqlite3_step(stmt) == SQLITE_ROW { version = sqlite3_column_int(stmt, 0) }
        sqlite3_finalize(stmt)
        _ = run(l, "PRAGMA user_version = \(version)")
        let tables = ["users", "service_overrides", "templates"]
        stores = [(strict, s, tables.map { ($0, columns(s, $0)) }), (loose, l, tables.map { ($0, columns(l, $0)) })]
        atexit { world.remove() }
    }

    /// Leaves nothing in /dev/shm when the run ends (libFuzzer exits through exit()).
    func remove() {
        for store in stores {
            sqlite3_close(store.db)
            for suffix in ["", "-wal", "-shm", "-journal", "-lock"] { unlink(store.path + suffix) }
        }
        rmdir(dir)
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        var out = "", rest = Substring(self)
        while let r = rest.firstRange(of: target) { out += rest[..<r.lowerBound] + replacement; rest = rest[r.upperBound...] }
        return out + rest
    }
}

nonisolated(unsafe) let world = World()

final class Discard: Logger { func log(_ level: LogLevel, _ message: String) {} }

final class Answers: Conversation {
    var replies: [ConversationReply]
    init(_ replies: [ConversationReply]) { self.replies = replies }
    func info(_ text: String) {}
    func error(_ text: String) {}
    func promptSecret(_ prompt: String) -> ConversationReply { replies.isEmpty ? .failed : replies.removeFirst() }
    func handOverPassword(_ secret: Secret) -> Bool { true }
}

/// A reader that reports a scripted series of results, then times out.
final class ScriptedSensor: FingerprintSensor, SensorProvider {
    var results: [VerifyResult]
    init(_ results: [VerifyResult]) { self.results = results }
    func open(_ options: Options) -> Result<FingerprintSensor, SensorUnavailable> { .success(self) }
    func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult {
        guard !results.isEmpty else { return .timedOut }
        let next = results.removeFirst()
        // A touch matches only an enrolled template, as the simulated sensor decides.
        if case .match = next {
            return templates.first(where: { $0.data == fingerID }).map { .match($0.finger) } ?? .noMatch
        }
        return next
    }
    func enroll(finger: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable> {
        .failure(SensorUnavailable("not enrolling"))
    }
    func close() {}
}

struct FixedClock: Clock {
    let time: Int64
    func now() -> Int64 { time }
    func monotonicMilliseconds() -> Int64 { SystemClock().monotonicMilliseconds() }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStore(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = Input(bytes: ArraySlice(UnsafeBufferPointer(start: data, count: size)))
    let store = world.stores[Int(input.byte() % 2)]
    for (table, _) in store.tables { _ = run(store.db, "DELETE FROM \(table)") }
    for (table, columns) in store.tables {
        let rows = table == "users" ? 1 : Int(input.byte() % 4)
        let sql = "INSERT OR REPLACE INTO \(table)(\(columns.joined(separator: ","))) VALUES (\(columns.map { _ in "?" }.joined(separator: ",")))"
        for _ in 0..<rows {
            _ = run(store.db, sql) { stmt in
                for (i, column) in columns.enumerated() { bindValue(stmt, Int32(i + 1), &input, column: column) }
            }
        }
    }

    // Time in a realistic range: from 1970 (a board without a clock) to well past 2100.
    let now = Int64(input.byte()) << 30 | Int64(input.byte()) << 22
    let policy: Policy = input.byte() % 2 == 0 ? .biometricsOrPasscode : .biometrics
    var options = Options()
    options.policy = policy
    options.requirePasscode = input.byte() % 2 == 0 ? .none : .default
    options.storePath = store.path
    options.lid = .ignore
    options.sensor = .simulated

    let opened: Store
    do { opened = try Store.open(path: store.path, mode: .authenticate) } catch { return 0 }
    let record: UserRecord?
    do { record = try opened.loadUser(user) } catch { return 0 }
    guard let record else { return 0 }

    let nowState = StatusReport.Now(options: options, time: now, bootID: "fuzz-boot")
    _ = StatusReport.json(user: record, now: nowState).serialized()
    _ = StatusReport.text(user: record, now: nowState)
    _ = record.isEnabled(for: "sudo")

    // The chain, unless it would do real Argon2id work (a user without a passcode costs the same
    // as a real verification, on purpose; a stored hash may ask for up to 1 GiB).
    guard let stored = record.passcode else { return 0 }
    if let cost = Passcode.cost(of: stored.hash), cost.memoryKiB <= Passcode.maximumMemLimitKiB,
       (1...Passcode.maximumOpsLimit).contains(cost.passes), cost.memoryKiB > 64 || cost.passes > 1 { return 0 }

    var touches: [VerifyResult] = []
    for _ in 0..<Int(input.byte() % 6) {
        switch input.byte() % 6 {
        case 0: touches.append(.match(.rightIndex))
        case 1, 2: touches.append(.noMatch)
        case 3: touches.append(.retry(RetryReason(code: Int(input.byte()))))
        case 4: touches.append(.unavailable(SensorUnavailable("unplugged")))
        default: touches.append(.timedOut)
        }
    }
    var replies: [ConversationReply] = []
    var answers: [Secret] = []
    for _ in 0..<2 {
        switch input.byte() % 4 {
        case 0, 1:
            let secret = Secret(bytes: input.byte() % 2 == 0 ? pin : input.take(Int(input.byte() % 16)))!
            answers.append(secret)
            replies.append(.answer(secret))
        case 2: replies.append(.empty)
        default: replies.append(.failed)
        }
    }
    let sensor = ScriptedSensor(touches)
    let chain = PolicyChain(options: options, conversation: Answers(replies), logger: Discard(), sensors: sensor,
                            openStore: { .success(opened) },
                            clock: FixedClock(time: now), bootID: { "fuzz-boot" })
    let decision = chain.run(AuthRequest(user: user, service: "sudo"))
    if case .success(let method) = decision.outcome {
        // The chain may only succeed with what it was given: the enrolled touch, or a passcode
        // that verifies against the stored hash.
        switch method {
        case .fingerprint: precondition(touches.contains(.match(.rightIndex)), "success without the enrolled touch")
        case .passcode:
            let verified = answers.contains { (try? Passcode.verify(stored.kind.normalized($0) ?? $0, against: stored.hash)) == true }
            precondition(verified, "passcode success without an answer that verifies")
        case .face:
            // The scripted sensor has no camera, and the options never turn the face on.
            precondition(touches.contains(.faceMatched), "face success without a face")
        case .password, .none: preconditionFailure("success with method \(method)")
        }
    }
    return 0
}
