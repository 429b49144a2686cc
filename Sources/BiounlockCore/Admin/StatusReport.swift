/// The shape of `biounlock status`, as text and as JSON. The JSON shape is documented in the
/// README and pinned by a test: add fields, never rename or remove them.
public enum StatusReport {
    /// Says what is wrong with a stored template (e.g. a truncated libfprint print), or nil.
    public typealias TemplateCheck = (Template) -> String?

    public static func json(store: String, users: [UserRecord], fprintd: FprintdReport? = nil,
                            check: TemplateCheck = { _ in nil }) -> JSON {
        var members: [(String, JSON)] = [
            ("store", .string(store)),
            ("users", .array(users.map { json(user: $0, check: check) })),
        ]
        if let fprintd { members.append(("fprintd", fprintd.json)) }
        return .object(members)
    }

    public static func json(user r: UserRecord, check: TemplateCheck = { _ in nil }) -> JSON {
        .object([
            ("user", .string(r.name)),
            ("enabled", .bool(r.enabled)),
            ("services", .object(r.serviceOverrides.sorted { $0.key < $1.key }.map { ($0.key, JSON.bool($0.value)) })),
            ("fingers", .array(r.templates.map { t in
                .object([("finger", .string(t.finger.name)), ("sensor", .string(t.sensor.rawValue)),
                         ("enrolled", .string(iso8601(t.created))),
                         ("reader", t.driver.isEmpty ? .null : .string("\(t.driver)/\(t.device)")),
                         ("problem", check(t).map(JSON.string) ?? .null)])
            })),
            ("passcode", r.passcode.map { .string($0.kind.rawValue) } ?? .null),
            ("biometric_failures", .int(r.biometricFailures)),
            ("passcode_failures", .int(r.passcodeFailures)),
            ("last_success", .optionalTime(r.lastSuccess)),
            ("last_failure", .optionalTime(r.lastFailure)),
        ])
    }

    public static func text(user r: UserRecord, check: TemplateCheck = { _ in nil }) -> String {
        var lines = ["\(r.name)"]
        lines.append("  biometric unlock: \(r.enabled ? "on" : "off")")
        for (service, on) in r.serviceOverrides.sorted(by: { $0.key < $1.key }) {
            lines.append("    for \(service): \(on ? "on" : "off")")
        }
        if r.templates.isEmpty {
            lines.append("  fingers: none enrolled")
        } else {
            lines.append("  fingers:")
            for t in r.templates {
                let reader = t.driver.isEmpty ? "" : " on \(t.driver)/\(t.device)"
                lines.append("    \(t.finger.name) (\(t.sensor.rawValue)\(reader), enrolled \(iso8601(t.created)))"
                             + (check(t).map { " UNUSABLE: \($0); enrol it again" } ?? ""))
            }
        }
        lines.append("  passcode: \(r.passcode.map { $0.kind.rawValue } ?? "not set")")
        lines.append("  consecutive failures: \(r.biometricFailures) finger, \(r.passcodeFailures) passcode")
        lines.append("  last success: \(r.lastSuccess.map(iso8601) ?? "never")")
        lines.append("  last failure: \(r.lastFailure.map(iso8601) ?? "never")")
        return lines.joined(separator: "\n")
    }
}
