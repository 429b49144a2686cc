import Glibc

/// Who is authenticating, for what, and from where (read from PAM items by the module).
public struct AuthRequest: Sendable {
    public var user: String
    public var service: String
    public var tty: String
    public var rhost: String
    /// PAM_SILENT: no informational or error messages (prompts still appear).
    public var silent: Bool

    public init(user: String, service: String, tty: String = "", rhost: String = "", silent: Bool = false) {
        self.user = user; self.service = service; self.tty = tty; self.rhost = rhost; self.silent = silent
    }
}

/// The biometric-or-passcode chain: the one place where biounlock decides.
///
/// Steps, in order (each either decides or hands on):
///   1. account   the user must exist on the system              -> userUnknown
///   2. store     the store must open and be trusted             -> unavailable
///   3. toggle    biometric unlock enabled for this service?      -> notEnabled
///   4. lockout   passcode locked (escalating waits)              -> denied, with the time left
///   5. gates     biometrics locked, passcode required, remote session, lid closed -> skip the finger
///   6. finger    touch the reader (max_tries, timeout)           -> success, or a FingerResult
///   7. fallback  one decision from (policy, FingerResult)        -> maxTries / unavailable / passcode
///   8. passcode  biounlock's own passcode (passcode policy only) -> success / denied / unavailable
/// Whatever goes wrong inside a step falls towards the password (unavailable), never to success.
public final class PolicyChain {
    public typealias StoreOpener = () -> Result<AuthStore, StoreFailure>
    public typealias AccountLookup = (String) -> Account?

    let options: Options
    let conversation: Conversation
    let logger: Logger
    let sensors: SensorProvider
    let openStore: StoreOpener
    let lookupAccount: AccountLookup
    let clock: Clock

    let sessionFacts: () -> SessionFacts
    let bootID: () -> String?
    let terminal: () -> TypeOrTouchTerminal?
    /// While a type-or-touch prompt is up, messages go to it instead of the conversation.
    var activeTerminal: TypeOrTouchTerminal?

    public init(options: Options, conversation: Conversation, logger: Logger, sensors: SensorProvider,
                openStore: @escaping StoreOpener, lookupAccount: @escaping AccountLookup = Accounts.lookup,
                clock: Clock = SystemClock(), sessionFacts: @escaping () -> SessionFacts = { SessionFacts() },
                bootID: @escaping () -> String? = { SessionProbe.bootID() },
                terminal: @escaping () -> TypeOrTouchTerminal? = { nil }) {
        self.options = options; self.conversation = conversation; self.logger = logger
        self.sensors = sensors; self.openStore = openStore; self.lookupAccount = lookupAccount; self.clock = clock
        self.sessionFacts = sessionFacts; self.bootID = bootID; self.terminal = terminal
    }

    /// How the finger step ended.
    enum FingerResult {
        case matched(Finger)
        /// Wrong finger `max_tries` times.
        case exhausted
        /// The finger step could not be used (no reader, nothing enrolled, timeout, store error).
        case skipped(Reason)
        /// Type-or-touch: a line typed at the shared prompt (the passcode, or the password).
        case typed(Secret)
        /// Type-or-touch: a line longer than Secret.maximumLength.
        case typedTooLong
        /// Type-or-touch: Enter alone, Ctrl-C, or nothing typed in time.
        case ended(Reason)
    }

    /// The success to record when the chain ends (see run).
    private var pendingSuccess: (user: String, method: AuthMethod)?

    /// Runs the chain once and writes its audit event. Never traps, never returns success by accident.
    public func run(_ request: AuthRequest) -> Decision {
        var store: AuthStore?
        pendingSuccess = nil
        let decision = decide(request, store: &store)
        let event = audit(decision, request: request)
        guard let store else { return decision }
        if let success = pendingSuccess {
            // The counter reset and the audit row in one commit: one sync and one wait for the
            // write lock instead of two (scripts/bench counts the syncs per transaction).
            do {
                try store.inOneTransaction {
                    writeSuccess(user: success.user, method: success.method, store: store)
                    if let event { write(event, store: store) }
                }
            } catch {
                // The decision stands even if the counters cannot be reset.
                logger.log(.error, "cannot commit the success of \(success.user) and its audit event: \(error)")
            }
        } else if let event {
            write(event, store: store)
        }
        return decision
    }

