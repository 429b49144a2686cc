import BiounlockSystem

/// The seams between the policy chain and the outside world. The module supplies PAM- and
/// syslog-backed implementations, the CLI terminal- and stderr-backed ones, tests in-memory ones.

/// What a conversation answered to a hidden prompt.
public enum ConversationReply {
    /// A non-empty answer, copied into a zeroing buffer.
    case answer(Secret)
    /// Enter alone: the user wants to fall back (to the Unix password).
    case empty
    /// Longer than `Secret.maximumLength`: refused before any hashing.
    case tooLong
    /// The conversation failed or returned no answer (NULL response array or NULL text).
    case failed
}

public protocol Conversation: AnyObject {
    /// An informational line (PAM_TEXT_INFO).
    func info(_ text: String)
    /// An error line (PAM_ERROR_MSG).
    func error(_ text: String)
    /// A prompt whose answer is not echoed (PAM_PROMPT_ECHO_OFF).
    func promptSecret(_ prompt: String) -> ConversationReply
    /// Hands a password typed at the type-or-touch prompt to the next module (PAM_AUTHTOK, for
    /// pam_unix's try_first_pass). Only under policy=biometrics. Returns false if it could not.
    func handOverPassword(_ secret: Secret) -> Bool
}

public enum LogLevel: Sendable {
    case error, warning, notice, info, debug
}

/// Logging is injected: syslog (authpriv) in the module, stderr in the CLI, memory in tests.
/// Never pass a secret, a template or a hash to a logger.
public protocol Logger: AnyObject {
    func log(_ level: LogLevel, _ message: String)
}

public struct StoreFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    /// The failed system call behind it, when there is one.
    public let cause: Errno?
    public init(_ description: String) { self.description = description; cause = nil }
    /// "what: message" ("cannot open /var/lib/biounlock/store-lock: Permission denied"), the call kept.
    public init(_ what: String, _ cause: Errno) { description = "\(what): \(cause.message)"; self.cause = cause }
}

/// What the policy chain needs from the store during one transaction.
public protocol AuthStore: AnyObject {
    /// The user's row. `withTemplates: false` leaves `templates` empty: the module reads the
    /// prints (`templates(user:)`) only when it opens a reader for them, so an attempt that
    /// never asks for the finger (not enabled, lid closed, remote, locked) never reads them.
    func loadUser(_ name: String, withTemplates: Bool) throws(StoreFailure) -> UserRecord?
    /// The user's enrolled prints, of every backend.
    func templates(user: String) throws(StoreFailure) -> [Template]
    /// The user's enrolled face (none when there is none, or for stores without faces).
    func faceTemplates(user: String) throws(StoreFailure) -> [FaceTemplate]
    /// Adds one failed match to the user's consecutive counter (atomically); returns the new count
    /// once it would survive a power loss.
    @discardableResult
    func recordBiometricFailure(user: String, at time: Int64) throws(StoreFailure) -> Int
    /// One whole passcode attempt: count it before it is checked, atomically in the store's write
    /// transaction (or refuse it, counting nothing, while the passcode lockout runs -- so attempts
    /// made at the same time never get more guesses than the lockout allows), make the count
    /// durable, run `check` (the Argon2id verification), and record the result -- a right
    /// passcode clears the counters as recordSuccess(.passcode) does. An attempt that finds the
    /// lockout reached while other attempts of the user are being checked waits for their results
    /// (bounded, across processes) before it is refused: right passcodes typed at the same moment
    /// all succeed, and still no more than `threshold` wrong ones are ever checked.
    /// Throws when the attempt could be neither counted nor checked (or, rarely, was counted but
    /// not checked: the safe side); then `check` has not run. `onAccepted` runs when the check
    /// passed, inside the transaction that clears the counters: what it writes (the audit row of
    /// the success) joins that commit, so a passcode success commits once after its count. It
    /// has run and its writes are committed exactly when the result is `.accepted(resetFailure: nil)`.
    func attemptPasscode(user: String, threshold: Int, clock: Clock, bootID: String,
                         onAccepted: () -> Void, check: () -> Bool) throws(StoreFailure) -> PasscodeAttempt
    /// Whether attempts of `user` are being checked right now (by any process). Their counts are
    /// in the record already, so a lockout read from it may yet be lifted by one of them: the
    /// passcode is still worth asking for (attemptPasscode then waits for their results).
    func passcodeAttemptsInFlight(user: String) -> Bool
    /// Notes when the last failure happened (the count was taken by attemptPasscode).
    func recordLastFailure(user: String, at time: Int64) throws(StoreFailure)
    /// Resets the counters a success clears: a finger clears the biometric counter; a passcode
    /// (or the password, seen through pam_sm_setcred) clears both -- as on a phone, the passcode
    /// unlocks biometrics -- and records the boot and enrolled set it was entered in.
    func recordSuccess(user: String, method: AuthMethod, at time: Int64, bootID: String) throws(StoreFailure)
    /// Clears the biometric counter (a lockout that expired under policy=biometrics).
    func resetBiometricFailures(user: String) throws(StoreFailure)
    /// sensor=fprintd: records the prints fprintd holds for the user now (FprintdPrints' text),
    /// seen to differ from `UserRecord.fprintdPrints`: a change of the enrolled set, so the
    /// enrolment version is bumped in the same write.
    func noteFprintdPrints(user: String, prints: String) throws(StoreFailure)
    func appendEvent(_ event: AuditEvent) throws(StoreFailure)
    /// Runs `writes` as one transaction where the store can (one commit: one sync and one wait
    /// for the write lock instead of one per write), else as they come. The writes report their
    /// own failures; this throws when the transaction could not be started within the busy
    /// timeout (the writes are then not run) or not committed (they are lost).
    func inOneTransaction(_ writes: () -> Void) throws(StoreFailure)
}

