#if BIOUNLOCK_FUZZ
import BiounlockSystem
import BiounlockCore
import BiounlockChain
import BiounlockSensors

// The fuzz build only. scripts/fuzz compiles the module with -D BIOUNLOCK_FUZZ into
// build/fuzz/pam_biounlock_fuzz.so; SwiftPM never defines it, so build/pam_biounlock.so -- what
// ships and what every other test loads -- contains none of this (LinkageTests checks its
// symbols and strings).
//
// What it replaces, for Fuzz/Targets/module.c, which scripts the outside world of each
// transaction from the fuzz input before it calls pam_authenticate:
//   - the reader: FuzzSensors/FuzzSensor answer from a script (match when a scanned id is the
//     data of one of the user's templates, as the simulated sensor does; no match; retry; device
//     error; timeout; "a key was pressed") instead of a socket or a helper process, and never
//     wait, so that no input waits out a deadline;
//   - the controlling terminal: FuzzTerminal replays scripted keys (a line, Enter alone, too
//     long, closed, Ctrl-C -- whose SIGINT is counted, not sent to the fuzzer);
//   - the wall clock (FuzzClock) and the boot id, fixed by the harness so that lockouts and the
//     passcode-required rules are decided the same way on every run of an input.
// Everything else is the shipped code: libpam, the options and the config file, the store on
// disk (a tmpfs), the accounts (NSS), the session probe, the conversation, the audit log.

/// The world of the current transaction, as the harness set it (one thread: libFuzzer's).
enum FuzzWorld {
    struct Record { var kind: UInt8; var bytes: [UInt8] }

    nonisolated(unsafe) static var now: Int64 = 0
    nonisolated(unsafe) static var bootID: String?
    nonisolated(unsafe) static var readerOpen: UInt8 = 0
    nonisolated(unsafe) static var replies: [Record] = []
    nonisolated(unsafe) static var nextReply = 0
    nonisolated(unsafe) static var terminalPresent = false
    nonisolated(unsafe) static var keys: [Record] = []
    nonisolated(unsafe) static var nextKey = 0
    /// Readers opened and not yet closed (the harness checks 0 after pam_end).
    nonisolated(unsafe) static var readersOpen: Int32 = 0
    /// Terminals started and not yet finished.
    nonisolated(unsafe) static var terminalsActive: Int32 = 0

    /// [kind][length][bytes]…, as module.c writes them; a truncated record ends the list.
    static func records(_ base: UnsafePointer<UInt8>?, _ count: Int) -> [Record] {
        guard let base, count > 0 else { return [] }
        var out: [Record] = []
        var i = 0
        while i + 2 <= count {
            let kind = base[i], length = Int(base[i + 1])
            i += 2
            guard i + length <= count else { break }
            out.append(Record(kind: kind, bytes: Array(UnsafeBufferPointer(start: base + i, count: length))))
            i += length
        }
        return out
    }

    static func reply() -> Record? {
        guard nextReply < replies.count else { return nil }
        defer { nextReply += 1 }
        return replies[nextReply]
    }

    static func key() -> Record? {
        guard nextKey < keys.count else { return nil }
        defer { nextKey += 1 }
        return keys[nextKey]
    }

    /// The seams of one transaction's chain: the real assembly, with the scripted reader, clock,
    /// boot id and terminal.
    static func chain(options: Options, conversation: Conversation, logger: Logger, request: AuthRequest,
                      environment: @escaping (String) -> String?) -> PolicyChain {
        ChainAssembly.chain(options: options, conversation: conversation, logger: logger, diagnostics: .syslog, request: request,
                            environment: environment, terminal: { FuzzWorld.terminalPresent ? FuzzTerminal() : nil },
                            seams: ChainSeams(sensors: FuzzSensors(), clock: FuzzClock(), bootID: { FuzzWorld.bootID }))
    }
}

/// Sets the world of the next transactions: the wall clock, the boot id (NULL: unreadable), the
/// reader (its first byte says how opening it goes, then reply records) and the terminal (key
/// records; `hasTerminal` 0: no controlling terminal).
@_cdecl("biounlock_fuzz_world")
public func biounlock_fuzz_world(_ now: Int64, _ bootID: UnsafePointer<CChar>?,
                                 _ reader: UnsafePointer<UInt8>?, _ readerCount: Int,
                                 _ keys: UnsafePointer<UInt8>?, _ keyCount: Int, _ hasTerminal: Int32) {
    FuzzWorld.now = now
    FuzzWorld.bootID = bootID.map { String(cString: $0) }
    FuzzWorld.readerOpen = (reader != nil && readerCount > 0) ? reader![0] : 0
    FuzzWorld.replies = readerCount > 1 ? FuzzWorld.records(reader! + 1, readerCount - 1) : []
    FuzzWorld.nextReply = 0
    FuzzWorld.terminalPresent = hasTerminal != 0
    FuzzWorld.keys = FuzzWorld.records(keys, keyCount)
    FuzzWorld.nextKey = 0
}

