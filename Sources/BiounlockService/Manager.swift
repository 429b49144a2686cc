import Synchronization
import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockServiceProtocol

/// The seams the handlers use: the bus's answers (polkit), the workers, the log, the signals
/// out, the clock and the account database. biounlockd gives the real ones; tests and the
/// fuzzer give their own.
public struct ServiceEnvironment: Sendable {
    public var authority: Authority
    public var reauthenticator: Reauthenticator
    public var enrolments: EnrolmentRunner
    public var logger: Logger & Sendable
    /// Sends a signal to one client.
    public var emit: @Sendable (OutgoingSignal) -> Void
    public var clock: Clock
    /// Milliseconds of a clock that never goes back (grants, waits, idleness).
    public var monotonic: @Sendable () -> Int64
    public var lookupName: @Sendable (String) -> Account?
    public var lookupUID: @Sendable (UInt32) -> Account?
    /// The readers present (`CheckEnable`), for libfprint; nil when not looked for.
    public var listReaders: @Sendable (Options) -> Result<[ReaderInfo], SensorUnavailable>
    /// The fingers fprintd holds for a user, by device (sensor=fprintd).
    public var fprintdFingers: @Sendable (Options, String) -> Result<[FprintdReader], SensorUnavailable>
    /// Deletes prints kept on a reader (libfprint match-on-chip), before the store's go.
    public var deleteFromReader: @Sendable ([Template], Options) -> [(Template, Sensors.ReaderDeletion)]
    /// Deletes a user's prints from fprintd (sensor=fprintd); nil finger: all.
    public var deleteFromFprintd: @Sendable (Options, String, Finger?) -> Result<Void, SensorUnavailable>
    /// Drops the Unix password kept for the boot for a user (issue 32: the kernel key that
    /// `keep_password` made); whether there was one. The tests count the calls instead.
    public var forgetKeptPassword: @Sendable (String) -> Bool

    public init(authority: Authority, reauthenticator: Reauthenticator, enrolments: EnrolmentRunner, logger: Logger & Sendable,
                emit: @escaping @Sendable (OutgoingSignal) -> Void, clock: Clock = SystemClock(),
                monotonic: @escaping @Sendable () -> Int64 = { monotonicMilliseconds() },
                lookupName: @escaping @Sendable (String) -> Account? = { Accounts.lookup($0) },
                lookupUID: @escaping @Sendable (UInt32) -> Account? = { Accounts.lookup(uid: $0) },
                listReaders: (@Sendable (Options) -> Result<[ReaderInfo], SensorUnavailable>)? = nil,
                fprintdFingers: (@Sendable (Options, String) -> Result<[FprintdReader], SensorUnavailable>)? = nil,
                deleteFromReader: (@Sendable ([Template], Options) -> [(Template, Sensors.ReaderDeletion)])? = nil,
                deleteFromFprintd: (@Sendable (Options, String, Finger?) -> Result<Void, SensorUnavailable>)? = nil,
                forgetKeptPassword: @escaping @Sendable (String) -> Bool = { KeptPasswordKey.drop(user: $0) }) {
        self.authority = authority; self.reauthenticator = reauthenticator; self.enrolments = enrolments
        self.logger = logger; self.emit = emit; self.clock = clock; self.monotonic = monotonic
        self.lookupName = lookupName; self.lookupUID = lookupUID; self.forgetKeptPassword = forgetKeptPassword
        // A Sensors per use (it is a value holding the logger): nothing shared between threads.
        self.listReaders = listReaders ?? { Sensors(logger: logger, helperDiagnostics: .syslog).list($0) }
        self.fprintdFingers = fprintdFingers ?? { Sensors(logger: logger, helperDiagnostics: .syslog).fprintdFingers($0, user: $1) }
        self.deleteFromReader = deleteFromReader ?? { Sensors(logger: logger, helperDiagnostics: .syslog).deleteFromReader($0, options: $1) }
        self.deleteFromFprintd = deleteFromFprintd ?? { options, user, finger in
            let sensors = Sensors(logger: logger, helperDiagnostics: .syslog)
            let devices: [FprintdReader]
            switch sensors.fprintdFingers(options, user: user) {
            case .success(let d): devices = d
            case .failure(let why): return .failure(why)
            }
            for device in devices where finger.map({ device.fingers.contains(UInt8($0.rawValue)) }) ?? !device.fingers.isEmpty {
                let reader: FprintdSensor
                switch sensors.openFprintd(options.with(key: "fprint_device", value: device.path) ?? options, user: user) {
                case .success(let r): reader = r
                case .failure(let why): return .failure(why)
                }
                defer { reader.close() }
                if case .failure(let why) = reader.delete(finger) { return .failure(why) }
            }
            return .success(())
        }
    }
}

