/// The shape of `biounlock status`, as text and as JSON. The JSON shape is documented in the
/// README and pinned by a test: add fields, never rename or remove them.
public enum StatusReport {
    /// What is in force for a user now: lockouts and the passcode requirement.
    public struct Now {
        public var options: Options
        public var time: Int64
        public var bootID: String?
        /// Whether each record belongs to the account that has its name now (NSS by default).
        public var binding: (UserRecord) -> AccountBinding
        /// The admin's global options, repeated in the commands suggested.
        public var globals: [String]
        public init(options: Options, time: Int64, bootID: String?, globals: [String] = [],
                    binding: @escaping (UserRecord) -> AccountBinding = { AccountBinding.of($0, account: Accounts.lookup($0.name)) }) {
            self.options = options; self.time = time; self.bootID = bootID; self.globals = globals; self.binding = binding
        }
    }

    /// Says what is wrong with a stored template (e.g. a truncated libfprint print), or nil.
    public typealias TemplateCheck = (Template) -> String?

    public static func json(store: String, users: [UserRecord], now: Now, fprintd: FprintdReport? = nil,
                            check: TemplateCheck = { _ in nil }) -> JSON {
        var members: [(String, JSON)] = [
            ("store", .string(store)),
            ("users", .array(users.map { json(user: $0, now: now, check: check) })),
        ]
        if let fprintd { members.append(("fprintd", fprintd.json)) }
        return .object(members)
    }

    /// `biounlock log --json`: {"events": [...]}, newest first.
    public static func json(events: [AuditEvent]) -> JSON {
        .object([("events", .array(events.map { e in
            .object([("time", .string(iso8601(e.time))), ("user", .string(e.user)), ("service", .string(e.service)),
                     ("tty", .string(e.tty)), ("rhost", .string(e.rhost)), ("method", .string(e.method.rawValue)),
                     ("outcome", .string(e.outcome)), ("reason", .string(e.reason))])
        }))])
    }

    /// One line per event for `biounlock log`.
    public static func text(event e: AuditEvent) -> String {
        var where_ = e.service
        if !e.tty.isEmpty { where_ += " on \(e.tty)" }
        if !e.rhost.isEmpty { where_ += " from \(e.rhost)" }
        return "\(iso8601(e.time))  \(e.user)  \(where_)  \(e.outcome) (\(e.method.rawValue), \(e.reason))"
    }

