import BiounlockCore

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
    ///   - fprintdFingers: with sensor=fprintd, the fingers fprintd holds for the user (the store
    ///     holds none for that backend); a failure when fprintd could not be asked.
    public static func refusals(user: String, record: UserRecord?, options: Options, globals: [String],
                                readers: Result<[ReaderInfo], SensorUnavailable>? = nil,
                                fprintdFingers: Result<[Finger], SensorUnavailable>? = nil) -> [Refusal] {
        let prefix = (["biounlock"] + globals).joined(separator: " ")
        var out: [Refusal] = []
        switch readers {
        case nil: break
        case .success(let list) where !list.isEmpty: break
        case .success:
            out.append(Refusal(problem: L("no fingerprint reader is present (sensor {sensor})", ["sensor": options.sensor.rawValue]),
                               fix: "\(prefix) sensors   # " + L("then plug in a reader, or check fprint_device")))
        case .failure(let why) where options.sensor == .fprintd:
            out.append(Refusal(problem: L("fprintd cannot be reached: {reason}", ["reason": "\(why)"]),
                               fix: "\(prefix) doctor   # " + L("fprintd must be installed and running; or set sensor in {path}", ["path": options.configPath])))
        case .failure(let why):
            out.append(Refusal(problem: L("the fingerprint readers cannot be listed: {reason}", ["reason": "\(why)"]),
                               fix: "\(prefix) sensors   # " + L("then fix fprint_helper in {path}", ["path": options.configPath])))
        }
        if options.sensor == .fprintd {
            switch fprintdFingers {
            case .success(let fingers) where !fingers.isEmpty: break
            case .failure(let why):
                // Reported once, by the reader check above, when that failed for the same reason.
                if case .failure? = readers {} else {
                    out.append(Refusal(problem: L("fprintd cannot be asked for the enrolled fingers: {reason}", ["reason": "\(why)"]),
                                       fix: "\(prefix) doctor   # " + L("is fprintd installed and running? (sensor fprintd, fprintd_bus)")))
                }
            default:
                out.append(Refusal(problem: L("fprintd holds no fingerprint for {user} (sensor fprintd)", ["user": user]),
                                   fix: "\(prefix) enrol \(user) --finger \(Finger.default.name)   # "
                                       + L("or: {command}, or GNOME Settings / KDE Users", ["command": "fprintd-enroll \(user)"])))
            }
        } else {
            let fingers = record?.templates.filter { $0.sensor == options.sensor } ?? []
            // With face=on an enrolled face is enough: the camera is tried where the face may be used.
            let face = options.face && !(record?.faceTemplates.isEmpty ?? true)
            if fingers.isEmpty && !face {
                out.append(Refusal(problem: L("no finger is enrolled for {user} on the {sensor} sensor", ["user": user, "sensor": options.sensor.rawValue]),
                                   fix: "\(prefix) enrol \(user) --finger \(Finger.default.name)"))
            }
        }
        if options.policy == .biometricsOrPasscode && record?.passcode == nil {
            out.append(Refusal(problem: L("no passcode is set for {user} (policy {policy} falls back to it)", ["user": user, "policy": options.policy.rawValue]),
                               fix: "\(prefix) passcode set \(user) --kind pin"))
        }
        return out
    }
}
