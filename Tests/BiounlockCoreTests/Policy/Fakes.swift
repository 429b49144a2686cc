import BiounlockSystem
import Glibc
import BiounlockCore

/// In-memory doubles for the policy chain's seams (unit tests only; the module is tested
/// through real libpam in PamBiounlockTests).
final class ScriptedConversation: Conversation {
    var replies: [ConversationReply]
    var transcript: [String] = []
    init(_ replies: [ConversationReply] = []) { self.replies = replies }
    func info(_ text: String) { transcript.append("INFO: \(text)") }
    func error(_ text: String) { transcript.append("ERROR: \(text)") }
    var handedOver: [String] = []
    func handOverPassword(_ secret: Secret) -> Bool {
        handedOver.append(secret.withBytes { String(decoding: $0, as: UTF8.self) })
        return true
    }
    func promptSecret(_ prompt: String) -> ConversationReply {
        transcript.append("PROMPT: \(prompt)")
        return replies.isEmpty ? .failed : replies.removeFirst()
    }
}

final class MemoryLogger: Logger {
    var lines: [(LogLevel, String)] = []
    func log(_ level: LogLevel, _ message: String) { lines.append((level, message)) }
    var text: String { lines.map(\.1).joined(separator: "\n") }
}

final class MemoryStore: AuthStore {
    var users: [String: UserRecord] = [:]
    var events: [AuditEvent] = []
    var failWrites = false
    var failReads = false
    /// What passcodeAttemptsInFlight says.
    var attemptsInFlight = false
    func passcodeAttemptsInFlight(user: String) -> Bool { attemptsInFlight }

    /// How many times a user's row was looked up.
    var loads = 0
    func loadUser(_ name: String, withTemplates: Bool) throws(StoreFailure) -> UserRecord? {
        loads += 1
        if failReads { throw StoreFailure("read failed") }
        guard var record = users[name] else { return nil }
        if !withTemplates { record.templates = [] }
        return record
    }
    /// How many times a user's prints were read.
    var templateReads = 0
    var failTemplateReads = false
    func templates(user: String) throws(StoreFailure) -> [Template] {
        templateReads += 1
        if failReads || failTemplateReads { throw StoreFailure("read failed") }
        return users[user]?.templates ?? []
    }
    func recordBiometricFailure(user: String, at time: Int64) throws(StoreFailure) -> Int {
        if failWrites { throw StoreFailure("disk full") }
        users[user, default: UserRecord(name: user)].biometricFailures += 1
        users[user]?.biometricFailureAt = time
        return users[user]?.biometricFailures ?? 0
    }
    /// The attempt for one client at a time: count (or refuse while locked), check, record. The
    /// real protocol (the count durable before the check, attempts in flight across processes) is
    /// Store's, which PolicyChainOnStoreTests and BiounlockStoreTests run.
    func attemptPasscode(user: String, threshold: Int, clock: Clock, bootID: String,
                         onAccepted: () -> Void, check: () -> Bool) throws(StoreFailure) -> PasscodeAttempt {
        if failWrites { throw StoreFailure("disk full") }
        guard var record = users[user] else { return .locked(until: nil) }
        if case .locked(let until) = Lockouts.passcode(failures: record.passcodeFailures, failureAt: record.passcodeFailureAt,
                                                       threshold: threshold, now: clock.now()) {
            return .locked(until: until)
        }
        record.passcodeFailures += 1
        record.passcodeFailureAt = clock.now()
        users[user] = record
        if check() {
            var resetFailure: StoreFailure?
            try inOneTransaction {
                do throws(StoreFailure) { try recordSuccess(user: user, method: .passcode, at: clock.now(), bootID: bootID) } catch {
                    resetFailure = error
                    return
                }
                onAccepted()
            }
            return .accepted(resetFailure: resetFailure)
        }
        users[user]?.lastFailure = clock.now()
        return .rejected(failures: record.passcodeFailures, writeFailure: nil)
    }
    func recordLastFailure(user: String, at time: Int64) throws(StoreFailure) {
        users[user]?.lastFailure = time
    }
    /// The order in which the chain used the store and the reader (shared with ScriptedSensor).
    var journal: Journal?
    /// Noted in the journal when the last reference goes (the module's store closes then).
    var journalsItsEnd = false
    deinit { if journalsItsEnd { journal?.entries.append("store: closed") } }
    func recordSuccess(user: String, method: AuthMethod, at time: Int64, bootID: String) throws(StoreFailure) {
        journal?.entries.append("store: success recorded")
        if failWrites { throw StoreFailure("disk full") }
        users[user]?.biometricFailures = 0
        users[user]?.lastSuccess = time
        if method == .passcode || method == .password {
            users[user]?.passcodeFailures = 0
            users[user]?.passcodeSuccessAt = time
            users[user]?.passcodeBootID = bootID
            if method == .password { users[user]?.passwordBootID = bootID }
            let version = users[user]?.enrolmentVersion
            users[user]?.passcodeEnrolmentVersion = version
        }
    }
    func resetBiometricFailures(user: String) throws(StoreFailure) {
        if failWrites { throw StoreFailure("disk full") }
        users[user]?.biometricFailures = 0
    }
    func noteFprintdPrints(user: String, prints: String) throws(StoreFailure) {
        if failWrites { throw StoreFailure("disk full") }
        users[user]?.fprintdPrints = prints
        users[user]?.enrolmentVersion += 1
    }
    func appendEvent(_ event: AuditEvent) throws(StoreFailure) {
        if failWrites { throw StoreFailure("disk full") }
        events.append(event)
        eventsInTransaction += inTransaction ? 1 : 0
    }
    /// How many times the chain grouped writes, and how many audit rows were written inside a group.
    var transactions = 0
    var eventsInTransaction = 0
    private var inTransaction = false
    func inOneTransaction(_ writes: () -> Void) throws(StoreFailure) {
        transactions += 1
        inTransaction = true
        writes()
        inTransaction = false
    }
}