    func decide(_ request: AuthRequest, store storeOut: inout AuthStore?) -> Decision {
        guard let account = lookupAccount(request.user) else {
            // As slow as a wrong passcode, so that probing names tells nothing by time.
            Passcode.burnEquivalentWork()
            return Decision(.userUnknown, .unknownUser)
        }
        let store: AuthStore
        switch openStore() {
        case .success(let s): store = s
        case .failure(let problem):
            logger.log(.error, "store unavailable: \(problem)")
            return Decision(.unavailable, .storeUnavailable)
        }
        storeOut = store

        let user: UserRecord
        do {
            guard let found = try store.loadUser(account.name), found.isEnabled(for: request.service) else {
                return Decision(.notEnabled, .notEnabled)
            }
            user = found
        } catch {
            logger.log(.error, "store unreadable: \(error)")
            return Decision(.unavailable, .storeUnavailable)
        }

        let now = clock.now()
        if options.policy == .biometricsOrPasscode, case .locked(let until?) = Lockouts.passcode(user, options: options, now: now) {
            say(request, exchange: Messages.passcodeLocked(timeLeft: until &- now), isError: true)
            return Decision(.denied, .passcodeLocked, method: .passcode)
        }

        let finger: FingerResult
        if let gate = fingerGate(user: user, request: request, store: store, now: now) {
            finger = .skipped(gate)
        } else {
            finger = fingerStep(user: user, request: request, store: store)
        }
        return fallback(after: finger, user: user, request: request, store: store)
    }

    // MARK: step 5: the gates before the finger

    /// Why the finger must not be asked for now (and says so), or nil to ask for it.
    func fingerGate(user: UserRecord, request: AuthRequest, store: AuthStore, now: Int64) -> Reason? {
        switch Lockouts.biometric(user, options: options, now: now) {
        case .locked(let until):
            say(request, exchange: Messages.biometricsLocked(policy: options.policy, timeLeft: until.map { $0 &- now }), isError: true)
            return .biometricsLocked
        case .open where user.biometricFailures >= options.biometricLockout:
            // The lockout expired (policy=biometrics): start counting afresh.
            do { try store.resetBiometricFailures(user: user.name) } catch {
                logger.log(.error, "cannot reset the expired biometric lockout of \(user.name): \(error)")
                return .storeUnavailable
            }
        case .open:
            break
        }
        if let required = PasscodeRequirement.reason(user, options: options, now: now, bootID: bootID()) {
            say(request, exchange: Messages.passcodeRequired(required, policy: options.policy, options: options))
            return required
        }
        let facts = sessionFacts()
        if options.remote == .skip, let why = facts.remote {
            logger.log(.info, "finger skipped for \(user.name): \(why)")
            say(request, notice: Messages.skippedRemote, isError: false)
            return .remoteSession
        }
        if options.lid == .skip, facts.lidClosed {
            say(request, notice: Messages.skippedLid, isError: false)
            return .lidClosed
        }
        return nil
    }

    // MARK: step 6: the finger (alone, or type-or-touch)

