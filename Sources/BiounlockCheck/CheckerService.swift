import BiounlockSystem
import BiounlockCore
import BiounlockChain
import BiounlockFprintProtocol
import BiounlockCheckProtocol

/// biounlock-check's one job, as a library so that the tests drive it in-process: read one
/// request from the module, and run the SAME PolicyChain a root caller runs -- same store,
/// counters, lockouts, audit rows and log lines -- for the user who ran the checker and nobody
/// else, with the conversation relayed to the module (RelayedConversation).
///
/// Trust decisions (docs/SECURITY.md, "biounlock-check"):
/// - **Who**: the caller is the account of the checker's real uid, resolved by the executable
///   before anything else (`caller`). The request must name exactly that account, byte for byte
///   (never by Unicode equivalence); any other name is refused and logged (`other-user-refused`),
///   before any store is opened.
/// - **Settings**: the root-owned config file (`loadOptions`: /etc/security/biounlock.conf, checked
///   as the module checks it), plus only those of the module's pam.d words that cannot widen
///   what the caller can do (Options.applyingCallerArguments): no path, sensor, count or rule
///   ever comes from the caller.
/// - **Where from**: PAM_RHOST, PAM_TTY and SSH_CONNECTION/SSH_CLIENT as the module relays them
///   can only make the session look remote (fewer ways in); the logind session is the checker's
///   own audit session (/proc/self/sessionid, inherited from the caller and not forgeable by it),
///   never an XDG_SESSION_ID the caller names (SessionProbe reads none, for any caller).
/// - **What it grants**: a Decision sent to the caller, nothing else: it sets no credentials,
///   starts nothing, changes no file but the store's counters and audit rows (as a root caller's
///   transaction would).
/// - **How fast**: one check per user at a time (CallerLock), on top of the passcode lockout.
/// - **In which language**: the caller's. The checker runs with a cleared environment in the C
///   locale, but what it says is shown by the caller's locker, so the module relays the name of
///   the locale its messages are in and LANGUAGE (Localization.callerLanguage) and the checker
///   speaks that language: the same texts a root caller's module shows in that locale, from the
///   same checked catalogs (`locale_dir` of the checker's own config file, never the caller's).
///   Decided here rather than by the module translating message ids the checker sends: the chain's
///   texts are built where they are said (placeholders filled, plural chosen, `reason=` kept), and
///   one place, Localization, translates them for every caller. The names are taken only when
///   plain (Localization.isPlainLocaleName: letters, digits, `_ . @ -`, never '/'); anything else
///   is English and a log line. A name chooses a language, nothing else: no file, count or rule.
public struct CheckerService {
    public var caller: Account
    public var logger: ServiceLogger
    /// Turns debug lines on or off in the base logger (from the file's `debug`).
    public var setDebug: (Bool) -> Void = { _ in }
    public var loadOptions: () -> Result<Configuration.Loaded, Configuration.Failure> = { Configuration.load(arguments: []) }
    public var sensors: SensorProvider
    public var openStore: (Options) -> Result<AuthStore, StoreFailure>
    public var lookupAccount: PolicyChain.AccountLookup = Accounts.find
    public var clock: Clock = SystemClock()
    public var bootID: () -> String? = { SessionProbe.currentBootID }
    /// Switches the checker's process to the caller's language (a plain locale name and a plain
    /// LANGUAGE list, or empty strings) before the chain speaks; the executable sets it
    /// (biounlock-check's CheckerLanguage), since this library is linked into the module too and
    /// the module never sets a locale. Returns false when the system has no such locale (English).
    public var useLanguage: (_ locale: String, _ language: String) -> Bool = { _, _ in false }
    public var hostname: () -> String? = { SessionProbe.hostname() }
    /// Whether the text is the Unix password of the user (true, false, nil: cannot tell), checked
    /// by this process as root against the shadow file. The executable sets it (biounlock-check's
    /// UnixPassword, over CUnixPassword: libcrypt stays out of the module, which links this
    /// library too); by default nothing is checked and nothing recorded.
    public var checkUnixPassword: (_ user: String, _ typed: Secret) -> Bool? = { _, _ in nil }
    /// The resource limits the executable could not raise (ProcessState.raiseLimits): when there
    /// is any, nothing is checked -- a guess counted and then not checked would turn a right
    /// passcode into a failure -- and the module falls back to the password.
    public var limitProblems: [String] = []
    /// Monotonic milliseconds by which the checker is done, whatever happens.
    public var end: Int64
    /// Longest wait for the module's request.
    public static let requestMilliseconds: Int64 = 5_000

