// The table of option keys -- the one parser's vocabulary for module arguments, the config file
// and the CLI -- and what biounlock-check takes from its caller (Options.swift: the values).

/// What biounlock-check does with a key that its caller -- the module, running as the user --
/// relays from its pam.d line (Options.applyingCallerArguments). The caller is the user (who can
/// run the checker by hand or change the module's memory), so only keys that cannot widen what
/// the user can do are taken; everything that names a path, a sensor, a count or a rule comes
/// from the root-owned config file only.
enum CallerUse: Sendable {
    /// Ignored (logged): only the checker's root-owned config file sets it.
    case ignored
    /// Taken: it changes what is shown and how long the reader waits, nothing that is granted or
    /// counted (the lockouts that bound guessing are `bio_lockout`/`passcode_lockout`, file-only).
    case taken
    /// Taken only when the result is at least as strict as the file's (`stricter(candidate, file)`).
    case ifStricter(@Sendable (Options, Options) -> Bool)
    /// Meaningful to the module only (`check_helper`): dropped without a word.
    case moduleOnly
}

/// One option key: its name, what it accepts (for messages and docs) and how it applies.
struct OptionKey: Sendable {
    let name: String
    /// What the key accepts, for diagnostics: made when one is written, not with the table, which
    /// every sudo builds (joining and formatting ~40 of them at load cost it measurably: scripts/bench).
    private let describeAccepted: @Sendable () -> String
    var accepts: String { describeAccepted() }
    /// Whether the checker takes it from its caller (see CallerUse).
    var caller: CallerUse = .ignored
    /// Applies `value` (nil for a bare word such as `debug`); returns false when the value is invalid.
    let apply: @Sendable (inout Options, String?) -> Bool

    init(name: String, accepts: @autoclosure @escaping @Sendable () -> String, caller: CallerUse = .ignored,
         apply: @escaping @Sendable (inout Options, String?) -> Bool) {
        self.name = name
        self.describeAccepted = accepts
        self.caller = caller
        self.apply = apply
    }
}

extension Options {
    static let timeoutRange = 1...120
    static let maxTriesRange = 1...10
    static let lockoutRange = 1...1000
    static let touchFirstRange = 0...120