    /// One line per user for `biounlock list`.
    public static func line(user r: UserRecord, now: Now) -> String {
        let locks = [Lockouts.biometric(r, options: now.options, now: now.time) != .open ? "finger locked" : nil,
                     Lockouts.passcode(r, options: now.options, now: now.time) != .open ? "passcode locked" : nil].compactMap { $0 }
        let services = r.serviceOverrides.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value ? "on" : "off")" }
        let binding = now.binding(r)
        guard binding.isBound else {
            return "\(r.name): NOT THIS ACCOUNT'S -- \(binding.problem(user: r.name)); clear it with: \(AccountBinding.fix(user: r.name, globals: now.globals))"
        }
        var parts = ["\(r.name): \(r.enabled ? "on" : "off")"]
        if !services.isEmpty { parts.append("(" + services.joined(separator: ", ") + ")") }
        parts.append("· \(r.templates.count) finger\(r.templates.count == 1 ? "" : "s")")
        parts.append("· passcode \(r.passcode?.kind.rawValue ?? "not set")")
        if !locks.isEmpty { parts.append("· " + locks.joined(separator: ", ")) }
        return parts.joined(separator: " ")
    }

    static func json(_ state: Lockouts.State, now: Now) -> JSON {
        switch state {
        case .open: return .object([("locked", .bool(false)), ("until", .null)])
        case .locked(let until): return .object([("locked", .bool(true)), ("until", .optionalTime(until))])
        }
    }

    public static func json(user r: UserRecord, now: Now, check: TemplateCheck = { _ in nil }) -> JSON {
        let binding = now.binding(r)
        return .object([
            ("user", .string(r.name)),
            ("enabled", .bool(r.enabled)),
            ("services", .object(r.serviceOverrides.sorted { $0.key < $1.key }.map { ($0.key, JSON.bool($0.value)) })),
            ("fingers", .array(r.templates.map { t in
                .object([("finger", .string(t.finger.name)), ("sensor", .string(t.sensor.rawValue)),
                         // fprintd does not say when a print was enrolled.
                         ("enrolled", t.sensor == .fprintd ? .null : .string(iso8601(t.created))),
                         ("reader", t.driver.isEmpty ? .null : .string("\(t.driver)/\(t.device)")),
                         ("problem", check(t).map(JSON.string) ?? .null)])
            })),
            ("passcode", r.passcode.map { .string($0.kind.rawValue) } ?? .null),
            ("biometric_failures", .int(r.biometricFailures)),
            ("passcode_failures", .int(r.passcodeFailures)),
            ("last_success", .optionalTime(r.lastSuccess)),
            ("last_failure", .optionalTime(r.lastFailure)),
            ("biometric_lockout", json(Lockouts.biometric(r, options: now.options, now: now.time), now: now)),
            ("passcode_lockout", json(Lockouts.passcode(r, options: now.options, now: now.time), now: now)),
            ("passcode_required", PasscodeRequirement.reason(r, options: now.options, now: now.time, bootID: now.bootID)
                .map { .string(requirementName($0)) } ?? .null),
            ("uid", r.uid.map { .int(Int64($0)) } ?? .null),
            ("account", json(binding, user: r.name, now: now)),
        ])
    }

    /// {"matches": true} or {"matches": false, "uid": 1005 (or null), "problem": "...", "fix": "biounlock forget alice"}.
    static func json(_ binding: AccountBinding, user: String, now: Now) -> JSON {
        switch binding {
        case .bound:
            return .object([("matches", .bool(true)), ("uid", .null), ("problem", .null), ("fix", .null)])
        case .otherAccount(_, let accountUID):
            return .object([("matches", .bool(false)), ("uid", .int(Int64(accountUID))), ("problem", .string(binding.problem(user: user))),
                            ("fix", .string(AccountBinding.fix(user: user, globals: now.globals)))])
        case .noAccount:
            return .object([("matches", .bool(false)), ("uid", .null), ("problem", .string(binding.problem(user: user))),
                            ("fix", .string(AccountBinding.fix(user: user, globals: now.globals)))])
        }
    }

    /// `boot`, `enrolment` or `age`: the rule that makes the passcode required.
    static func requirementName(_ reason: Reason) -> String {
        switch reason {
        case .passcodeRequiredAfterEnrolment: return "enrolment"
        case .passcodeRequiredAfterIdle: return "age"
        case .passcodeRequiredFirstUse: return "first-use"
        default: return "boot"
        }
    }

    static func text(_ state: Lockouts.State, now: Now) -> String {
        switch state {
        case .open: return "no"
        case .locked(nil): return "yes, until the passcode is entered (or biounlock reset)"
        case .locked(let until?): return "yes, \(describeTimeLeft(until &- now.time)) left (until \(iso8601(until)))"
        }
    }

    public static func text(user r: UserRecord, now: Now, check: TemplateCheck = { _ in nil }) -> String {
        var lines = ["\(r.name)"]
        let binding = now.binding(r)
        if !binding.isBound {
            lines.append("  NOT THIS ACCOUNT'S RECORD: \(binding.problem(user: r.name)).")
            lines.append("    The module ignores it. Clear it with: \(AccountBinding.fix(user: r.name, globals: now.globals))")
        }
        lines.append("  biometric unlock: \(r.enabled ? "on" : "off")\(binding.isBound || !r.enabled ? "" : " (stored, but ignored: see above)")")
        for (service, on) in r.serviceOverrides.sorted(by: { $0.key < $1.key }) {
            lines.append("    for \(service): \(on ? "on" : "off")")
        }
        if r.templates.isEmpty {
            lines.append("  fingers: none enrolled")
        } else {
            lines.append("  fingers:")
            for t in r.templates {
                let reader = t.driver.isEmpty ? "" : " on \(t.driver)/\(t.device)"
                if t.sensor == .fprintd {
                    lines.append("    \(t.finger.name) (fprintd\(reader); kept by fprintd)")
                    continue
                }
                lines.append("    \(t.finger.name) (\(t.sensor.rawValue)\(reader), enrolled \(iso8601(t.created)))"
                             + (check(t).map { " UNUSABLE: \($0); enrol it again" } ?? ""))
            }
        }
        lines.append("  passcode: \(r.passcode.map { $0.kind.rawValue } ?? "not set")")
        lines.append("  consecutive failures: \(r.biometricFailures) finger, \(r.passcodeFailures) passcode")
        lines.append("  fingerprint locked: \(text(Lockouts.biometric(r, options: now.options, now: now.time), now: now))")
        lines.append("  passcode locked: \(text(Lockouts.passcode(r, options: now.options, now: now.time), now: now))")
        let required = PasscodeRequirement.reason(r, options: now.options, now: now.time, bootID: now.bootID)
        lines.append("  passcode required next: \(required.map { "yes (\(requirementName($0)))" } ?? "no")")
        lines.append("  last success: \(r.lastSuccess.map(iso8601) ?? "never")")
        lines.append("  last failure: \(r.lastFailure.map(iso8601) ?? "never")")
        return lines.joined(separator: "\n")
    }
}