    public init(caller: Account, logger: ServiceLogger, sensors: SensorProvider,
                openStore: @escaping (Options) -> Result<AuthStore, StoreFailure>, end: Int64) {
        self.caller = caller; self.logger = logger; self.sensors = sensors; self.openStore = openStore; self.end = end
    }

    /// Serves one request on `channel`; returns the decision it sent (or would have sent).
    @discardableResult
    public func serve(_ channel: FrameChannel) -> Decision {
        let deadline = min(monotonicMilliseconds() &+ CheckerService.requestMilliseconds, end)
        let request: CheckRequest
        switch channel.receive(until: deadline) {
        case .failure(let f):
            logger.log(.notice, "uid \(caller.uid): no request (\(f))")
            return Decision(.unavailable, .checkerUnavailable)
        case .success(var payload):
            defer { Memory.zero(&payload) }
            guard case .authenticate(let r)? = ModuleMessage(payload: payload) else {
                logger.log(.warning, "uid \(caller.uid) (\(sanitizedForLog(caller.name))): malformed request; nothing checked")
                return answer(Decision(.unavailable, .checkerUnavailable), on: channel)
            }
            request = r
        }
        logger.service = request.service
        // The one identity check: the request is about the caller, or about nobody. Byte for
        // byte: Swift's `==` is canonical equivalence, under which uid 2004 `jose\u{301}` and
        // uid 2003 `jos\u{e9}` are "equal" names of two accounts (docs/SECURITY.md, finding
        // 28.2). The chain then runs on the caller's own name as NSS gave it for the real uid.
        guard request.user.utf8.elementsEqual(caller.name.utf8) else {
            logger.log(.warning, "uid \(caller.uid) (\(sanitizedForLog(caller.name))) asked to authenticate \(sanitizedForLog(request.user)): refused (biounlock-check authenticates only the user who runs it)")
            return answer(Decision(.unavailable, .otherUserRefused), on: channel)
        }
        guard limitProblems.isEmpty else {
            logger.log(.error, "uid \(caller.uid): \(limitProblems.joined(separator: "; ")); nothing checked, falling back to the password")
            return answer(Decision(.unavailable, .resourceLimit), on: channel)
        }
        guard CheckerService.isPlausibleService(request.service) else {
            logger.log(.warning, "uid \(caller.uid): service name refused; nothing checked")
            return answer(Decision(.unavailable, .checkerUnavailable), on: channel)
        }

        let loaded: Configuration.Loaded
        switch loadOptions() {
        case .success(let l): loaded = l
        case .failure(let failure):
            logger.log(.error, "\(failure); falling back to the password")
            return answer(Decision(.unavailable, .checkerUnavailable), on: channel)
        }
        loaded.report(to: logger)
        let (options, ignored) = loaded.options.applyingCallerArguments(request.words)
        setDebug(options.debug)
        if !ignored.isEmpty {
            logger.log(.notice, "not taken from the caller: \(ignored.joined(separator: ", ")) (the checker reads paths, sensors, counts and rules from \(options.configPath) only)")
        }
        chooseLanguage(request, options: options)
        defer { for problem in Localization.takeProblems() { logger.log(.warning, problem) } }

        // One check at a time per user (CallerLock); a missing store directory is left to the
        // chain, which reports the store as unavailable like a root caller would.
        let storeDirectory = TrustedFiles.parentDirectory(of: options.storePath)
        var lock: CallerLock?
        if FileSystem.exists(storeDirectory) {
            switch CallerLock.acquire(uid: caller.uid, directory: storeDirectory) {
            case .success(let l): lock = l
            case .failure(let why):
                logger.log(why.isBusy ? .notice : .error, "uid \(caller.uid): \(why); falling back to the password")
                return answer(Decision(.unavailable, .checkerUnavailable), on: channel)
            }
        }
        defer { withExtendedLifetime(lock) {} }

        let conversation = RelayedConversation(channel: channel, logger: logger, end: end)
        let hostname = self.hostname()
        var authRequest = request.authRequest
        authRequest.user = caller.name
        // The relayed SSH_* variables can only make the session look remote; the logind session
        // is this process's own audit session (SessionProbe.sessionID). Lockers have no terminal;
        // vlock runs setuid root and never needs the checker.
        let chain = ChainAssembly.chain(
            options: options, conversation: conversation, logger: logger, diagnostics: .syslog, request: authRequest,
            environment: { request.environment[$0] }, hostname: { hostname }, terminal: { nil },
            seams: ChainSeams(sensors: sensors, openStore: { self.openStore(options) }, lookupAccount: lookupAccount, clock: clock, bootID: bootID))
        let decision = chain.run(authRequest)
        conversation.send(.result(decision))
        if PasswordWitness.handsOnToPassword(decision), let typed = conversation.handedOn {
            witnessUnixPassword(typed, options: options)
        }
        return decision
    }