extension AuthStore {
    public func faceTemplates(user: String) throws(StoreFailure) -> [FaceTemplate] { [] }

    public func inOneTransaction(_ writes: () -> Void) throws(StoreFailure) { writes() }

    /// One client at a time (the tests' memory store): nothing is ever in flight.
    public func passcodeAttemptsInFlight(user: String) -> Bool { false }

    /// The whole row, prints included (the CLI's read).
    public func loadUser(_ name: String) throws(StoreFailure) -> UserRecord? {
        try loadUser(name, withTemplates: true)
    }

    /// An attempt whose success writes nothing more.
    public func attemptPasscode(user: String, threshold: Int, clock: Clock, bootID: String, check: () -> Bool) throws(StoreFailure) -> PasscodeAttempt {
        try attemptPasscode(user: user, threshold: threshold, clock: clock, bootID: bootID, onAccepted: {}, check: check)
    }
}

/// How one passcode attempt ended (AuthStore.attemptPasscode).
public enum PasscodeAttempt: Equatable, Sendable {
    /// Counted, checked and right; the counters are cleared already, unless `resetFailure` says
    /// why they could not be (the success stands).
    case accepted(resetFailure: StoreFailure?)
    /// Counted, checked and wrong: `failures` consecutive wrong passcodes now. `writeFailure`:
    /// the time of the failure could not be noted (the count was taken before the check).
    case rejected(failures: Int, writeFailure: StoreFailure?)
    /// Neither counted nor checked: the lockout runs, until `until` (nil: until a success or an
    /// admin's reset).
    case locked(until: Int64?)
}

/// Why the reader cannot be used now (biometrics "unavailable": fall back, never a failed match).
public struct SensorUnavailable: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    /// The failed system call behind it, when there is one.
    public let cause: Errno?
    public init(_ description: String) { self.description = description; cause = nil }
    /// "call: message" ("socketpair: Too many open files").
    public init(_ cause: Errno) { description = cause.description; self.cause = cause }
    /// "what: message" ("bind /run/biounlock/sim.sock: Permission denied"), the call kept.
    public init(_ what: String, _ cause: Errno) { description = "\(what): \(cause.message)"; self.cause = cause }
}

/// Why the reader asked for another touch. A retry is never a failed match.
public enum RetryReason: Int, Sendable, Equatable {
    case general = 0, tooShort = 1, centerFinger = 2, removeFinger = 3

    public init(code: Int) { self = RetryReason(rawValue: code) ?? .general }
}

public enum VerifyResult: Equatable, Sendable {
    case match(Finger)
    case noMatch
    case retry(RetryReason)
    case unavailable(SensorUnavailable)
    case timedOut
    /// The wait ended before the reader answered: the `interrupt` descriptor became readable (a
    /// key was pressed at a type-or-touch prompt) or `waitUntil` passed. The reader keeps waiting
    /// for the same touch, until its own deadline, if verify is called again.
    case interrupted
    /// The camera saw the user's face (a reader that also watches a camera: BiounlockSensors' Face/).
    case faceMatched
    /// The camera saw a face in several frames and it was not the user's: counted as a failed
    /// biometric attempt, as a wrong finger is. The camera is done for this transaction.
    case faceNotRecognised
}