    func fingerStep(user: UserRecord, request: AuthRequest, store: AuthStore) -> FingerResult {
        // The provider decides what "enrolled" means: the store's templates, or (sensor=fprintd)
        // the fingers fprintd holds for the user.
        let sensor: FingerprintSensor
        let templates: [Template]
        switch sensors.openReader(for: user, options: options) {
        case .ready(let s, let t):
            sensor = s
            templates = t
        case .nothingEnrolled:
            say(request, notice: Messages.nothingEnrolled)
            return .skipped(.nothingEnrolled)
        case .unavailable(let why):
            logger.log(.notice, "reader unavailable for \(user.name): \(why)")
            say(request, notice: Messages.readerUnavailable)
            return .skipped(.readerUnavailable)
        }
        var readerOpen = true
        func releaseReader() {
            if readerOpen { sensor.close() }
            readerOpen = false
        }
        defer { releaseReader() }

        // Type or touch: one prompt on the caller's terminal while the reader waits. A touch ends
        // it with no key pressed; Enter ends it at once with what was typed; the reader is released
        // either way. Once the reader is done (wrong fingers, unavailable, timed out) the prompt
        // keeps taking keys until Enter -- no keystroke is lost -- for at most
        // Options.typingTimeoutSeconds. Without a usable terminal: the touch prompt alone.
        let terminal = options.prompt == .concurrent ? self.terminal() : nil
        var cancelled = false
        let kind = options.policy == .biometricsOrPasscode ? user.passcode?.kind : nil
        if let terminal {
            terminal.start(prompt: Messages.typeOrTouchPrompt(service: request.service, kind: kind))
            activeTerminal = terminal
        } else {
            say(request, exchange: Messages.touchPrompt(template: options.reason, service: request.service))
        }
        defer {
            activeTerminal = nil
            terminal?.finish(cancelled: cancelled)
        }

        /// The reader is done with `result`: without a terminal that ends the step; with one,
        /// the prompt goes on waiting for Enter. Called before the message that says why, so the
        /// prompt shown after it no longer offers the touch.
        func readerDone(_ result: FingerResult) -> FingerResult? {
            releaseReader()
            terminal?.changePrompt(Messages.typeOnlyPrompt(service: request.service, kind: kind))
            return terminal == nil ? result : nil
        }

        let fingerDeadline = Deadline.after(milliseconds: Int64(options.timeoutSeconds) * 1000, clock: clock)
        let typingDeadline = Deadline.after(milliseconds: Int64(Options.typingTimeoutSeconds) * 1000, clock: clock)
        var wrong = 0
        while true {
            let result: VerifyResult
            if readerOpen {
                result = sensor.verify(against: templates, deadline: fingerDeadline, interrupt: terminal?.fd)
            } else if let terminal {
                var pfd = pollfd(fd: terminal.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&pfd, 1, typingDeadline.remaining(clock: clock)) != 0 else { return .ended(.typingTimedOut) }
                result = .interrupted
            } else {
                return .skipped(.timedOut) // unreachable: without a terminal readerDone ended the step
            }
            switch result {
            case .interrupted:
                guard let terminal else { continue }
                switch terminal.readAvailable() {
                case .pending: continue
                case .line(let secret): return .typed(secret)
                case .tooLong: return .typedTooLong
                case .empty: return .ended(.passcodeDeclined)
                case .closed: return .ended(.conversationFailed)
                case .cancelled:
                    cancelled = true
                    return .ended(.cancelled)
                }
            case .match(let finger):
                return .matched(finger)
            case .noMatch:
                wrong += 1
                let consecutive: Int
                do {
                    consecutive = try store.recordBiometricFailure(user: user.name, at: clock.now())
                } catch {
                    // A failure we cannot count must not buy unlimited guesses: stop using the finger.
                    logger.log(.error, "cannot record failed match for \(user.name): \(error)")
                    if let done = readerDone(.skipped(.storeUnavailable)) { return done }
                    continue
                }
                if consecutive >= options.biometricLockout {
                    let until = options.policy == .biometrics ? Int64(options.biometricUnlockSeconds) : nil
                    let done = readerDone(.skipped(.biometricsLocked))
                    say(request, exchange: Messages.biometricsLocked(policy: options.policy, timeLeft: until), isError: true)
                    if let done { return done }
                } else if wrong >= options.maxTries {
                    let done = readerDone(.exhausted)
                    say(request, exchange: Messages.tooManyWrongFingers, isError: true)
                    if let done { return done }
                } else {
                    say(request, exchange: Messages.notRecognised(triesLeft: options.maxTries - wrong), isError: true)
                }
            case .retry(let reason):
                say(request, exchange: Messages.retry(reason))
            case .unavailable(let why):
                logger.log(.notice, "reader failed for \(user.name): \(why)")
                let done = readerDone(.skipped(.readerUnavailable))
                say(request, notice: Messages.readerUnavailable)
                if let done { return done }
            case .timedOut:
                let done = readerDone(.skipped(.timedOut))
                // At a type-or-touch prompt the user is still being asked for something: say so.
                if terminal == nil { say(request, notice: Messages.timedOut, isError: false) } else { say(request, exchange: Messages.timedOut) }
                if let done { return done }
            }
        }
    }

    // MARK: step 7: the fallback decision, in one place