    /// `a,b,c` or `none` (an empty list): at most 32 printable names of at most 64 bytes.
    static func serviceList(_ value: String?) -> [String]? {
        let names = value == "none" ? [] : (value ?? "").split(separator: ",").map(String.init)
        guard names.count <= 32, names.allSatisfy({ $0.utf8.count <= 64 && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f } }) else { return nil }
        return names
    }
    /// How long a type-or-touch prompt waits for Enter once the reader is done (sudo's own
    /// password prompt gives up after 5 minutes too).
    public static let typingTimeoutSeconds = 300

    /// The table of keys shared by module arguments, the config file and the CLI.
    static let keys: [OptionKey] = [
        // Finger only is stricter than finger-or-passcode.
        OptionKey(name: "policy", accepts: Policy.allCases.map(\.rawValue).joined(separator: "|"),
                  caller: .ifStricter({ candidate, file in candidate.policy == .biometrics || file.policy == .biometricsOrPasscode })) { o, v in
            guard let v, let p = Policy(rawValue: v) else { return false }
            o.policy = p; return true
        },
        OptionKey(name: "sensor", accepts: SensorKind.allCases.map(\.rawValue).joined(separator: "|")) { o, v in
            guard let v, let s = SensorKind(rawValue: v) else { return false }
            o.sensor = s; o.sensorSetting = s; return true
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
        OptionKey(name: "timeout", accepts: "seconds, \(timeoutRange.lowerBound)-\(timeoutRange.upperBound)", caller: .taken) { o, v in
            guard let n = boundedInteger(v, in: timeoutRange) else { return false }
            o.timeoutSeconds = n; return true
        },
        // Wrong fingers per transaction; the count across transactions (bio_lockout) is file-only.
        OptionKey(name: "max_tries", accepts: "\(maxTriesRange.lowerBound)-\(maxTriesRange.upperBound)", caller: .taken) { o, v in
            guard let n = boundedInteger(v, in: maxTriesRange) else { return false }
            o.maxTries = n; return true
        },
        OptionKey(name: "bio_lockout", accepts: "\(lockoutRange.lowerBound)-\(lockoutRange.upperBound)") { o, v in
            guard let n = boundedInteger(v, in: lockoutRange) else { return false }
            o.biometricLockout = n; return true
        },
        OptionKey(name: "bio_unlock_time", accepts: "a duration such as 15m, 1h, 900") { o, v in
            guard let v, let n = parseDuration(v), n > 0 else { return false }
            o.biometricUnlockSeconds = n; return true
        },
        OptionKey(name: "passcode_lockout", accepts: "\(lockoutRange.lowerBound)-\(lockoutRange.upperBound)") { o, v in
            guard let n = boundedInteger(v, in: lockoutRange) else { return false }
            o.passcodeLockout = n; return true
        },
        OptionKey(name: "require_passcode", accepts: "none, or any of boot,enrolment,DURATION (e.g. 72h)") { o, v in
            guard let v, let rules = PasscodeRequirementRules(parsing: v) else { return false }
            o.requirePasscode = rules; return true
        },
        // ignore (nothing) is stricter than passcode (no finger), which is stricter than allow.
        OptionKey(name: "remote", accepts: "ignore|passcode|allow",
                  caller: .ifStricter({ candidate, file in candidate.remote.strictness >= file.remote.strictness })) { o, v in
            guard let v, let r = RemoteRule(configValue: v) else { return false }
            o.remote = r; return true
        },
        OptionKey(name: "lid", accepts: "skip|ignore", caller: .ifStricter({ candidate, file in candidate.lid == .skip || file.lid == .ignore })) { o, v in
            guard let v, let r = LidRule(rawValue: v) else { return false }
            o.lid = r; return true
        },
        OptionKey(name: "lid_path", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.lidPath = v; return true
        },
        OptionKey(name: "lid_usb_path", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.lidUSBPath = v; return true
        },
        OptionKey(name: "lid_reader_ids", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.lidReaderIDsPath = v; return true
        },
        OptionKey(name: "logind_path", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.logindPath = v; return true
        },
        OptionKey(name: "proc_path", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.procPath = v; return true
        },
        OptionKey(name: "log_retention", accepts: "a duration such as 90d, 12h") { o, v in
            guard let v, let n = parseDuration(v), n > 0 else { return false }
            o.logRetentionSeconds = n; return true
        },
        OptionKey(name: "log_max_events", accepts: "100-100000000") { o, v in
            guard let n = boundedInteger(v, in: 100...100_000_000) else { return false }
            o.logMaxEvents = n; return true
        },
        OptionKey(name: "prompt", accepts: "concurrent|sequential", caller: .taken) { o, v in
            guard let v, let m = PromptMode(rawValue: v) else { return false }
            o.prompt = m; return true
        },
        OptionKey(name: "touch_first", accepts: "seconds, \(touchFirstRange.lowerBound)-\(touchFirstRange.upperBound)", caller: .taken) { o, v in
            guard let n = boundedInteger(v, in: touchFirstRange) else { return false }
            o.touchFirstSeconds = n; return true
        },
        OptionKey(name: "reason", accepts: "text of at most 200 bytes, %s for the service", caller: .taken) { o, v in
            guard let v, !v.isEmpty, v.utf8.count <= 200, v.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7f }) else { return false }
            o.reason = v; return true
        },
        OptionKey(name: "locale_dir", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.localeDir = v; return true
        },
        OptionKey(name: "fprint_helper", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.fprintHelper = v; return true
        },
        OptionKey(name: "fprintd_helper", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.fprintdHelper = v; return true
        },
        OptionKey(name: "fprint_device", accepts: "a driver name, a device id, or driver/id") { o, v in
            guard let v, isReaderSelector(v) else { return false }
            o.fprintDevice = v; return true
        },
        OptionKey(name: "check_helper", accepts: "an absolute path", caller: .moduleOnly) { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.checkHelper = v; return true
        },
        OptionKey(name: "fprint_virtual_device", accepts: "an absolute socket path of at most 107 bytes") { o, v in
            guard let v, isAbsolutePath(v), v.utf8.count <= maximumSocketPathLength else { return false }
            o.fprintVirtualDevice = v; return true
        },
        OptionKey(name: "fprint_virtual_device_storage", accepts: "an absolute socket path of at most 107 bytes") { o, v in
            guard let v, isAbsolutePath(v), v.utf8.count <= maximumSocketPathLength else { return false }
            o.fprintVirtualDeviceStorage = v; return true
        },
        OptionKey(name: "fprintd_bus", accepts: "unix:path=ABSOLUTE-SOCKET-PATH (at most 107 bytes)") { o, v in
            guard let v, isUnixBusAddress(v) else { return false }
            o.fprintdBus = v; return true
        },
        OptionKey(name: "face", accepts: "on|off") { o, v in
            switch v {
            case "on", "yes": o.face = true
            case "off", "no": o.face = false
            default: return false
            }
            return true
        },
        OptionKey(name: "face_camera", accepts: "an absolute device path such as /dev/video2") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.faceCamera = v; return true
        },
        OptionKey(name: "face_allow_rgb", accepts: "yes|no") { o, v in
            switch v {
            case "yes": o.faceAllowRGB = true
            case "no": o.faceAllowRGB = false
            default: return false
            }
            return true
        },
        OptionKey(name: "face_threshold", accepts: "a distance from 0.20 to 0.60 (default 0.40)") { o, v in
            guard let v, let milli = parseThousandths(v), (200...600).contains(milli) else { return false }
            o.faceThresholdMilli = milli; return true
        },
        OptionKey(name: "face_helper", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.faceHelper = v; return true
        },
        OptionKey(name: "face_models", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.faceModels = v; return true
        },
        OptionKey(name: "face_sim_socket", accepts: "an absolute socket path of at most 107 bytes") { o, v in
            guard let v, isAbsolutePath(v), v.utf8.count <= maximumSocketPathLength else { return false }
            o.faceSimSocket = v; return true
        },
        OptionKey(name: "face_dialog_services", accepts: "PAM service names separated by commas") { o, v in
            guard let v else { return false }
            let names = v.split(separator: ",").map(String.init)
            guard names.count <= 32, names.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f } }) else { return false }
            o.faceDialogServices = names; return true
        },
        OptionKey(name: "password_services", accepts: "PAM service names separated by commas, or none") { o, v in
            guard let names = serviceList(v) else { return false }
            o.passwordServices = names; return true
        },
        OptionKey(name: "fingerprint_services", accepts: "PAM service names separated by commas, or none") { o, v in
            guard let names = serviceList(v) else { return false }
            o.fingerprintServices = names; return true
        },
        OptionKey(name: "prompt_first_services", accepts: "PAM service names separated by commas, or none") { o, v in
            guard let names = serviceList(v) else { return false }
            o.promptFirstServices = names; return true
        },
        OptionKey(name: "login_services", accepts: "PAM service names separated by commas, or nothing") { o, v in
            guard let v else { return false }
            let names = v.split(separator: ",").map(String.init)
            guard names.count <= 32, names.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f } }) else { return false }
            o.loginServices = names; return true
        },
        OptionKey(name: "debug", accepts: "no value, or yes|no") { o, v in
            switch v {
            case nil, "yes", "true", "1": o.debug = true
            case "no", "false", "0": o.debug = false
            default: return false
            }
            return true
        },
        OptionKey(name: "keep_password", accepts: "no value") { o, v in
            guard v == nil else { return false }
            o.keepPassword = true; return true
        },
        OptionKey(name: "passcode_only", accepts: "no value, or yes|no") { o, v in
            switch v {
            case nil, "yes", "true", "1": o.passcodeOnly = true
            case "no", "false", "0": o.passcodeOnly = false
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

    /// Keys biounlock-check takes from the words its caller relays (CallerUse), in table order.
    public static var callerKeyNames: [String] {
        keys.filter {
            switch $0.caller {
            case .taken, .ifStricter: return true
            case .ignored, .moduleOnly: return false
            }
        }.map(\.name)
    }

    /// These options (the checker's, from its root-owned config file) with the words its caller
    /// relayed from the module's pam.d line applied where CallerUse allows it. Returns the words
    /// that were not taken (unknown, invalid, file-only or less strict), for the log.
    ///
    /// Security choice: the caller is the user the checker authenticates, and anything the module
    /// sends can be forged by that user. A path from the caller (`db=`, `config=`, `sim_socket=`,
    /// `fprint_helper=`, `lid_path=`...) could point the root checker at a store, a sensor socket
    /// or a file the user made -- even a root-owned one with the user's own bytes in it, such as
    /// /proc/PID/environ of the checker itself -- and a count or a rule (`passcode_lockout=`,
    /// `require_passcode=`) could buy guesses. None of them is ever taken from the caller.
    public func applyingCallerArguments(_ words: [String]) -> (options: Options, ignored: [String]) {
        var result = self
        var ignored: [String] = []
        for word in words.prefix(64) {
            let (key, value) = OptionParser.split(word)
            guard let known = Options.key(named: key), value.map({ $0.utf8.count <= maximumOptionValueLength }) ?? true else {
                ignored.append(sanitizedForLog(key)); continue
            }
            var candidate = result
            guard known.apply(&candidate, value) else { ignored.append(known.name); continue }
            switch known.caller {
            case .ignored:
                ignored.append(known.name)
            case .moduleOnly:
                continue
            case .taken:
                result = candidate
            case .ifStricter(let stricter):
                if stricter(candidate, self) { result = candidate } else { ignored.append(known.name) }
            }
        }
        return (result, ignored)
    }
}

extension RemoteRule {
    /// How much of biounlock a remote session gets: less is stricter.
    var strictness: Int {
        switch self {
        case .allow: return 0
        case .passcode: return 1
        case .ignore: return 2
        }
    }
}