    /// A locker that runs as the user has no pam_setcred the store can hear (its module cannot
    /// write the root-only store), and the checker must not believe a caller that says "the stack
    /// accepted the password": any process of the user's could say it, reset the passcode
    /// lockout at will and guess the PIN without end (docs/SECURITY.md, "biounlock-check"). So
    /// the checker proves it itself: the text the chain just handed on to the locker's pam_unix
    /// is checked here, as root, against the user's shadow entry, and only the user's own
    /// password, checked by this process, clears the counts and satisfies the passcode rules
    /// (recordSuccess(.password), as pam_sm_setcred's witness in a root caller). (Issue 33, item 4.)
    ///
    /// - Only when there is something a password clears -- a failure counted, or a passcode rule
    ///   unsatisfied -- so a typed unlock costs one hash more only when it changes something, and
    ///   only for a user with biometric unlock on somewhere (nothing is written for the others).
    /// - After the decision is sent: the locker's pam_unix checks the password meanwhile, and a
    ///   slow shadow check never delays the unlock (the checker's lifetime bounds it).
    /// - The user learns nothing they could not learn from unix_chkpwd, which checks their own
    ///   password for any of their processes; this checks only the caller's (the real uid's
    ///   account, byte for byte), one check at a time (CallerLock, still held), and a wrong
    ///   password here records nothing.
    /// - Cannot tell (no shadow entry: a directory service, a locked or empty hash): nothing is
    ///   recorded -- the safe side.
    func witnessUnixPassword(_ typed: Secret, options: Options) {
        guard case .success(let store) = openStore(options),
              let record = try? store.loadUser(caller.name, withTemplates: false), record.isEnabledForAnyService,
              AccountBinding.of(record, account: caller).isBound else { return }
        let now = clock.now()
        let somethingToClear = record.passcodeFailures > 0 || record.biometricFailures > 0
            || PasscodeRequirement.reason(record, options: options, now: now, bootID: bootID()) != nil
        guard somethingToClear else { return }
        switch checkUnixPassword(caller.name, typed) {
        case true?:
            PasswordWitness.recordPasswordSuccess(user: caller.name, store: store, logger: logger, clock: clock, bootID: bootID())
        case false?:
            logger.log(.debug, "uid \(caller.uid): the text handed on is not the Unix password; nothing cleared")
        case nil:
            logger.log(.debug, "uid \(caller.uid): cannot check the Unix password here; nothing cleared")
        }
    }

    /// The caller's language for what the chain says, from the catalogs of the checker's own
    /// `locale_dir`; English when the request names none, or names that are not plain.
    func chooseLanguage(_ request: CheckRequest, options: Options) {
        Localization.use(directory: options.localeDir)
        guard !request.locale.isEmpty else { return }
        guard Localization.isPlainLocaleName(request.locale),
              request.language.isEmpty || Localization.isPlainLanguageList(request.language) else {
            logger.log(.notice, "uid \(caller.uid): the caller's locale is not a plain name; English")
            return
        }
        if !useLanguage(request.locale, request.language) {
            logger.log(.debug, "locale \(request.locale) is not available here; English")
        }
    }

    private func answer(_ decision: Decision, on channel: FrameChannel) -> Decision {
        _ = channel.send(CheckerMessage.result(decision).payload, until: min(monotonicMilliseconds() &+ 2_000, end))
        return decision
    }

    /// A PAM service name as it appears in prompts, the audit log and per-service settings:
    /// printable ASCII without spaces or '/', at most 128 bytes.
    static func isPlausibleService(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "/") }
    }
}

extension CallerLock.Failure {
    var isBusy: Bool { if case .busy = self { return true } else { return false } }
}