    func fallback(after finger: FingerResult, user: UserRecord, request: AuthRequest, store: AuthStore) -> Decision {
        switch (options.policy, finger) {
        case (_, .matched):
            recordSuccess(user: user.name, method: .fingerprint)
            return Decision(.success(.fingerprint), .matched, method: .fingerprint)
        case (.biometrics, .exhausted):
            return Decision(.maxTries, .wrongFinger, method: .fingerprint)
        case (.biometrics, .skipped(let reason)):
            return Decision(.unavailable, reason, method: .fingerprint)
        case (.biometricsOrPasscode, .exhausted), (.biometricsOrPasscode, .skipped):
            return passcodeStep(user: user, request: request, store: store)
        case (_, .ended(.cancelled)):
            return Decision(.conversationFailed, .cancelled)
        case (_, .ended(.conversationFailed)):
            return Decision(.conversationFailed, .conversationFailed)
        case (_, .ended(let reason)):
            return Decision(.unavailable, reason)
        case (.biometricsOrPasscode, .typedTooLong) where user.passcode != nil:
            if let refused = reservePasscodeAttempt(user: user, request: request, store: store) { return refused }
            return Decision(.denied, .passcodeTooLong, method: .passcode)
        case (_, .typedTooLong):
            return Decision(.unavailable, .passcodeTooLong)
        case (.biometricsOrPasscode, .typed(let secret)) where user.passcode != nil:
            return checkPasscode(secret, user: user, request: request, store: store)
        case (_, .typed(let secret)):
            // policy=biometrics (or no biounlock passcode): what was typed is the Unix password,
            // handed to the next module (pam_unix try_first_pass) instead of being asked again.
            let handed = conversation.handOverPassword(secret)
            return Decision(.unavailable, handed ? .passwordHandedOver : .noPasscode, method: .password)
        }
    }

    // MARK: step 8: the passcode

    func passcodeStep(user: UserRecord, request: AuthRequest, store: AuthStore) -> Decision {
        guard let stored = user.passcode else {
            // No biounlock passcode: the next module (pam_unix) asks for the password -- after the
            // same Argon2id work a wrong passcode costs, so the two cannot be told apart by time.
            Passcode.burnEquivalentWork()
            return Decision(.unavailable, .noPasscode)
        }
        switch conversation.promptSecret(Messages.passcodePrompt(service: request.service, kind: stored.kind)) {
        case .failed:
            return Decision(.conversationFailed, .conversationFailed, method: .passcode)
        case .empty:
            // Enter alone is a choice, not a failure: move on to the password at once.
            return Decision(.unavailable, .passcodeDeclined, method: .passcode)
        case .tooLong:
            if let refused = reservePasscodeAttempt(user: user, request: request, store: store) { return refused }
            say(request, notice: Messages.passcodeTooLong)
            return Decision(.denied, .passcodeTooLong, method: .passcode)
        case .answer(let typed):
            return checkPasscode(typed, user: user, request: request, store: store)
        }
    }

    func checkPasscode(_ typed: Secret, user: UserRecord, request: AuthRequest, store: AuthStore) -> Decision {
        guard let stored = user.passcode else { return Decision(.unavailable, .noPasscode) }
        do { try Passcode.checkUsable(stored.hash) } catch {
            logger.log(.error, "stored passcode for \(user.name) is unusable (\(error)); set it again with: biounlock passcode set \(user.name)")
            return Decision(.unavailable, .passcodeUnusable, method: .passcode)
        }
        // Count the attempt before checking it, atomically refused while the lockout runs: a guess
        // that cannot be counted (store read-only, disk full, write lock held past the busy
        // timeout, RLIMIT_FSIZE, the process killed after the check) would be a free guess, so it
        // is not checked at all and the stack moves on to the password; guesses made at the same
        // moment cannot outrun the lockout. A right passcode clears the count (recordSuccess).
        if let refused = reservePasscodeAttempt(user: user, request: request, store: store) { return refused }
        // A pattern is compared in its canonical form; one that breaks the rules cannot match,
        // but costs the same Argon2id work as any wrong passcode.
        let secret = stored.kind.normalized(typed) ?? typed
        do {
            if try Passcode.verify(secret, against: stored.hash) {
                recordSuccess(user: user.name, method: .passcode)
                return Decision(.success(.passcode), .passcodeAccepted, method: .passcode)
            }
        } catch {
            // Unreachable after checkUsable; an unusable hash never grants anything.
            return Decision(.unavailable, .passcodeUnusable, method: .passcode)
        }
        do { try store.recordLastFailure(user: user.name, at: clock.now()) } catch {
            logger.log(.error, "cannot record the time of a wrong passcode for \(user.name): \(error)")
        }
        say(request, notice: Messages.wrongPasscode)
        return Decision(.denied, .wrongPasscode, method: .passcode)
    }