/// What happened, in order, across the fakes that share it.
final class Journal { var entries: [String] = [] }

final class ScriptedSensor: FingerprintSensor {
    var results: [VerifyResult]
    var closed = 0
    var journal: Journal?
    var verifyCalls = 0
    /// How each call was limited: "window" when a wait limit was given, "reader" when not.
    var waits: [String] = []
    init(_ results: [VerifyResult]) { self.results = results }
    func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult {
        verifyCalls += 1
        waits.append(waitUntil == nil ? "reader" : "window")
        return results.isEmpty ? .timedOut : results.removeFirst()
    }
    func enroll(finger: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable> {
        .failure(SensorUnavailable("not scripted"))
    }
    func close() { closed += 1; journal?.entries.append("reader: closed") }
    func startClosing() { journal?.entries.append("reader: closing started") }
}

struct ScriptedSensors: SensorProvider {
    let sensor: ScriptedSensor?
    func open(_ options: Options) -> Result<FingerprintSensor, SensorUnavailable> {
        guard let sensor else { return .failure(SensorUnavailable("no reader")) }
        return .success(sensor)
    }
}

struct FixedClock: Clock {
    var seconds: Int64 = 1_800_000_000
    func now() -> Int64 { seconds }
    func monotonicMilliseconds() -> Int64 { 0 }
}

/// A terminal whose keys are scripted: each element is what one readAvailable() returns, and
/// `fd` is a pipe made readable while scripted keys remain.
final class ScriptedTerminal: TypeOrTouchTerminal {
    var inputs: [TerminalInput]
    var transcript: [String] = []
    var finished: [Bool] = []
    private var pipeFDs: [Int32] = [-1, -1]

    init(_ inputs: [TerminalInput]) {
        self.inputs = inputs
        _ = pipe(&pipeFDs)
        if !inputs.isEmpty { _ = write(pipeFDs[1], "k", 1) }
    }
    deinit { close(pipeFDs[0]); close(pipeFDs[1]) }

    var fd: Int32 { pipeFDs[0] }
    func start(prompt: String) { transcript.append("PROMPT: \(prompt)") }
    func readAvailable() -> TerminalInput {
        guard !inputs.isEmpty else { return .pending }
        let next = inputs.removeFirst()
        if inputs.isEmpty { var b: UInt8 = 0; _ = read(pipeFDs[0], &b, 1) }
        return next
    }
    func message(_ text: String) { transcript.append("MSG: \(text)") }
    func changePrompt(_ prompt: String) { transcript.append("PROMPT NOW: \(prompt)") }
    func waitForKey(until deadline: Deadline) -> Bool { !inputs.isEmpty }
    func finish(cancelled: Bool) { finished.append(cancelled) }
    var interruptsDelivered = 0
    /// What the store held when the SIGINT would have been delivered (set by the test).
    var onInterrupt: () -> Void = {}
    func deliverInterrupt() { interruptsDelivered += 1; onInterrupt() }
}
