import BiounlockCore

/// What GetStatus returns (an `a{sv}`), typed: the service builds it, the CLI and the settings
/// app read it. Keys may be added, never renamed or removed (clients skip keys they do not know).
/// Times are seconds since the epoch, 0 for "never"; no hash, template or secret is ever in it.
public struct AccountStatus: Equatable, Sendable {
    public struct Finger: Equatable, Sendable {
        /// fprintd's name (`right-index-finger`).
        public var finger: String
        /// libfprint, fprintd or simulated.
        public var sensor: String
        /// When it was enrolled (0: unknown, prints kept by fprintd).
        public var enrolled: Int64
        /// driver/device it was taken on ("" when not known).
        public var reader: String
        public init(finger: String, sensor: String, enrolled: Int64, reader: String) {
            self.finger = finger; self.sensor = sensor; self.enrolled = enrolled; self.reader = reader
        }
    }

    public struct Lockout: Equatable, Sendable {
        public var locked: Bool
        /// When it lifts by itself (0: only what `clearedBy` names lifts it).
        public var until: Int64
        /// What ends it: `passcode` (the biounlock passcode typed), `password` (the Unix password
        /// at a root caller: sudo, su, login, a greeter), `time` (at `until`), `reset`
        /// (ResetLockouts, `biounlock reset`).
        public var clearedBy: [String]
        public init(locked: Bool, until: Int64, clearedBy: [String]) {
            self.locked = locked; self.until = until; self.clearedBy = clearedBy
        }
        public static let open = Lockout(locked: false, until: 0, clearedBy: [])
        /// Locked, and lifting by itself at `until` (what a countdown shows).
        public var liftsByItself: Bool { locked && until > 0 }
    }

    public var user: String
    public var uid: UInt32
    /// Whether the store's record (if any) belongs to this account (AccountBinding).
    public var accountMatches: Bool
    /// The toggle, and the per-service overrides.
    public var enabled: Bool
    public var services: [String: Bool]
    public var fingers: [Finger]
    /// pin, password, pattern, or "" when none is set.
    public var passcode: String
    /// The configuration in force: policy (biometrics-or-passcode, biometrics) and sensor.
    public var policy: String
    public var sensor: String
    public var biometricFailures: UInt32
    public var passcodeFailures: UInt32
    public var biometricLockout: Lockout
    public var passcodeLockout: Lockout
    /// Why the passcode (or, under policy=biometrics, the password) is required before the finger
    /// next: boot, enrolment, age, first-use, or "" when it is not.
    public var passcodeRequired: String
    public var lastSuccess: Int64
    public var lastFailure: Int64
    /// Seconds left of the caller's re-authentication (Authenticate), 0 when there is none.
    public var authenticatedFor: UInt32
    /// Whether the caller has an enrolment running.
    public var enrolling: Bool
    /// Each service group's state (ServiceGroup: `sudo`, `login` -> on, off, mixed), as the
    /// service's table makes it from `enabled` and `services`.
    public var groups: [String: String]

    public init(user: String, uid: UInt32) {
        self.user = user; self.uid = uid; accountMatches = true; enabled = false; services = [:]; fingers = []
        passcode = ""; policy = ""; sensor = ""; biometricFailures = 0; passcodeFailures = 0
        biometricLockout = .open; passcodeLockout = .open; passcodeRequired = ""; lastSuccess = 0; lastFailure = 0
        authenticatedFor = 0; enrolling = false; groups = [:]
    }

    public var busValue: BusValue {
        .vardict([
            ("user", .string(user)),
            ("uid", .uint32(uid)),
            ("account_matches", .boolean(accountMatches)),
            ("enabled", .boolean(enabled)),
            ("services", .dictionary(key: "s", value: "b", services.sorted { $0.key < $1.key }.map { .init(.string($0.key), .boolean($0.value)) })),
            ("fingers", .array(element: "a{sv}", fingers.map { f in
                .vardict([("finger", .string(f.finger)), ("sensor", .string(f.sensor)), ("enrolled", .int64(f.enrolled)), ("reader", .string(f.reader))])
            })),
            ("passcode", .string(passcode)),
            ("policy", .string(policy)),
            ("sensor", .string(sensor)),
            ("biometric_failures", .uint32(biometricFailures)),
            ("passcode_failures", .uint32(passcodeFailures)),
            ("biometric_lockout", AccountStatus.busValue(biometricLockout)),
            ("passcode_lockout", AccountStatus.busValue(passcodeLockout)),
            ("passcode_required", .string(passcodeRequired)),
            ("last_success", .int64(lastSuccess)),
            ("last_failure", .int64(lastFailure)),
            ("authenticated_for", .uint32(authenticatedFor)),
            ("enrolling", .boolean(enrolling)),
            ("groups", .dictionary(key: "s", value: "s", groups.sorted { $0.key < $1.key }.map { .init(.string($0.key), .string($0.value)) })),
        ])
    }

