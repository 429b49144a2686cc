import BiounlockSystem

/// Who is authenticating, for what, and from where (read from PAM items by the module).
public struct AuthRequest: Sendable {
    public var user: String
    public var service: String
    public var tty: String
    public var rhost: String
    /// PAM_SILENT: no informational notices (prompts and the exchange around them still appear).
    public var silent: Bool

    public init(user: String, service: String, tty: String = "", rhost: String = "", silent: Bool = false) {
        self.user = user; self.service = service; self.tty = tty; self.rhost = rhost; self.silent = silent
    }
}

/// The biometric-or-passcode chain: the one place where biounlock decides (docs/DESIGN.md).
///
/// Steps, in order (each either decides or hands on):
///   1. remote    a remote session, under remote=ignore (default)    -> ignore
///   2. account   the user must exist on the system                  -> userUnknown
///   3. store     the store must open and be trusted                 -> unavailable
///   4. toggle    biometric unlock enabled for this service, and the row this account's? -> ignore
///   4b. login    a login service, first login of the boot: the Unix password  -> unavailable
///   5. passcode  locked? then only the finger and the password are taken, and the user is told
///   6. gates     biometrics locked, passcode required, remote=passcode, lid closed -> no finger
///   7. reader    something enrolled, the reader opens               -> else no finger
///   8. ask       type or touch on a terminal, the touch then the prompt elsewhere
///                (PolicyChain+Asking)                               -> an Entry
///   9. fallback  one decision from (policy, Entry)                  -> success / maxTries /
///                unavailable, with typed text that is not the passcode handed on as PAM_AUTHTOK
/// Whatever goes wrong inside a step falls towards the password (unavailable), never to success,
/// and no step refuses before the user could use the finger or the password: a lockout only
/// takes away what failed.
public final class PolicyChain {
    public typealias StoreOpener = () -> Result<AuthStore, StoreFailure>
    /// The account of a name: nil when there is none, a failure when NSS could not say.
    public typealias AccountLookup = (String) -> Result<Account?, Errno>

    /// The options as configured (the module's line over the config file).
    let configured: Options
    /// The options of this run: `configured` as it applies to the request's service
    /// (`Options.serving`: a fingerprint stack is the reader alone), set first by `run`.
    private(set) var options: Options
    let conversation: Conversation
    let logger: Logger
    let sensors: SensorProvider
    let openStore: StoreOpener
    let lookupAccount: AccountLookup
    let clock: Clock

    let sessionFacts: () -> SessionFacts
    let readBootID: () -> String?
    /// This run's boot id, read once (the finger gate and the success record both need it).
    private var bootIDOfThisRun: String??
    let terminal: () -> TypeOrTouchTerminal?
    /// While a type-or-touch prompt is up, messages go to it instead of the conversation.
    var activeTerminal: TypeOrTouchTerminal?
    /// Ctrl-C was pressed at this terminal: its SIGINT is delivered once the audit row is written.
    var interruptedTerminal: TypeOrTouchTerminal?
    /// The type-or-touch terminal found while deciding whether the face may be used (step 7),
    /// kept for step 8 so that it is looked for once.
    var heldTerminal: TypeOrTouchTerminal?

    public init(options: Options, conversation: Conversation, logger: Logger, sensors: SensorProvider,
                openStore: @escaping StoreOpener, lookupAccount: @escaping AccountLookup = Accounts.find,
                clock: Clock = SystemClock(), sessionFacts: @escaping () -> SessionFacts = { SessionFacts() },
                bootID: @escaping () -> String? = { SessionProbe.currentBootID },
                terminal: @escaping () -> TypeOrTouchTerminal? = { nil }) {
        self.configured = options; self.options = options; self.conversation = conversation; self.logger = logger
        self.sensors = sensors; self.openStore = openStore; self.lookupAccount = lookupAccount; self.clock = clock
        self.sessionFacts = sessionFacts; self.readBootID = bootID; self.terminal = terminal
    }

