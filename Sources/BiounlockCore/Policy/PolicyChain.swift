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
///   4. finger    touch the reader (max_tries, timeout)           -> success, or a FingerResult
///   5. fallback  one decision from (policy, FingerResult)        -> maxTries / unavailable / passcode
///   6. passcode  biounlock's own passcode (passcode policy only) -> success / denied / unavailable
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

    public init(options: Options, conversation: Conversation, logger: Logger, sensors: SensorProvider,
                openStore: @escaping StoreOpener, lookupAccount: @escaping AccountLookup = Accounts.lookup,
                clock: Clock = SystemClock()) {
        self.options = options; self.conversation = conversation; self.logger = logger
        self.sensors = sensors; self.openStore = openStore; self.lookupAccount = lookupAccount; self.clock = clock
    }

    /// How the finger step ended when it did not match.
    enum FingerResult: Equatable {
        case matched(Finger)
        /// Wrong finger `max_tries` times.
        case exhausted
        /// The finger step could not be used (no reader, nothing enrolled, timeout, store error).
        case skipped(Reason)
    }

    /// Runs the chain once and writes its audit event. Never traps, never returns success by accident.
    public func run(_ request: AuthRequest) -> Decision {
        var store: AuthStore?
        let decision = decide(request, store: &store)
        audit(decision, request: request, store: store)
        return decision
    }

    func decide(_ request: AuthRequest, store storeOut: inout AuthStore?) -> Decision {
        guard let account = lookupAccount(request.user) else {
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

        let finger = fingerStep(user: user, request: request, store: store)
        return fallback(after: finger, user: user, request: request, store: store)
    }

    // MARK: step 4: the finger

    func fingerStep(user: UserRecord, request: AuthRequest, store: AuthStore) -> FingerResult {
        let templates = user.templates.filter { $0.sensor == options.sensor }
        guard !templates.isEmpty else {
            say(request, error: Messages.nothingEnrolled)
            return .skipped(.nothingEnrolled)
        }
        let sensor: FingerprintSensor
        switch sensors.open(options, for: templates) {
        case .success(let s): sensor = s
        case .failure(let why):
            logger.log(.notice, "reader unavailable for \(user.name): \(why)")
            say(request, error: Messages.readerUnavailable)
            return .skipped(.readerUnavailable)
        }
        defer { sensor.close() }

        say(request, info: Messages.touchPrompt(service: request.service))
        let deadline = Deadline.after(milliseconds: Int64(options.timeoutSeconds) * 1000, clock: clock)
        var wrong = 0
        while true {
            switch sensor.verify(against: templates, deadline: deadline) {
            case .match(let finger):
                return .matched(finger)
            case .noMatch:
                wrong += 1
                do {
                    try store.recordBiometricFailure(user: user.name, at: clock.now())
                } catch {
                    // A failure we cannot count must not buy unlimited guesses: stop using the finger.
                    logger.log(.error, "cannot record failed match for \(user.name): \(error)")
                    return .skipped(.storeUnavailable)
                }
                if wrong >= options.maxTries {
                    say(request, error: Messages.tooManyWrongFingers)
                    return .exhausted
                }
                say(request, error: Messages.notRecognised(triesLeft: options.maxTries - wrong))
            case .retry(let reason):
                say(request, info: Messages.retry(reason))
            case .unavailable(let why):
                logger.log(.notice, "reader failed for \(user.name): \(why)")
                say(request, error: Messages.readerUnavailable)
                return .skipped(.readerUnavailable)
            case .timedOut:
                say(request, info: Messages.timedOut)
                return .skipped(.timedOut)
            }
        }
    }

    // MARK: step 5: the fallback decision, in one place

    func fallback(after finger: FingerResult, user: UserRecord, request: AuthRequest, store: AuthStore) -> Decision {
        switch (options.policy, finger) {
        case (_, .matched):
            recordSuccess(user: user.name, method: .fingerprint, store: store)
            return Decision(.success(.fingerprint), .matched, method: .fingerprint)
        case (.biometrics, .exhausted):
            return Decision(.maxTries, .wrongFinger, method: .fingerprint)
        case (.biometrics, .skipped(let reason)):
            return Decision(.unavailable, reason, method: .fingerprint)
        case (.biometricsOrPasscode, .exhausted), (.biometricsOrPasscode, .skipped):
            return passcodeStep(user: user, request: request, store: store)
        }
    }

    // MARK: step 6: the passcode

    func passcodeStep(user: UserRecord, request: AuthRequest, store: AuthStore) -> Decision {
        guard let stored = user.passcode else {
            // No biounlock passcode: the next module (pam_unix) asks for the password.
            return Decision(.unavailable, .noPasscode)
        }
        switch conversation.promptSecret(Messages.passcodePrompt(service: request.service, kind: stored.kind)) {
        case .failed:
            return Decision(.conversationFailed, .conversationFailed, method: .passcode)
        case .empty:
            // Enter alone is a choice, not a failure: move on to the password at once.
            return Decision(.unavailable, .passcodeDeclined, method: .passcode)
        case .tooLong:
            countPasscodeFailure(user: user.name, store: store)
            say(request, error: Messages.passcodeTooLong)
            return Decision(.denied, .passcodeTooLong, method: .passcode)
        case .answer(let secret):
            do {
                if try Passcode.verify(secret, against: stored.hash) {
                    recordSuccess(user: user.name, method: .passcode, store: store)
                    return Decision(.success(.passcode), .passcodeAccepted, method: .passcode)
                }
            } catch {
                logger.log(.error, "stored passcode for \(user.name) is unusable (\(error)); set it again with: biounlock passcode set \(user.name)")
                return Decision(.unavailable, .passcodeUnusable, method: .passcode)
            }
            countPasscodeFailure(user: user.name, store: store)
            say(request, error: Messages.wrongPasscode)
            return Decision(.denied, .wrongPasscode, method: .passcode)
        }
    }

    // MARK: bookkeeping

    func countPasscodeFailure(user: String, store: AuthStore) {
        do { try store.recordPasscodeFailure(user: user, at: clock.now()) } catch {
            logger.log(.error, "cannot record wrong passcode for \(user): \(error)")
        }
    }

    func recordSuccess(user: String, method: AuthMethod, store: AuthStore) {
        // The decision stands even if the counters cannot be reset.
        do { try store.recordSuccess(user: user, method: method, at: clock.now()) } catch {
            logger.log(.error, "cannot record success for \(user): \(error)")
        }
    }

    /// One audit row per transaction (when the store is open) and one log line, never a secret.
    func audit(_ decision: Decision, request: AuthRequest, store: AuthStore?) {
        let user = sanitizedForLog(request.user)
        let line = "user=\(user) service=\(sanitizedForLog(request.service)) method=\(decision.method.rawValue) outcome=\(decision.outcome.label) reason=\(decision.reason.rawValue)"
        logger.log(decision.outcome == .notEnabled ? .debug : .info, line)
        guard let store else { return }
        let event = AuditEvent(time: clock.now(), user: user, service: sanitizedForLog(request.service),
                               tty: sanitizedForLog(request.tty), rhost: sanitizedForLog(request.rhost),
                               method: decision.method, outcome: decision.outcome.label, reason: decision.reason.rawValue)
        do { try store.appendEvent(event) } catch {
            // The decision stands: a full disk must not turn a success into a failure or the reverse.
            logger.log(.error, "cannot write audit event: \(error)")
        }
    }

    func say(_ request: AuthRequest, info text: String) {
        if !request.silent { conversation.info(text) }
    }

    func say(_ request: AuthRequest, error text: String) {
        if !request.silent { conversation.error(text) }
    }
}
