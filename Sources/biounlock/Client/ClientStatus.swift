import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockServiceProtocol

/// A user's own record as biounlockd returned it, printed as `biounlock status` prints root's
/// view of it (the same lines, so the same translations); lockouts and the passcode rule are
/// the service's, not computed again here.
enum ClientStatus {
    static func text(_ s: AccountStatus) -> String {
        var lines = [s.user]
        if !s.accountMatches {
            lines.append("  " + L("NOT THIS ACCOUNT'S RECORD: {problem}.", ["problem": L("it belongs to an account that had this name before")]))
            lines.append("    " + L("The module ignores it. Clear it with: {command}", ["command": "sudo biounlock forget \(s.user)"]))
        }
        lines.append("  " + (s.enabled ? L("biometric unlock: on") : L("biometric unlock: off")))
        for (service, on) in s.services.sorted(by: { $0.key < $1.key }) {
            lines.append("    " + (on ? L("for {service}: on", ["service": service]) : L("for {service}: off", ["service": service])))
        }
        if s.fingers.isEmpty {
            lines.append("  " + L("fingers: none enrolled"))
        } else {
            lines.append("  " + L("fingers:"))
            for f in s.fingers {
                let v: KeyValuePairs = ["finger": f.finger, "sensor": f.sensor, "reader": f.reader, "date": iso8601(f.enrolled)]
                if f.sensor == "fprintd" {
                    lines.append("    " + (f.reader.isEmpty ? L("{finger} (fprintd; kept by fprintd)", v) : L("{finger} (fprintd on {reader}; kept by fprintd)", v)))
                } else {
                    lines.append("    " + (f.reader.isEmpty ? L("{finger} ({sensor}, enrolled {date})", v) : L("{finger} ({sensor} on {reader}, enrolled {date})", v)))
                }
            }
        }
        lines.append("  " + (s.passcode.isEmpty ? L("passcode: not set") : L("passcode: {kind}", ["kind": s.passcode])))
        lines.append("  " + L("consecutive failures: {finger} finger, {passcode} passcode",
                              ["finger": String(s.biometricFailures), "passcode": String(s.passcodeFailures)]))
        lines.append("  " + L("fingerprint locked: {state}", ["state": lockout(s.biometricLockout)]))
        lines.append("  " + L("passcode locked: {state}", ["state": lockout(s.passcodeLockout)]))
        lines.append("  " + (s.passcodeRequired.isEmpty ? L("passcode required next: no")
                                                          : L("passcode required next: yes ({rule})", ["rule": s.passcodeRequired])))
        lines.append("  " + (s.lastSuccess > 0 ? L("last success: {time}", ["time": iso8601(s.lastSuccess)]) : L("last success: never")))
        lines.append("  " + (s.lastFailure > 0 ? L("last failure: {time}", ["time": iso8601(s.lastFailure)]) : L("last failure: never")))
        return lines.joined(separator: "\n")
    }

    static func lockout(_ l: AccountStatus.Lockout) -> String {
        guard l.locked else { return L("no") }
        guard l.until > 0 else { return L("yes, until the passcode is entered (or biounlock reset)") }
        return L("yes, {time} left (until {date})", ["time": describeTimeLeft(l.until &- SystemClock().now()), "date": iso8601(l.until)])
    }

    /// `status --json` of a user: the fields of root's `status --json` that the service gives,
    /// in the same shape (docs/GUIDE.md, "status --json").
    static func json(_ s: AccountStatus) -> JSON {
        func lock(_ l: AccountStatus.Lockout) -> JSON {
            .object([("locked", .bool(l.locked)), ("until", l.liftsByItself ? .string(iso8601(l.until)) : .null),
                     ("cleared_by", .array(l.clearedBy.map(JSON.string)))])
        }
        return .object([
            ("user", .string(s.user)),
            ("enabled", .bool(s.enabled)),
            ("services", .object(s.services.sorted { $0.key < $1.key }.map { ($0.key, JSON.bool($0.value)) })),
            ("fingers", .array(s.fingers.map { f in
                .object([("finger", .string(f.finger)), ("sensor", .string(f.sensor)),
                         ("enrolled", f.enrolled > 0 ? .string(iso8601(f.enrolled)) : .null),
                         ("reader", f.reader.isEmpty ? .null : .string(f.reader))])
            })),
            ("passcode", s.passcode.isEmpty ? .null : .string(s.passcode)),
            ("biometric_failures", .int(Int64(s.biometricFailures))),
            ("passcode_failures", .int(Int64(s.passcodeFailures))),
            ("last_success", s.lastSuccess > 0 ? .string(iso8601(s.lastSuccess)) : .null),
            ("last_failure", s.lastFailure > 0 ? .string(iso8601(s.lastFailure)) : .null),
            ("biometric_lockout", lock(s.biometricLockout)),
            ("passcode_lockout", lock(s.passcodeLockout)),
            ("passcode_required", s.passcodeRequired.isEmpty ? .null : .string(s.passcodeRequired)),
            ("uid", .int(Int64(s.uid))),
            ("account", .object([("matches", .bool(s.accountMatches))])),
        ])
    }

    /// CheckEnable's and Enable's `a(ss)`.
    static func missing(_ value: BusValue?) -> [(String, String)] {
        (value?.elements ?? []).compactMap { item in
            guard case .tuple(let m) = item, m.count == 2, let code = m[0].string else { return nil }
            return (code, m[1].string ?? "")
        }
    }

    /// A missing piece in the user's words, with the command that fixes it (for this user,
    /// without root) when there is one.
    static func explain(_ code: String, detail: String, status s: AccountStatus) -> (String, String?) {
        switch ManagerAPI.Missing(rawValue: code) {
        case .noFinger?:
            return (L("no finger is enrolled for {user} on the {sensor} sensor", ["user": s.user, "sensor": s.sensor]),
                    "biounlock enrol --finger \(Finger.default.name)")
        case .noPasscode?:
            return (L("no passcode is set for {user} (policy {policy} falls back to it)", ["user": s.user, "policy": s.policy]),
                    "biounlock passcode set --kind pin")
        case .noReader?:
            return (L("no fingerprint reader is present (sensor {sensor})", ["sensor": s.sensor]), nil)
        case .readersUnlisted?:
            return (L("the fingerprint readers cannot be listed: {reason}", ["reason": detail]), nil)
        case .fprintdUnavailable?:
            return (L("fprintd cannot be reached: {reason}", ["reason": detail]), nil)
        case .otherAccount?:
            return (L("your biounlock record belongs to an account that had your name before"), "sudo biounlock forget \(s.user)")
        case nil:
            return (detail.isEmpty ? code : detail, nil)
        }
    }
}