/// biounlockd's method handlers: one `handle` per call, from any thread (biounlockd runs them on
/// a pool), with the shared state -- re-authentication grants and failures, calls in flight,
/// enrolments -- behind one lock. docs/SECURITY.md ("biounlockd") states the rules this file
/// enforces; each is written down where it is enforced.
public final class Manager: Sendable {
    public let options: Options
    let environment: ServiceEnvironment
    let rules: ReauthRules
    let limits: CallLimits

    struct Grant { let uid: UInt32; let until: Int64 }
    struct Failures { var count: Int; var last: Int64 }
    struct Enrolment { let uid: UInt32; let user: String; let finger: Finger; var control: EnrolmentControl? }
    struct State {
        /// Re-authentications, by the connection's unique name.
        var grants: [String: Grant] = [:]
        /// Consecutive failed re-authentications, by uid.
        var failures: [UInt32: Failures] = [:]
        /// uids whose re-authentication is running (one at a time per uid).
        var reauthenticating: Set<UInt32> = []
        var callsByConnection: [String: Int] = [:]
        var callsByUser: [UInt32: Int] = [:]
        var calls = 0
        /// Enrolments, by the connection's unique name (at most one in the service: one reader).
        var enrolments: [String: Enrolment] = [:]
        var lastActivity: Int64 = 0
    }
    let state: Mutex<State>

    public init(options: Options, environment: ServiceEnvironment, rules: ReauthRules = ReauthRules(), limits: CallLimits = CallLimits()) {
        self.options = options; self.environment = environment; self.rules = rules; self.limits = limits
        state = Mutex(State(lastActivity: environment.monotonic()))
    }

    // MARK: calls in flight

    /// Counts a call in before it is queued; false (answer Busy at once) when the connection or
    /// the service has too many in flight.
    public func admit(connection: String) -> Bool {
        let now = environment.monotonic()
        return state.withLock { s in
            s.lastActivity = now
            guard s.calls < limits.total, s.callsByConnection[connection, default: 0] < limits.perConnection else { return false }
            s.calls += 1
            s.callsByConnection[connection, default: 0] += 1
            return true
        }
    }

    /// Counts a call out.
    public func done(connection: String) {
        let now = environment.monotonic()
        state.withLock { s in
            s.lastActivity = now
            s.calls = max(0, s.calls - 1)
            if let n = s.callsByConnection[connection] { s.callsByConnection[connection] = n > 1 ? n - 1 : nil }
        }
    }

    /// The same per user, once the bus has said who called (a user may open many connections):
    /// false (Busy) beyond `limits.perUser` calls of one uid in flight.
    public func admit(user uid: UInt32) -> Bool {
        state.withLock { s in
            guard s.callsByUser[uid, default: 0] < limits.perUser else { return false }
            s.callsByUser[uid, default: 0] += 1
            return true
        }
    }

    public func done(user uid: UInt32) {
        state.withLock { s in
            if let n = s.callsByUser[uid] { s.callsByUser[uid] = n > 1 ? n - 1 : nil }
        }
    }

    /// Admits, runs and counts out one call whose caller is known (tests, the fuzzer and the
    /// service's pool all go through here once the caller is resolved).
    public func serve(_ call: MethodCall) -> MethodReply {
        guard admit(user: call.caller.uid) else { return .error(.busy, "too many calls of this user at once") }
        defer { done(user: call.caller.uid) }
        return handle(call)
    }

    /// A client left the bus: its grant goes, its enrolment is cancelled (nothing is stored).
    public func connectionClosed(_ busName: String) {
        let control = state.withLock { s -> EnrolmentControl? in
            s.grants[busName] = nil
            return s.enrolments[busName]?.control
        }
        control?.cancel()
    }