/// A reader that also (or only) watches a camera for the user's face. The chain asks it what to
/// put in the prompt.
public protocol FaceWatching: AnyObject {
    /// The camera is watching for the user's face.
    var watchesFace: Bool { get }
    /// A fingerprint reader waits for a touch beside it.
    var watchesFinger: Bool { get }
}

public enum EnrollEvent: Equatable, Sendable {
    case stage(done: Int, of: Int)
    case retry(RetryReason)
    /// A touch by another finger than the one being enrolled.
    case differentFinger
}

/// An open fingerprint reader, used by one transaction or one enrolment.
public protocol FingerprintSensor: AnyObject {
    /// Waits for one touch (or a retry, error or the deadline) and compares it with `templates`.
    /// `deadline` is the reader's: the touch must come by then. The wait itself also ends
    /// (`.interrupted`, the reader still waiting) as soon as `interrupt` is readable, or at
    /// `waitUntil` when that comes first -- so a caller can put up a prompt meanwhile and come back
    /// for the same touch (a touch made while it was away counts).
    func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult
    /// Takes the enrolment touches for `finger`, reporting each stage, until done or the deadline.
    func enroll(finger: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable>
    /// Releases the reader. Called exactly once.
    func close()
    /// Starts releasing the reader without waiting for it (after a match: the caller records the
    /// success meanwhile); `close` then waits for the release to end. Optional: by default the
    /// whole release happens in `close`.
    func startClosing()
}

extension FingerprintSensor {
    public func startClosing() {}
}

/// A reader opened for one user's verification, and what the chain verifies against.
public enum UserReader {
    /// The open reader and the user's prints for it: the store's templates of this backend, or,
    /// for a backend that keeps prints itself (fprintd), one entry per finger the daemon holds
    /// (their data stays in the daemon; the sensor ignores it).
    case ready(FingerprintSensor, [Template])
    /// The user has no print this backend can use: nothing to wait for.
    case nothingEnrolled
    case unavailable(SensorUnavailable)
}

/// Opens the reader the options name.
public protocol SensorProvider {
    func open(_ options: Options) -> Result<FingerprintSensor, SensorUnavailable>
    /// Opens a reader for verifying `templates`: with several readers attached, the one they were
    /// taken on (templates carry the reader's driver and device id).
    func open(_ options: Options, for templates: [Template]) -> Result<FingerprintSensor, SensorUnavailable>
    /// The policy chain's one way to a reader: opens one for verifying `user`, or says there is
    /// nothing to verify against. Backends whose prints live in the store (libfprint, simulated)
    /// use the user's templates (the default below); a backend whose daemon keeps the prints
    /// (fprintd) asks it which fingers the user has -- the store holds none.
    func openReader(for user: UserRecord, options: Options) -> UserReader
}

extension SensorProvider {
    public func open(_ options: Options, for templates: [Template]) -> Result<FingerprintSensor, SensorUnavailable> {
        open(options)
    }

    /// The store's templates of the configured backend; none means nothing enrolled (and no reader
    /// is opened, so a user without prints costs nothing).
    public func openReader(for user: UserRecord, options: Options) -> UserReader {
        let templates = user.templates.filter { $0.sensor == options.sensor }
        guard !templates.isEmpty else { return .nothingEnrolled }
        switch open(options, for: templates) {
        case .success(let sensor): return .ready(sensor, templates)
        case .failure(let why): return .unavailable(why)
        }
    }
}

/// A fingerprint reader as the admin sees it (`biounlock sensors`).
public struct ReaderInfo: Equatable, Sendable {
    /// libfprint's driver name ("simulated" for the simulated sensor).
    public var driver: String
    /// libfprint's device id (the control socket for the simulated sensor).
    public var device: String
    public var name: String
    /// Touches one enrolment takes.
    public var enrolStages: Int
    /// What it can do: "verify", "identify", "storage", … in a fixed order.
    public var features: [String]
    /// "press" or "swipe".
    public var scanType: String

    public init(driver: String, device: String, name: String, enrolStages: Int, features: [String], scanType: String) {
        self.driver = driver; self.device = device; self.name = name
        self.enrolStages = enrolStages; self.features = features; self.scanType = scanType
    }

}

extension FingerprintSensor {
    public func verify(against templates: [Template], deadline: Deadline) -> VerifyResult {
        verify(against: templates, deadline: deadline, interrupt: nil, waitUntil: nil)
    }

    public func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?) -> VerifyResult {
        verify(against: templates, deadline: deadline, interrupt: interrupt, waitUntil: nil)
    }
}