/// Runs the next calls of this thread under a fault schedule read from `bytes` (BiounlockSystem's
/// FaultSchedule(fuzzInput:): 4 bytes a rule -- call, fault, skip, count): EINTR, EAGAIN, ENOSPC,
/// EIO, EMFILE, ENOMEM and short transfers through the system-call layer's funnel.
@_cdecl("biounlock_fuzz_faults_begin")
public func biounlock_fuzz_faults_begin(_ bytes: UnsafePointer<UInt8>?, _ count: Int) {
    let rules = bytes.map { Array(UnsafeBufferPointer(start: $0, count: max(0, count))) } ?? []
    Faults.install(FaultSchedule(fuzzInput: rules), allThreads: false)
}

/// Removes the schedule; returns how many faults it injected.
@_cdecl("biounlock_fuzz_faults_end")
public func biounlock_fuzz_faults_end() -> Int32 {
    Int32(clamping: Faults.remove().count)
}

/// Readers still open plus terminals still in raw mode: 0 once a transaction is over.
@_cdecl("biounlock_fuzz_unreleased")
public func biounlock_fuzz_unreleased() -> Int32 {
    FuzzWorld.readersOpen &+ FuzzWorld.terminalsActive
}

struct FuzzClock: Clock {
    func now() -> Int64 { FuzzWorld.now }
    func monotonicMilliseconds() -> Int64 { SystemClock().monotonicMilliseconds() }
}

struct FuzzSensors: SensorProvider {
    func open(_ options: Options) -> Result<FingerprintSensor, SensorUnavailable> {
        .failure(SensorUnavailable("fuzz build: readers open through openReader(for:options:)"))
    }

    func openReader(for user: UserRecord, options: Options) -> UserReader {
        switch FuzzWorld.readerOpen % 4 {
        case 2: return .unavailable(SensorUnavailable("fuzz: the reader cannot be opened"))
        case 3: return .nothingEnrolled
        default:
            // As the shipped providers: the user's templates of the backend in use.
            let templates = user.templates.filter { $0.sensor == options.sensor }
            guard !templates.isEmpty else { return .nothingEnrolled }
            return .ready(FuzzSensor(), templates)
        }
    }
}

final class FuzzSensor: FingerprintSensor {
    private var closed = false

    init() { FuzzWorld.readersOpen += 1 }

    func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult {
        while let reply = FuzzWorld.reply() {
            switch reply.kind % 6 {
            case 0, 1:
                if let template = templates.first(where: { $0.data == reply.bytes }) { return .match(template.finger) }
                return .noMatch
            case 2: return .retry(RetryReason(code: Int(reply.bytes.first ?? 0)))
            case 3: return .unavailable(SensorUnavailable("fuzz: device error"))
            case 4: return .timedOut
            default:
                // A key pressed, or the caller's wait limit: only when the caller waits for one.
                if interrupt != nil || waitUntil != nil { return .interrupted }
            }
        }
        return .timedOut
    }

    func enroll(finger: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable> {
        .failure(SensorUnavailable("fuzz build: no enrolment"))
    }

    func close() {
        guard !closed else { return }
        closed = true
        FuzzWorld.readersOpen -= 1
    }

    deinit { close() }
}

final class FuzzTerminal: TypeOrTouchTerminal {
    let fd: Int32 = -1
    private var active = false

    func start(prompt: String) {
        if !active { FuzzWorld.terminalsActive += 1 }
        active = true
    }

    func readAvailable() -> TerminalInput {
        guard let key = FuzzWorld.key() else { return .closed }
        switch key.kind % 6 {
        case 0: return .pending
        case 1:
            if key.bytes.isEmpty { return .empty }
            return Secret(bytes: key.bytes).map(TerminalInput.line) ?? .tooLong
        case 2: return .empty
        case 3: return .tooLong
        case 4: return .closed
        default: return .cancelled
        }
    }

    func message(_ text: String) {}
    func changePrompt(_ prompt: String) {}

    func waitForKey(until deadline: Deadline) -> Bool { FuzzWorld.nextKey < FuzzWorld.keys.count }

    func finish(cancelled: Bool) {
        if active { FuzzWorld.terminalsActive -= 1 }
        active = false
    }

    /// The SIGINT Ctrl-C would send: not to the fuzzer.
    func deliverInterrupt() {}

    deinit { finish(cancelled: false) }
}
#endif