    func bootID() -> String? {
        if case .some(let known) = bootIDOfThisRun { return known }
        let id = readBootID()
        bootIDOfThisRun = .some(id)
        return id
    }

    /// What the user gave biounlock once the finger and the prompts are done.
    enum Entry {
        case matched(Finger)
        /// The camera saw the user's face.
        case matchedFace
        /// Wrong finger `max_tries` times, under policy=biometrics without a prompt to type at.
        case exhausted
        /// A line typed at biounlock's prompt: the passcode, or (if not) the Unix password.
        case typed(Secret)
        /// A line longer than Secret.maximumLength (it cannot be a passcode, nor be handed on).
        case typedTooLong
        /// Nothing typed: Enter alone, nothing usable, no touch in time (why).
        case nothing(Reason)
        /// Ctrl-C at a type-or-touch prompt.
        case cancelled
        case conversationFailed
    }

    /// The success to record when the chain ends (see run).
    var pendingSuccess: (user: String, method: AuthMethod)?
    /// The reader of this run, released by run() once the decision's rows are written: after a
    /// match its release runs meanwhile (FingerSession.next), and still ends before the
    /// transaction returns.
    private var sessionInUse: FingerSession?
    /// The decision's audit row is committed already (a passcode success writes it together with
    /// the counter reset: AuthStore.attemptPasscode's onAccepted).
    private var auditWritten = false