    /// Whether the service may leave: nothing in flight, no enrolment, no grant that is still
    /// valid, no failure it must remember, and `idleMilliseconds` since the last call.
    public func isIdle(for idleMilliseconds: Int64) -> Bool {
        let now = environment.monotonic()
        return state.withLock { s in
            s.grants = s.grants.filter { $0.value.until > now }
            s.failures = s.failures.filter { now - $0.value.last < rules.memoryMilliseconds }
            return s.calls == 0 && s.enrolments.isEmpty && s.reauthenticating.isEmpty && s.grants.isEmpty
                && s.failures.isEmpty && now - s.lastActivity >= idleMilliseconds
        }
    }

    // MARK: dispatch

    /// Runs one call. Never traps on any input: arguments of the wrong shape are InvalidArgument
    /// (GDBus checks the signature first; the fuzzer does not).
    public func handle(_ call: MethodCall) -> MethodReply {
        guard let method = ManagerAPI.Method(rawValue: call.method) else {
            return .error(.invalidArgument, "no method \(sanitizedForLog(String(call.method.prefix(64))))")
        }
        let signature = "(" + call.arguments.map(\.signature).joined() + ")"
        guard signature == method.inputSignature else {
            return .error(.invalidArgument, "\(method.rawValue) takes \(method.inputSignature), not \(sanitizedForLog(String(signature.prefix(64))))")
        }
        do throws(ServiceError) {
            return .values(try run(method, call))
        } catch {
            return .error(error.name, error.message)
        }
    }

    func run(_ method: ManagerAPI.Method, _ call: MethodCall) throws(ServiceError) -> [BusValue] {
        let a = call.arguments
        let c = call.caller
        switch method {
        case .getStatus: return [try getStatus(user: a[0].string ?? "", caller: c)]
        case .getEvents: return [try getEvents(user: a[0].string ?? "", since: a[1].int64 ?? 0, limit: a[2].uint32 ?? 0, caller: c)]
        case .checkEnable: return [try checkEnable(user: a[0].string ?? "", service: a[1].string ?? "", caller: c)]
        case .authenticate: return [.uint32(try authenticate(descriptor(call, a[0]), caller: c))]
        case .enable:
            let (on, missing) = try enable(user: a[0].string ?? "", service: a[1].string ?? "", caller: c)
            return [.boolean(on), missing]
        case .disable: try disable(user: a[0].string ?? "", service: a[1].string ?? "", caller: c); return []
        case .setPasscode:
            try setPasscode(user: a[0].string ?? "", kind: a[1].string ?? "", secret: descriptor(call, a[2]), caller: c); return []
        case .removePasscode: try removePasscode(user: a[0].string ?? "", caller: c); return []
        case .startEnrolment: try startEnrolment(user: a[0].string ?? "", finger: a[1].string ?? "", seconds: a[2].uint32 ?? 0, caller: c); return []
        case .cancelEnrolment: cancelEnrolment(caller: c); return []
        case .deleteFingers: return [.uint32(try deleteFingers(user: a[0].string ?? "", finger: a[1].string ?? "", caller: c))]
        case .resetLockouts: try resetLockouts(user: a[0].string ?? "", which: a[1].string ?? "", caller: c); return []
        case .forgetPassword: return [.boolean(try forgetPassword(user: a[0].string ?? "", caller: c))]
        }
    }

    /// The descriptor an `h` argument names (nil when the message carried none at that index).
    func descriptor(_ call: MethodCall, _ value: BusValue) -> FileDescriptor? {
        guard let index = value.handle else { return nil }
        return call.descriptors[index]
    }

    // MARK: who, and may they

    /// The account a call is about: "" is the caller's own (by uid, from the bus), a name is
    /// looked up and compared by uid -- never by spelling -- to tell the caller's own account
    /// from another's.
    struct Target {
        let account: Account
        let isSelf: Bool
    }

    func target(_ user: String, caller: Caller) throws(ServiceError) -> Target {
        guard user.utf8.count <= ManagerAPI.maximumNameLength else { throw ServiceError(.invalidArgument, "the user name is too long") }
        if user.isEmpty {
            guard let account = environment.lookupUID(caller.uid) else {
                throw ServiceError(.noSuchUser, "uid \(caller.uid) has no account")
            }
            return Target(account: account, isSelf: true)
        }
        guard let account = environment.lookupName(user) else {
            throw ServiceError(.noSuchUser, "no such user \(sanitizedForLog(user))")
        }
        return Target(account: account, isSelf: account.uid == caller.uid)
    }