    static func busValue(_ l: Lockout) -> BusValue {
        .vardict([("locked", .boolean(l.locked)), ("until", .int64(l.until)), ("cleared_by", .strings(l.clearedBy))])
    }

    static func lockout(_ value: BusValue?) -> Lockout {
        guard let f = value?.fields else { return .open }
        return Lockout(locked: f["locked"]?.bool ?? false, until: f["until"]?.int64 ?? 0,
                       clearedBy: f["cleared_by"]?.elements?.compactMap(\.string) ?? [])
    }

    /// Reads GetStatus's dictionary; nil when it is not one or lacks the user. Unknown keys are
    /// skipped and missing ones take their defaults, so an older or newer service still reads.
    public init?(_ value: BusValue) {
        guard let f = value.fields, let user = f["user"]?.string, let uid = f["uid"]?.uint32 else { return nil }
        self.init(user: user, uid: uid)
        accountMatches = f["account_matches"]?.bool ?? true
        enabled = f["enabled"]?.bool ?? false
        if case .dictionary(_, _, let entries)? = f["services"] {
            for e in entries { if let k = e.key.string, let v = e.value.unboxed.bool { services[k] = v } }
        }
        fingers = (f["fingers"]?.elements ?? []).compactMap { item in
            guard let g = item.fields, let name = g["finger"]?.string else { return nil }
            return Finger(finger: name, sensor: g["sensor"]?.string ?? "", enrolled: g["enrolled"]?.int64 ?? 0, reader: g["reader"]?.string ?? "")
        }
        passcode = f["passcode"]?.string ?? ""
        policy = f["policy"]?.string ?? ""
        sensor = f["sensor"]?.string ?? ""
        biometricFailures = f["biometric_failures"]?.uint32 ?? 0
        passcodeFailures = f["passcode_failures"]?.uint32 ?? 0
        biometricLockout = AccountStatus.lockout(f["biometric_lockout"])
        passcodeLockout = AccountStatus.lockout(f["passcode_lockout"])
        passcodeRequired = f["passcode_required"]?.string ?? ""
        lastSuccess = f["last_success"]?.int64 ?? 0
        lastFailure = f["last_failure"]?.int64 ?? 0
        authenticatedFor = f["authenticated_for"]?.uint32 ?? 0
        enrolling = f["enrolling"]?.bool ?? false
        if case .dictionary(_, _, let entries)? = f["groups"] {
            for e in entries { if let k = e.key.string, let v = e.value.unboxed.string { groups[k] = v } }
        }
    }

    /// A group's state: the service's word for it, or (a service that does not say) made here
    /// from `enabled` and `services` with the same table.
    public func state(of group: ServiceGroup) -> ServiceGroup.State {
        groups[group.rawValue].flatMap(ServiceGroup.State.init(rawValue:)) ?? group.state(enabled: enabled, overrides: services)
    }
}

/// One row of GetEvents (`(xssssss)`): the audit log as `biounlock log` shows it.
public struct EventRow: Equatable, Sendable {
    public var time: Int64
    public var service: String
    public var tty: String
    public var rhost: String
    public var method: String
    public var outcome: String
    public var reason: String

    public init(time: Int64, service: String, tty: String, rhost: String, method: String, outcome: String, reason: String) {
        self.time = time; self.service = service; self.tty = tty; self.rhost = rhost
        self.method = method; self.outcome = outcome; self.reason = reason
    }

    public var busValue: BusValue {
        .tuple([.int64(time), .string(service), .string(tty), .string(rhost), .string(method), .string(outcome), .string(reason)])
    }

    public init?(_ value: BusValue) {
        guard case .tuple(let m) = value, m.count == 7, let time = m[0].int64 else { return nil }
        let s = m[1...].map { $0.string ?? "" }
        self.init(time: time, service: s[0], tty: s[1], rhost: s[2], method: s[3], outcome: s[4], reason: s[5])
    }
}