    /// Runs the chain once and writes its audit event. Never traps, never returns success by accident.
    public func run(_ request: AuthRequest) -> Decision {
        options = configured.serving(request.service)
        var store: AuthStore?
        pendingSuccess = nil
        auditWritten = false
        heldTerminal = nil
        bootIDOfThisRun = nil
        sessionInUse = nil
        let decision = decide(request, store: &store)
        let event = audit(decision, request: request)
        if let store {
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
            } else if let event, !auditWritten {
                write(event, store: store)
            }
        }
        // The store is closed first (its connection's end, and a long WAL's checkpoint), while a
        // matched reader's release still runs in the helper; the reading session let it go.
        store = nil
        // The reader is free before the transaction returns (and before a Ctrl-C's signal).
        sessionInUse?.release()
        sessionInUse = nil
        // Ctrl-C: the row is written first, then the host gets the signal its own prompt would.
        if let interrupted = interruptedTerminal {
            interruptedTerminal = nil
            interrupted.deliverInterrupt()
        }
        return decision
    }

    func decide(_ request: AuthRequest, store storeOut: inout AuthStore?) -> Decision {
        let facts = sessionFacts()
        if options.remote == .ignore, let why = facts.remote {
            // A short PIN is a credential of this device, not of the network: a remote login is
            // left to what the remote service checks itself (the password, keys).
            logger.log(.debug, "user=\(sanitizedForLog(request.user)) remote session (\(why)): left to the next module")
            return Decision(.ignore, .remoteSession)
        }
        let found: Account?
        switch lookupAccount(request.user) {
        case .success(let account): found = account
        case .failure(let error):
            // No account, no binding check: nothing is asked, counted or recorded (not even the
            // password's success, PasswordWitness), and the stack goes on to the password.
            logger.log(.error, "cannot look up \(sanitizedForLog(request.user)) in the account database: \(error)")
            return Decision(.unavailable, .accountsUnavailable)
        }
        guard let account = found else {
            // As fast as a known user who has not enabled biometric unlock: the same store lookup
            // and no Argon2id, so that neither time nor prompt tells which names exist (the next
            // module, pam_unix, evens out its own timing). No audit row, as for "not enabled".
            if case .success(let store) = openStore() { _ = try? store.loadUser(request.user, withTemplates: false) }
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
            guard let found = try store.loadUser(account.name, withTemplates: false) else { return Decision(.ignore, .notEnabled) }
            // passcode_only (biounlockd's re-authentication stack, which is no login service of its
            // own): a user who has biometric unlock on anywhere has a passcode in use, and may type it.
            guard options.passcodeOnly ? found.isEnabledForAnyService : found.isEnabled(for: request.service) else {
                // Off for this service, on for another (the greeter's password stack beside its
                // fingerprint stack: `disable --service gdm-password`): nothing is asked or counted,
                // but the password the stack goes on to proves the user as it does where biounlock
                // hands them on, so pam_sm_setcred records it (PasswordWitness) -- else the rules
                // "after a boot" and "after an enrolment change" would keep the finger off in the
                // fingerprint stack. Only for the account the row belongs to.
                if found.isEnabledForAnyService, AccountBinding.of(found, account: account).isBound {
                    return Decision(.ignore, .disabledForService)
                }
                return Decision(.ignore, .notEnabled)
            }
            user = found
        } catch {
            // The first read is also where the store's schema version is checked (and where a
            // store that cannot be read at all fails): the same "unavailable" as a failed open,
            // and, as for one, no audit row is tried in a store that could not be read.
            logger.log(.error, "store unavailable: \(error)")
            storeOut = nil
            return Decision(.unavailable, .storeUnavailable)
        }
        // The row must belong to this account, not just to its name (AccountBinding): a name given
        // to a new account after the old one was deleted inherits nothing.
        let binding = AccountBinding.of(user, account: account)
        guard binding.isBound else {
            logger.log(.warning, "\(binding.problem(user: account.name)); ignored until cleared with: \(AccountBinding.fix(user: account.name))")
            return Decision(.ignore, .recordOfAnotherAccount)
        }
        // Login services: the first login of a boot takes the Unix password (no finger, no passcode).
        if let required = passwordGate(user: user, request: request) { return Decision(.unavailable, required) }

        let now = clock.now()
        let passcode = options.policy == .biometricsOrPasscode ? user.passcode : nil
        var passcodeLockedUntil: Int64?
        // Locked, unless attempts that are being checked right now may yet lift it (their counts
        // are in the record already): then the passcode is still taken, and its attempt waits for them.
        if passcode != nil, case .locked(let until?) = Lockouts.passcode(user, options: options, now: now),
           !store.passcodeAttemptsInFlight(user: user.name) {
            passcodeLockedUntil = until
        }
        // What biounlock's prompt takes: the passcode only while it can be checked.
        let takes: Messages.Takes = passcode.map { passcodeLockedUntil == nil ? .passcodeOrPassword($0.kind) : .password } ?? .password

        // passcode_only: the reader is never opened and no finger gate is consulted, so a touch can
        // never answer this stack (biounlockd's re-authentication: a finger must never authorise
        // enrolling another finger). Only the typed passcode is checked; anything else is handed on.
        //
        // A password stack beside a fingerprint stack (password_services: Debian's gdm-password
        // through common-auth, beside gdm-fingerprint): the reader is that stack's, so it is never
        // opened here and the prompt is up at once, without the touch request's touch_first wait.
        // The gates are not consulted either (their messages are about the finger).
        let readerElsewhere = !options.passcodeOnly && options.passwordServices.contains(request.service)
        var noFinger = options.passcodeOnly ? nil
            : readerElsewhere ? Reason.readerInFingerprintStack
            : fingerGate(user: user, request: request, store: store, facts: facts, now: now, takes: takes)
        var session: FingerSession?
        if noFinger == nil && !options.passcodeOnly {
            switch openReader(user: user, request: request, store: store, facts: facts) {
            case .success(let s): session = s
            case .failure(let reason): noFinger = reason
            }
        }
        // Released by run(), after the decision's rows are written.
        sessionInUse = session
        if let until = passcodeLockedUntil, let kind = passcode?.kind {
            say(request, exchange: Messages.passcodeLocked(kind, timeLeft: until &- now, fingerUsable: session != nil), isError: true)
        }

        let entry: Entry
        if let session {
            entry = ask(session, takes: takes, request: request)
        } else if case .passcodeOrPassword = takes, !options.readerAlone {
            entry = askText(Messages.typePrompt(service: request.service, takes: takes), whenEmpty: .passcodeDeclined)
        } else {
            // Neither the finger nor the passcode can be used now (or, in a fingerprint stack, the
            // finger cannot and nothing is typed there): the password, at once.
            entry = .nothing(passcodeLockedUntil != nil ? .passcodeLocked : noFinger ?? .noPasscode)
        }
        return fallback(after: entry, user: user, passcodeLocked: passcodeLockedUntil != nil, usedFinger: session != nil,
                        request: request, store: store)
    }

    // MARK: step 4b: the login services' password once per boot

    /// At a login service (`login_services`: login, the greeters) under require_passcode's rule
    /// "after a restart", the first login of each boot takes the Unix password -- the one secret
    /// that opens the user's keyring -- and nothing of biounlock's: neither the finger nor the
    /// passcode is offered, the user is told, and the stack's password module asks (unavailable;
    /// the greeter's fingerprint stack, biounlock alone, fails at once and the greeter shows its
    /// password field). The password's success is seen in pam_sm_setcred (PasswordWitness) and
    /// recorded with the boot id; the passcode does not satisfy this rule. An unreadable boot id
    /// counts as a new boot. Service names compare byte for byte. Issue 32, docs/DESIGN.md.
    func passwordGate(user: UserRecord, request: AuthRequest) -> Reason? {
        guard !options.passcodeOnly, options.requirePasscode.afterBoot,
              options.loginServices.contains(where: { $0.utf8.elementsEqual(request.service.utf8) }) else { return nil }
        if let boot = bootID(), let seen = user.passwordBootID, seen.utf8.elementsEqual(boot.utf8) { return nil }
        logger.log(.info, "user=\(sanitizedForLog(user.name)) service=\(sanitizedForLog(request.service)) first login of this boot: the Unix password")
        say(request, exchange: Messages.passwordRequiredAfterRestart)
        return .passwordRequiredAfterBoot
    }

    // MARK: step 6: the gates before the finger

    /// Why the finger must not be asked for now (and says so), or nil to ask for it.
    func fingerGate(user: UserRecord, request: AuthRequest, store: AuthStore, facts: SessionFacts, now: Int64,
                    takes: Messages.Takes) -> Reason? {
        switch Lockouts.biometric(user, options: options, now: now) {
        case .locked(let until):
            say(request, exchange: Messages.biometricsLocked(policy: options.policy, timeLeft: until.map { $0 &- now },
                                                              passcode: takes.passcodeKind), isError: true)
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
            say(request, exchange: Messages.passcodeRequired(required, policy: options.policy, kind: user.passcode?.kind, options: options))
            return required
        }
        if options.remote != .allow, let why = facts.remote {
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

    // MARK: step 7: the reader

    func openReader(user: UserRecord, request: AuthRequest, store: AuthStore, facts: SessionFacts = SessionFacts()) -> Result<FingerSession, Reason> {
        // The prints are read now, not with the row: only an attempt that gets this far needs them.
        var user = user
        do { user.templates = try store.templates(user: user.name) } catch {
            logger.log(.error, "store unreadable: \(error)")
            return .failure(.storeUnavailable)
        }
        // The face, when it may be used in this transaction (PolicyChain+Face.swift).
        user.faceTemplates = faceTemplates(user: user, request: request, facts: facts, store: store)
        // The provider decides what "enrolled" means: the store's templates, or (sensor=fprintd)
        // the fingers fprintd holds for the user (SensorProvider.openReader(for:options:)).
        switch sensors.openReader(for: user, options: options) {
        case .ready(let sensor, let templates):
            if let required = fprintdPrintsChanged(user: user, templates: templates, store: store) {
                sensor.close()
                say(request, exchange: Messages.passcodeRequired(required, policy: options.policy, kind: user.passcode?.kind, options: options))
                return .failure(required)
            }
            return .success(FingerSession(sensor: sensor, templates: templates, user: user.name, store: store,
                                          options: options, clock: clock, logger: logger))
        case .nothingEnrolled:
            say(request, notice: Messages.nothingEnrolled)
            return .failure(.nothingEnrolled)
        case .unavailable(let why):
            logger.log(.notice, "reader unavailable for \(user.name): \(why)")
            say(request, notice: Messages.readerUnavailable)
            return .failure(.readerUnavailable)
        }
    }

    /// sensor=fprintd: whether the prints fprintd holds for the user changed since biounlock last
    /// saw them (GNOME Settings, KDE, fprintd-enroll; FprintdPrints): the change is recorded, as
    /// `biounlock enrol` records its own, and with require_passcode=enrolment the passcode is
    /// required before the finger (the reason, or nil to ask for the finger). A change that
    /// cannot be recorded still requires it now: the next attempt sees the change again.
    func fprintdPrintsChanged(user: UserRecord, templates: [Template], store: AuthStore) -> Reason? {
        guard !templates.isEmpty, templates.allSatisfy({ $0.sensor == .fprintd }),
              let prints = FprintdPrints.afterSeeing(templates, stored: user.fprintdPrints) else { return nil }
        logger.log(.notice, "the prints fprintd holds for \(user.name) are not the ones biounlock last saw: an enrolment change")
        do { try store.noteFprintdPrints(user: user.name, prints: prints) } catch {
            logger.log(.error, "cannot record the enrolment change of \(user.name): \(error)")
        }
        return options.requirePasscode.afterEnrolmentChange ? .passcodeRequiredAfterEnrolment : nil
    }

    // MARK: step 9: the fallback decision, in one place

    func fallback(after entry: Entry, user: UserRecord, passcodeLocked: Bool, usedFinger: Bool,
                  request: AuthRequest, store: AuthStore) -> Decision {
        switch entry {
        case .matched:
            recordSuccess(user: user.name, method: .fingerprint)
            return Decision(.success(.fingerprint), .matched, method: .fingerprint)
        case .matchedFace:
            recordSuccess(user: user.name, method: .face)
            return Decision(.success(.face), .faceMatched, method: .face)
        case .exhausted:
            return Decision(.maxTries, .wrongFinger, method: .fingerprint)
        case .nothing(let reason):
            return Decision(.unavailable, reason, method: usedFinger ? .fingerprint : .none)
        case .cancelled:
            return Decision(.conversationFailed, .cancelled)
        case .conversationFailed:
            return Decision(.conversationFailed, .conversationFailed)
        case .typedTooLong:
            // Longer than any passcode, and than pam_unix takes: nothing counted, nothing handed on.
            return Decision(.unavailable, .passcodeTooLong)
        case .typed(let typed):
            return decideTyped(typed, user: user, passcodeLocked: passcodeLocked, request: request, store: store)
        }
    }

    /// A line typed at biounlock's prompt: the passcode, checked (and counted) when it can be the
    /// passcode and the passcode is not locked; otherwise, and when it is wrong, it is handed on
    /// as PAM_AUTHTOK so that the next module (pam_unix try_first_pass) decides whether it is the
    /// Unix password. Nothing is shown for a wrong passcode: the caller reports the final failure.
    /// The passcode itself, once verified, never becomes PAM_AUTHTOK.
    ///
    /// Cost (TimingTests): a wrong passcode and no passcode each cost one Argon2id computation at
    /// the shipped cost, so the two cannot be told apart by time. While the passcode is locked
    /// nothing is checked and no Argon2id runs: a lockout also spares the machine a guessing run,
    /// and it is no secret (the user is told, and the guesses that caused it were the guesser's).
    /// Text that cannot be a passcode of the user's kind (letters for a PIN) costs none and is not
    /// counted, so that callers which never call pam_setcred (polkit's helper, some lockers) do
    /// not pile up failures from a correct Unix password.
    func decideTyped(_ typed: Secret, user: UserRecord, passcodeLocked: Bool, request: AuthRequest, store: AuthStore) -> Decision {
        guard options.policy == .biometricsOrPasscode else { return handOn(typed, .passwordHandedOver) }
        guard let stored = user.passcode else {
            Passcode.burnEquivalentWork()
            return handOn(typed, .noPasscode)
        }
        guard stored.kind.accepts(typed) else { return handOn(typed, .passwordHandedOver) }
        if passcodeLocked { return handOn(typed, .passcodeLocked, method: .passcode) }
        let cost: (memoryKiB: Int, passes: Int)
        do { cost = try Passcode.checkUsable(stored.hash) } catch {
            logger.log(.error, "stored passcode for \(user.name) is unusable (\(error)); set it again with: biounlock passcode set \(user.name)")
            return handOn(typed, .passcodeUnusable, method: .passcode)
        }
        guard Passcode.limitsAllow(cost) else {
            logger.log(.error, "the passcode of \(user.name) was not checked: this process's resource limits (RLIMIT_AS, RLIMIT_DATA or RLIMIT_CPU) leave too little room for Argon2id (\(cost.memoryKiB) KiB); nothing counted, handed on to the password")
            return handOn(typed, .resourceLimit, method: .passcode)
        }
        // A pattern is compared in its canonical form (problem(with:) said it has one).
        let secret = stored.kind.normalized(typed) ?? typed
        // One call does the whole attempt (AuthStore.attemptPasscode): count it before checking it,
        // atomically refused while the lockout runs -- after waiting for the user's attempts in
        // flight, one of which may be right; a guess that cannot be counted (store read-only, disk
        // full, no turn in time, RLIMIT_FSIZE or RLIMIT_NOFILE, the process killed after the
        // check) would be a free guess, so it is not checked at all and goes on to the password;
        // a right passcode clears the count before it leaves flight.
        let attempt: PasscodeAttempt
        let accepted = Decision(.success(.passcode), .passcodeAccepted, method: .passcode)
        do {
            attempt = try store.attemptPasscode(user: user.name, threshold: options.passcodeLockout, clock: clock, bootID: bootID() ?? "", onAccepted: {
                // The success's audit row in the commit that clears the counters: one commit after
                // the count instead of two (scripts/bench, the passcode path).
                if let event = auditEvent(accepted, request: request) { write(event, store: store) }
            }) {
                // Unusable hashes were refused above; should verify throw anyway, it is no match.
                (try? Passcode.verify(secret, against: stored.hash)) ?? false
            }
        } catch {
            logger.log(.error, "cannot count the passcode attempt of \(user.name): \(error)")
            return handOn(typed, .storeUnavailable, method: .passcode)
        }
        switch attempt {
        case .accepted(let resetFailure):
            // The counters are cleared and the audit row written, in one commit; if that commit
            // failed, run() tries the audit row alone.
            if let resetFailure { logger.log(.error, "cannot record success for \(user.name): \(resetFailure)") } else { auditWritten = true }
            return accepted
        case .rejected(_, let writeFailure):
            if let writeFailure { logger.log(.error, "cannot record the time of a wrong passcode for \(user.name): \(writeFailure)") }
            return handOn(typed, .wrongPasscode, method: .passcode)
        case .locked(let until):
            // Locked by attempts made meanwhile (the check at the start saw it open): not checked,
            // and the user told once.
            if let until { say(request, exchange: Messages.passcodeLocked(stored.kind, timeLeft: until &- clock.now(), fingerUsable: false), isError: true) }
            return handOn(typed, .passcodeLocked, method: .passcode)
        }
    }

    /// Hands typed text to the next module as PAM_AUTHTOK (libpam keeps its own copy and wipes it
    /// at pam_end); the stack moves on (PAM_AUTHINFO_UNAVAIL).
    func handOn(_ typed: Secret, _ reason: Reason, method: AuthMethod = .password) -> Decision {
        if !conversation.handOverPassword(typed) {
            logger.log(.notice, "could not hand the typed text on to the next module; it will ask itself")
        }
        return Decision(.unavailable, reason, method: method)
    }
}

extension Messages.Takes {
    /// The passcode kind the prompt takes, if it takes one.
    var passcodeKind: PasscodeKind? {
        if case .passcodeOrPassword(let kind) = self { return kind }
        return nil
    }
}
