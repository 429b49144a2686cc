/// What `biounlock enable` checks before turning biometric unlock on, like LocalAuthentication's settings
/// toggle that first asks canEvaluatePolicy: the toggle stays off and the admin is told the
/// exact command that fixes each gap.
public enum EnableCheck {
    public struct Refusal: Equatable, Sendable {
        public let problem: String
        /// The command that fixes it, ready to copy.
        public let fix: String
    }

    /// - Parameters:
    ///   - record: the user's row, or nil when the store has none yet.
    ///   - globals: the CLI's global options as typed (e.g. `--db /x`), repeated in each fix.
    ///   - readers: the readers present (`biounlock sensors`), or nil when not looked for.
    public static func refusals(user: String, record: UserRecord?, options: Options, globals: [String],
                                readers: Result<[ReaderInfo], SensorUnavailable>? = nil) -> [Refusal] {
        let prefix = (["biounlock"] + globals).joined(separator: " ")
        var out: [Refusal] = []
        switch readers {
        case nil: break
        case .success(let list) where !list.isEmpty: break
        case .success:
            out.append(Refusal(problem: L("no fingerprint reader is present (sensor {sensor})", ["sensor": options.sensor.rawValue]),
                               fix: "\(prefix) sensors   # " + L("then plug in a reader, or check fprint_device")))
        case .failure(let why):
            out.append(Refusal(problem: L("the fingerprint readers cannot be listed: {reason}", ["reason": "\(why)"]),
                               fix: "\(prefix) sensors   # " + L("then fix fprint_helper in {path}", ["path": options.configPath])))
        }
        let fingers = record?.templates.filter { $0.sensor == options.sensor } ?? []
        if fingers.isEmpty {
            out.append(Refusal(problem: L("no finger is enrolled for {user} on the {sensor} sensor", ["user": user, "sensor": options.sensor.rawValue]),
                               fix: "\(prefix) enrol \(user) --finger \(Finger.default.name)"))
        }
        if options.policy == .biometricsOrPasscode && record?.passcode == nil {
            out.append(Refusal(problem: L("no passcode is set for {user} (policy {policy} falls back to it)", ["user": user, "policy": options.policy.rawValue]),
                               fix: "\(prefix) passcode set \(user) --kind pin"))
        }
        return out
    }
}