    /// Counts the attempt before any hashing, atomically refusing it while the lockout runs (see
    /// AuthStore.reservePasscodeAttempt): nil to go on, or the decision that ends the attempt.
    /// An attempt that cannot be counted is not made: fall back to the password.
    func reservePasscodeAttempt(user: UserRecord, request: AuthRequest, store: AuthStore) -> Decision? {
        do {
            if try store.reservePasscodeAttempt(user: user.name, at: clock.now(), threshold: options.passcodeLockout) { return nil }
        } catch {
            logger.log(.error, "cannot count the passcode attempt of \(user.name): \(error)")
            return Decision(.unavailable, .storeUnavailable, method: .passcode)
        }
        // Locked by attempts made meanwhile (the check at the start saw it open).
        let now = clock.now()
        if let fresh = try? store.loadUser(user.name), case .locked(let until?) = Lockouts.passcode(fresh, options: options, now: now) {
            say(request, exchange: Messages.passcodeLocked(timeLeft: until &- now), isError: true)
        }
        return Decision(.denied, .passcodeLocked, method: .passcode)
    }

    // MARK: bookkeeping


    /// A success resets counters; run() writes it together with the audit event.
    func recordSuccess(user: String, method: AuthMethod) {
        pendingSuccess = (user, method)
    }

    func writeSuccess(user: String, method: AuthMethod, store: AuthStore) {
        // The decision stands even if the counters cannot be reset.
        do { try store.recordSuccess(user: user, method: method, at: clock.now(), bootID: bootID() ?? "") } catch {
            logger.log(.error, "cannot record success for \(user): \(error)")
        }
    }

    /// One audit row per transaction in which biounlock took part (when the store is open) and one
    /// log line, never a secret. A user who has not enabled biometric unlock gets the log line
    /// only (at debug level): the module stepped aside, so there is nothing to audit, and a row
    /// would cost every such sudo a synced write to the store (scripts/bench measured about 6 ms
    /// a transaction with it, about 0.3 ms without).
    /// Logs the line and returns the row, which run() writes (nil when there is none).
    func audit(_ decision: Decision, request: AuthRequest) -> AuditEvent? {
        let user = sanitizedForLog(request.user)
        let line = "user=\(user) service=\(sanitizedForLog(request.service)) method=\(decision.method.rawValue) outcome=\(decision.outcome.label) reason=\(decision.reason.rawValue)"
        logger.log(decision.outcome == .notEnabled ? .debug : .info, line)
        guard decision.outcome != .notEnabled else { return nil }
        return AuditEvent(time: clock.now(), user: user, service: sanitizedForLog(request.service),
                          tty: sanitizedForLog(request.tty), rhost: sanitizedForLog(request.rhost),
                          method: decision.method, outcome: decision.outcome.label, reason: decision.reason.rawValue)
    }

    func write(_ event: AuditEvent, store: AuthStore) {
        do { try store.appendEvent(event) } catch {
            // The decision stands: a full disk must not turn a success into a failure or the reverse.
            logger.log(.error, "cannot write audit event: \(error)")
        }
    }

    /// The request to touch the reader and the feedback on each touch are part of the exchange,
    /// like a password prompt, so they are shown even under PAM_SILENT. sudo passes PAM_SILENT on
    /// every call (sudo < 1.9.16 cannot be told otherwise); honouring it here would leave the user
    /// looking at a silent terminal while sudo waits for a finger -- approving something with no
    /// sign it is happening. pam_fprintd makes the same choice.
    func say(_ request: AuthRequest, exchange text: String, isError: Bool = false) {
        if let activeTerminal { return activeTerminal.message(text) }
        isError ? conversation.error(text) : conversation.info(text)
    }

    /// Notices about what happened (reader unavailable, timed out, wrong passcode) are suppressed
    /// by PAM_SILENT.
    func say(_ request: AuthRequest, notice text: String, isError: Bool = true) {
        guard !request.silent else { return }
        if let activeTerminal { return activeTerminal.message(text) }
        isError ? conversation.error(text) : conversation.info(text)
    }
}
