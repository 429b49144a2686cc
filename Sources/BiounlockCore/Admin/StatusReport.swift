/// The shape of `biounlock status`, as text and as JSON. The JSON shape is documented in the
/// README and pinned by a test: add fields, never rename or remove them.
public enum StatusReport {
    public static func json(store: String, users: [UserRecord]) -> JSON {
        .object([
            ("store", .string(store)),
            ("users", .array(users.map(json(user:)))),
        ])
    }

    public static func json(user r: UserRecord) -> JSON {
        .object([
            ("user", .string(r.name)),
            ("enabled", .bool(r.enabled)),
            ("services", .object(r.serviceOverrides.sorted { $0.key < $1.key }.map { ($0.key, JSON.bool($0.value)) })),
            ("fingers", .array(r.templates.map { t in
                .object([("finger", .string(t.finger.name)), ("sensor", .string(t.sensor.rawValue)),
                         ("enrolled", .string(iso8601(t.created)))])
            })),
            ("passcode", r.passcode.map { .string($0.kind.rawValue) } ?? .null),
            ("biometric_failures", .int(r.biometricFailures)),
            ("passcode_failures", .int(r.passcodeFailures)),
            ("last_success", .optionalTime(r.lastSuccess)),
            ("last_failure", .optionalTime(r.lastFailure)),
        ])
    }

    public static func text(user r: UserRecord) -> String {
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
                lines.append("    \(t.finger.name) (\(t.sensor.rawValue), enrolled \(iso8601(t.created)))")
            }
        }
        lines.append("  passcode: \(r.passcode.map { $0.kind.rawValue } ?? "not set")")
        lines.append("  consecutive failures: \(r.biometricFailures) finger, \(r.passcodeFailures) passcode")
        lines.append("  last success: \(r.lastSuccess.map(iso8601) ?? "never")")
        lines.append("  last failure: \(r.lastFailure.map(iso8601) ?? "never")")
        return lines.joined(separator: "\n")
    }
}
