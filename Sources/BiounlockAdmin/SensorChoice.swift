import BiounlockCore

/// Why the backend in use is the one it is (SensorSelection), as `biounlock doctor` says it.
extension SensorSelection.Reason {
    /// In the admin's language (read only by the CLI: the module never asks for it).
    public var text: String {
        // TRANSLATORS: `biounlock doctor`, why this fingerprint backend is used; shown after
        // "{sensor} is in use: ". {setting} is the config line (sensor=auto, sensor=fprintd).
        switch self {
        case .configured(let kind):
            return L("{setting} is configured", ["setting": "sensor=\(kind.rawValue)"])
        case .fprintdInstalled(let service):
            return L("{setting}: fprintd's D-Bus service is installed ({path})", ["setting": "sensor=auto", "path": service])
        case .fprintdMissing(let path):
            return L("{setting}: fprintd is not installed (no {path})", ["setting": "sensor=auto", "path": path])
        }
    }
}

extension Options {
    /// `sensorChoice` as a sentence in the CLI's language, for `biounlock doctor` (the module never reads it).
    public var sensorReason: String { sensorChoice?.text ?? "" }
}
