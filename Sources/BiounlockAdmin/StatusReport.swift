import BiounlockSystem
import BiounlockCore

/// The shape of `biounlock status`, as text and as JSON. The JSON shape is documented in
/// docs/GUIDE.md and pinned by a test: add fields, never rename or remove them. The text is for people
/// (translated); the JSON, the audit codes and the config words in both are not.
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

    /// What an audit row's outcome meant, in words (`log`, `verify`): PAM_AUTHINFO_UNAVAIL is
    /// the stack's next module -- the password -- taking over, so "unavailable" is said as
    /// "handed to the password", and as such also when what the user typed went on to it (a
    /// Unix password typed at biounlock's prompt). The codes themselves stay in the line, and
    /// in the JSON, as they are; a code this version does not know is shown as it is.
    public static func describe(outcome: String, method: AuthMethod, reason: String) -> String {
        // TRANSLATORS: `biounlock log` and `verify`: what happened in one authentication; the
        // audit codes (success, finger-matched, ...) follow in parentheses, untranslated.
        switch (outcome, method) {
        case ("unavailable", _) where reason == Reason.wrongPasscode.rawValue: return L("wrong passcode; handed to the password")
        case ("unavailable", _) where reason == Reason.passcodeLocked.rawValue: return L("passcode locked; handed to the password")
        case ("success", .fingerprint): return L("unlocked by a finger")
        case ("success", .passcode): return L("unlocked by the passcode")
        case ("success", .password): return L("the password succeeded")
        case ("success", _): return L("succeeded")
        case ("unavailable", .password): return L("handed to the password, with what was typed")
        case ("unavailable", _): return L("handed to the password")
        case ("ignore", _): return L("left to the other modules")
        case ("maxtries", _): return L("refused: too many wrong fingers")
        case ("user-unknown", _): return L("not a user of this system")
        case ("conversation-error", _): return L("no answer, or cancelled")
        default: return describe(change: outcome) ?? outcome
        }
    }

    /// The changes biounlockd records (its rows' outcome is the change, e.g. `passcode-set:pin`,
    /// `enabled:sudo`: BiounlockService/ManagerMethods.swift) in words; nil for any other code.
    static func describe(change: String) -> String? {
        let parts = change.split(separator: ":", maxSplits: 1)
        guard let code = parts.first else { return nil }
        let detail = parts.count > 1 ? String(parts[1]) : nil
        // TRANSLATORS: `biounlock log`: a change made through biounlockd (the user's own, or an
        // admin's); the audit codes follow in parentheses, untranslated.
        switch (code, detail) {
        case ("reauthenticated", nil): return L("re-authenticated with the password")
        case ("reauthentication-failed", nil): return L("re-authentication failed")
        case ("enabled", nil): return L("biometric unlock turned on")
        case ("enabled", "@all"): return L("biometric unlock turned on everywhere")
        case ("enabled", let service?): return L("biometric unlock turned on for {service}", ["service": serviceOrGroup(service)])
        case ("disabled", nil): return L("biometric unlock turned off")
        case ("disabled", "@all"): return L("biometric unlock turned off everywhere")
        case ("disabled", let service?): return L("biometric unlock turned off for {service}", ["service": serviceOrGroup(service)])
        case ("passcode-set", "pin"): return L("PIN set")
        case ("passcode-set", "password"): return L("passcode set (text)")
        case ("passcode-set", "pattern"): return L("pattern set")
        case ("passcode-removed", nil): return L("passcode removed")
        case ("finger-enrolled", let finger?): return L("finger enrolled: {finger}", ["finger": finger])
        case ("fingers-removed", "all"): return L("every finger removed")
        case ("fingers-removed", let finger?): return L("finger removed: {finger}", ["finger": finger])
        case ("lockouts-reset", nil): return L("lockouts cleared")
        case ("lockouts-reset", "biometric"): return L("fingerprint lockout cleared")
        case ("lockouts-reset", "passcode"): return L("passcode lockout cleared")
        default: return nil
        }
    }

    /// A change's service, or its group (biounlockd's "@sudo", "@login") in words.
    static func serviceOrGroup(_ name: String) -> String {
        switch name {
        case "@sudo": return ServiceWords.words(for: "sudo")
        // TRANSLATORS: `biounlock log` and the settings app's recent events: the group of services
        // a change was made for ("biometric unlock turned off for {service}").
        case "@login": return L("logging in or unlocking the screen")
        default: return name
        }
    }

    /// One line per event for `biounlock log`: what happened in words, then the audit codes
    /// (method, outcome, reason) as they are stored.
    public static func text(event e: AuditEvent) -> String {
        // What the user was doing and the service's name ("unlocking the screen (i3lock)"): ServiceWords.
        let service = ServiceWords.wordsAndName(for: e.service)
        let v: KeyValuePairs = ["service": service, "tty": e.tty, "host": e.rhost]
        let where_: String
        switch (e.tty.isEmpty, e.rhost.isEmpty) {
        case (true, true): where_ = service
        case (false, true): where_ = L("{service} on {tty}", v)
        case (true, false): where_ = L("{service} from {host}", v)
        case (false, false): where_ = L("{service} on {tty} from {host}", v)
        }
        let what = describe(outcome: e.outcome, method: e.method, reason: e.reason)
        return "\(iso8601(e.time))  \(e.user)  \(where_)  \(what) (\(e.method.rawValue), \(e.outcome), \(e.reason))"
    }

    /// One line per user for `biounlock list`.
    public static func line(user r: UserRecord, now: Now) -> String {
        let locks = [Lockouts.biometric(r, options: now.options, now: now.time) != .open ? L("finger locked") : nil,
                     Lockouts.passcode(r, options: now.options, now: now.time) != .open ? L("passcode locked") : nil].compactMap { $0 }
        let services = r.serviceOverrides.sorted { $0.key < $1.key }.map { o in
            o.value ? L("{service} on", ["service": o.key]) : L("{service} off", ["service": o.key])
        }
        let binding = now.binding(r)
        guard binding.isBound else {
            return L("{user}: NOT THIS ACCOUNT'S -- {problem}; clear it with: {command}",
                     ["user": r.name, "problem": binding.localizedProblem(user: r.name), "command": AccountBinding.fix(user: r.name, globals: now.globals)])
        }
        // TRANSLATORS: `biounlock list`, one line per user: "alice: on (sudo off) · 2 fingers ·
        // passcode: PIN · finger locked"; a "text" passcode is one of letters, digits and signs
        // (biounlock's own, not the Unix password).
        var parts = [r.enabled ? L("{user}: on", ["user": r.name]) : L("{user}: off", ["user": r.name])]
        if !services.isEmpty { parts.append("(" + services.joined(separator: ", ") + ")") }
        parts.append(L("· 1 finger", plural: "· {count} fingers", count: r.templates.count))
        switch r.passcode?.kind {
        case .pin?: parts.append(L("· passcode: PIN"))
        case .password?: parts.append(L("· passcode: text"))
        case .pattern?: parts.append(L("· passcode: pattern"))
        case nil: parts.append(L("· passcode not set"))
        }
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
            ("face", r.faceTemplates.first.map { f in .object([("enrolled", .string(iso8601(f.created))), ("camera", .string(f.camera))]) } ?? .null),
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

    /// The `status` line for PasscodeRequirement's reason, one sentence per rule.
    static func requiredText(_ reason: Reason?, options: Options) -> String {
        switch reason {
        case nil: return L("passcode required next: no")
        case .passcodeRequiredFirstUse?: return L("passcode required next: yes, it has never been entered")
        case .passcodeRequiredAfterEnrolment?: return L("passcode required next: yes, the enrolled fingers have changed")
        case .passcodeRequiredAfterIdle?:
            // TRANSLATORS: {age} is require_passcode's age, e.g. "72h" or "3d" (translated as in the module's messages).
            return L("passcode required next: yes, not entered for {age}",
                     ["age": options.requirePasscode.maximumAgeSeconds.map(describeAge) ?? L("a while")])
        default: return L("passcode required next: yes, after the restart")
        }
    }

    static func text(_ state: Lockouts.State, now: Now) -> String {
        switch state {
        case .open: return L("no")
        case .locked(nil): return L("yes, until the passcode is entered (or biounlock reset)")
        case .locked(let until?): return L("yes, {time} left (until {date})", ["time": describeTimeLeft(until &- now.time), "date": iso8601(until)])
        }
    }

    public static func text(user r: UserRecord, now: Now, check: TemplateCheck = { _ in nil }) -> String {
        var lines = ["\(r.name)"]
        let binding = now.binding(r)
        if !binding.isBound {
            lines.append("  " + L("NOT THIS ACCOUNT'S RECORD: {problem}.", ["problem": binding.localizedProblem(user: r.name)]))
            lines.append("    " + L("The module ignores it. Clear it with: {command}", ["command": AccountBinding.fix(user: r.name, globals: now.globals)]))
        }
        // TRANSLATORS: `biounlock status USER`, one line per setting; {sensor} is libfprint or
        // simulated; a finger "kept by fprintd" is a print the fprintd daemon holds (not
        // biounlock's store); a "text" passcode is one of letters, digits and signs (biounlock's
        // own, not the Unix password).
        if !r.enabled {
            lines.append("  " + L("biometric unlock: off"))
        } else {
            lines.append("  " + (binding.isBound ? L("biometric unlock: on") : L("biometric unlock: on (stored, but ignored: see above)")))
        }
        for (service, on) in r.serviceOverrides.sorted(by: { $0.key < $1.key }) {
            lines.append("    " + (on ? L("for {service}: on", ["service": service]) : L("for {service}: off", ["service": service])))
        }
        if r.templates.isEmpty {
            lines.append("  " + L("fingers: none enrolled"))
        } else {
            lines.append("  " + L("fingers:"))
            for t in r.templates {
                let v: KeyValuePairs = ["finger": t.finger.name, "sensor": t.sensor.rawValue, "reader": "\(t.driver)/\(t.device)", "date": iso8601(t.created)]
                if t.sensor == .fprintd {
                    lines.append("    " + (t.driver.isEmpty ? L("{finger} (fprintd; kept by fprintd)", v) : L("{finger} (fprintd on {reader}; kept by fprintd)", v)))
                    continue
                }
                let line = t.driver.isEmpty ? L("{finger} ({sensor}, enrolled {date})", v) : L("{finger} ({sensor} on {reader}, enrolled {date})", v)
                lines.append("    " + line + (check(t).map { " " + L("UNUSABLE: {problem}; enrol it again", ["problem": $0]) } ?? ""))
            }
        }
        if let face = r.faceTemplates.first {
            lines.append("  " + L("face: enrolled {date} with {camera}", ["date": iso8601(face.created), "camera": face.camera]))
        }
        switch r.passcode?.kind {
        case .pin?: lines.append("  " + L("passcode: PIN (digits)"))
        case .password?: lines.append("  " + L("passcode: text (letters, digits and signs)"))
        case .pattern?: lines.append("  " + L("passcode: pattern (a path on the 3x3 grid)"))
        case nil: lines.append("  " + L("passcode: not set"))
        }
        lines.append("  " + L("consecutive failures: {finger} finger, {passcode} passcode",
                              ["finger": String(r.biometricFailures), "passcode": String(r.passcodeFailures)]))
        lines.append("  " + L("fingerprint locked: {state}", ["state": text(Lockouts.biometric(r, options: now.options, now: now.time), now: now)]))
        lines.append("  " + L("passcode locked: {state}", ["state": text(Lockouts.passcode(r, options: now.options, now: now.time), now: now)]))
        let required = PasscodeRequirement.reason(r, options: now.options, now: now.time, bootID: now.bootID)
        lines.append("  " + requiredText(required, options: now.options))
        lines.append("  " + (r.lastSuccess.map { L("last success: {time}", ["time": iso8601($0)]) } ?? L("last success: never")))
        lines.append("  " + (r.lastFailure.map { L("last failure: {time}", ["time": iso8601($0)]) } ?? L("last failure: never")))
        return lines.joined(separator: "\n")
    }
}
