/// Which credentials the chain may use (PRODUCT.md maps these to LocalAuthentication's policies).
public enum Policy: String, CaseIterable, Sendable {
    /// Finger first, biounlock's own passcode as the fallback (deviceOwnerAuthentication).
    case biometricsOrPasscode = "biometrics-or-passcode"
    /// Finger only; anything else is left to the next module in the stack (pam_unix).
    case biometrics
}

/// Where fingerprints come from.
public enum SensorKind: String, CaseIterable, Sendable {
    /// libfprint-2 readers, driven by the `biounlock-fprint` helper process.
    case libfprint
    /// A deterministic sensor driven over a root-only control socket (demos, containers, tests).
    case simulated
}

/// Every setting of the module and the CLI. Defaults are the documented ones (README,
/// "Configuration reference"); the config file overrides them and module arguments override both.
public struct Options: Equatable, Sendable {
    public static let defaultConfigPath = "/etc/security/biounlock.conf"
    public static let defaultStorePath = "/var/lib/biounlock/biounlock.db"
    /// Where scripts/install (and the Debian package) put the libfprint helper.
    public static let defaultFprintHelperPath = "/usr/libexec/biounlock/biounlock-fprint"

    public var policy: Policy = .biometricsOrPasscode
    public var sensor: SensorKind = .libfprint
    public var storePath: String = Options.defaultStorePath
    public var configPath: String = Options.defaultConfigPath
    /// Control socket of the simulated sensor; required for `sensor=simulated`.
    public var simSocket: String?
    /// Seconds to wait for a touch before the finger step ends.
    public var timeoutSeconds: Int = 10
    /// Wrong fingers before the finger step ends.
    public var maxTries: Int = 3
    /// Verbose syslog (never secrets or templates).
    public var debug: Bool = false
    /// The libfprint helper executable (root-owned, in root-owned directories).
    public var fprintHelper: String = Options.defaultFprintHelperPath
    /// Which reader to use when several are attached: a driver name, a device id, or "driver/id".
    public var fprintDevice: String?
    /// Test setting: a libfprint `virtual_device` listening on this socket (FP_VIRTUAL_DEVICE in
    /// the helper's environment). Only ever read from root-owned configuration, never from the
    /// caller's environment.
    public var fprintVirtualDevice: String?
    /// Test setting: the `virtual_device_storage` variant (FP_VIRTUAL_DEVICE_STORAGE).
    public var fprintVirtualDeviceStorage: String?

    public init() {}
}

/// One option key: its name, what it accepts (for messages and docs) and how it applies.
struct OptionKey: Sendable {
    let name: String
    let accepts: String
    /// Applies `value` (nil for a bare word such as `debug`); returns false when the value is invalid.
    let apply: @Sendable (inout Options, String?) -> Bool
}

extension Options {
    static let timeoutRange = 1...120
    static let maxTriesRange = 1...10

    /// The table of keys shared by module arguments, the config file and the CLI.
    static let keys: [OptionKey] = [
        OptionKey(name: "policy", accepts: Policy.allCases.map(\.rawValue).joined(separator: "|")) { o, v in
            guard let v, let p = Policy(rawValue: v) else { return false }
            o.policy = p; return true
        },
        OptionKey(name: "sensor", accepts: SensorKind.allCases.map(\.rawValue).joined(separator: "|")) { o, v in
            guard let v, let s = SensorKind(rawValue: v) else { return false }
            o.sensor = s; return true
        },
        OptionKey(name: "db", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.storePath = v; return true
        },
        OptionKey(name: "config", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.configPath = v; return true
        },
        OptionKey(name: "sim_socket", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.simSocket = v; return true
        },
        OptionKey(name: "timeout", accepts: "seconds, \(timeoutRange.lowerBound)-\(timeoutRange.upperBound)") { o, v in
            guard let n = boundedInteger(v, in: timeoutRange) else { return false }
            o.timeoutSeconds = n; return true
        },
        OptionKey(name: "max_tries", accepts: "\(maxTriesRange.lowerBound)-\(maxTriesRange.upperBound)") { o, v in
            guard let n = boundedInteger(v, in: maxTriesRange) else { return false }
            o.maxTries = n; return true
        },
        OptionKey(name: "fprint_helper", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.fprintHelper = v; return true
        },
        OptionKey(name: "fprint_device", accepts: "a driver name, a device id, or driver/id") { o, v in
            guard let v, isReaderSelector(v) else { return false }
            o.fprintDevice = v; return true
        },
        OptionKey(name: "fprint_virtual_device", accepts: "an absolute socket path of at most 107 bytes") { o, v in
            guard let v, isAbsolutePath(v), v.utf8.count <= maximumSocketPathLength else { return false }
            o.fprintVirtualDevice = v; return true
        },
        OptionKey(name: "fprint_virtual_device_storage", accepts: "an absolute socket path of at most 107 bytes") { o, v in
            guard let v, isAbsolutePath(v), v.utf8.count <= maximumSocketPathLength else { return false }
            o.fprintVirtualDeviceStorage = v; return true
        },
        OptionKey(name: "debug", accepts: "no value, or yes|no") { o, v in
            switch v {
            case nil, "yes", "true", "1": o.debug = true
            case "no", "false", "0": o.debug = false
            default: return false
            }
            return true
        },
    ]

    static func key(named name: String) -> OptionKey? { keys.first { $0.name == name } }

    /// A copy with one key set through the shared table (CLI options such as `--device`);
    /// nil when the key is unknown or the value invalid.
    public func with(key name: String, value: String) -> Options? {
        guard let key = Options.key(named: name), value.utf8.count <= maximumOptionValueLength else { return nil }
        var copy = self
        return key.apply(&copy, value) ? copy : nil
    }

    /// Names of every known key, in documentation order.
    public static var keyNames: [String] { keys.map(\.name) }
}

/// Longest option value accepted; longer ones are refused (and logged as invalid).
let maximumOptionValueLength = 4096

func isAbsolutePath(_ value: String) -> Bool {
    value.utf8.first == UInt8(ascii: "/") && value.utf8.count <= maximumOptionValueLength && !value.utf8.contains(0)
}

/// sun_path holds 108 bytes including the terminator; libfprint silently truncates longer paths.
public let maximumSocketPathLength = 107

/// A reader selector: printable ASCII without spaces, at most 128 bytes.
func isReaderSelector(_ value: String) -> Bool {
    !value.isEmpty && value.utf8.count <= 128 && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
}

/// Parses a decimal integer within `range` without trapping on any input.
func boundedInteger(_ value: String?, in range: ClosedRange<Int>) -> Int? {
    guard let value, !value.isEmpty, value.utf8.count <= 9,
          value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value), range.contains(n)
    else { return nil }
    return n
}