    /// Reading one's own record needs nothing more than being who the bus says; anyone else's
    /// needs org.biounlock.manage-others.
    func mayRead(_ target: Target, caller: Caller) throws(ServiceError) {
        if !target.isSelf { try polkit(ManagerAPI.manageOthersAction, caller: caller) }
    }

    /// A change of one's own record needs org.biounlock.manage-own (active local sessions only)
    /// and, with `proof`, a re-authentication of this very connection that has not expired; a
    /// change of another's needs org.biounlock.manage-others (an administrator's authentication,
    /// asked by the caller's polkit agent).
    func mayChange(_ target: Target, caller: Caller, proof: Bool) throws(ServiceError) {
        guard target.isSelf else {
            try polkit(ManagerAPI.manageOthersAction, caller: caller)
            return
        }
        try polkit(ManagerAPI.manageOwnAction, caller: caller)
        guard proof else { return }
        let now = environment.monotonic()
        let granted = state.withLock { s -> Bool in
            guard let g = s.grants[caller.busName] else { return false }
            if g.until <= now { s.grants[caller.busName] = nil; return false }
            return g.uid == caller.uid
        }
        if !granted {
            throw ServiceError(.authenticationRequired, "re-authenticate first (Authenticate: the Unix password or the biounlock passcode)")
        }
    }

    func polkit(_ action: String, caller: Caller) throws(ServiceError) {
        switch environment.authority.check(action: action, caller: caller) {
        case .authorized: return
        case .notAuthorized(let challenge):
            throw ServiceError(.notAuthorized, challenge
                ? "\(action) needs an authentication the call did not allow (ALLOW_INTERACTIVE_AUTHORIZATION)"
                : "polkit does not authorise \(action) for this caller (a remote or inactive session, or not an administrator)")
        case .unavailable(let why):
            // Refused, never allowed by default.
            environment.logger.log(.error, "polkit could not be asked about \(action): \(why)")
            throw ServiceError(.unavailable, "polkit could not be asked")
        }
    }

    // MARK: bookkeeping

    /// The store, opened for this call (one connection per call and thread; the store's own
    /// write queue orders writers across connections and processes, so the root CLI and the
    /// service never lose each other's updates).
    func openStore() throws(ServiceError) -> Store {
        do {
            let store = try Store.open(path: options.storePath, mode: .administer)
            store.retention = Store.Retention(options)
            return store
        } catch {
            environment.logger.log(.error, "cannot open the store: \(error)")
            throw ServiceError(.unavailable, "the store cannot be opened")
        }
    }

    func storeCall<T>(_ what: String, _ body: () throws(StoreFailure) -> T) throws(ServiceError) -> T {
        do { return try body() } catch {
            environment.logger.log(.error, "\(what): \(error)")
            throw ServiceError(.unavailable, what)
        }
    }

    /// How a change was made, for the audit row and the log: by the user themselves, or by
    /// an administrator (the caller's uid).
    func route(_ target: Target, caller: Caller) -> String {
        target.isSelf ? "self" : "admin-uid-\(caller.uid)"
    }

    /// One audit row (service `biounlockd`: who in `user`, what in `outcome`, by which route
    /// in `reason`) and one syslog line for every change; neither holds a secret.
    func record(_ what: String, target: Target, caller: Caller, store: Store?) {
        let route = route(target, caller: caller)
        environment.logger.log(.notice, "uid=\(caller.uid) pid=\(caller.pid) user=\(sanitizedForLog(target.account.name)) action=\(what) route=\(route)")
        guard let store else { return }
        let event = AuditEvent(time: environment.clock.now(), user: target.account.name, service: ManagerAPI.auditService,
                               tty: "", rhost: "", method: .none, outcome: what, reason: route)
        do { try store.appendEvent(event) } catch {
            environment.logger.log(.error, "cannot write the audit row of \(what) for \(sanitizedForLog(target.account.name)): \(error)")
        }
    }
}
