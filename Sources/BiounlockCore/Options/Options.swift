/// Which credentials the chain may use (docs/DESIGN.md maps these to LocalAuthentication's policies).
public enum Policy: String, CaseIterable, Sendable {
    /// Finger first, biounlock's own passcode as the fallback (deviceOwnerAuthentication).
    case biometricsOrPasscode = "biometrics-or-passcode"
    /// Finger only; anything else is left to the next module in the stack (pam_unix).
    case biometrics
}

/// Where fingerprints come from.
public enum SensorKind: String, CaseIterable, Sendable {
    /// fprintd when its D-Bus service is installed, libfprint otherwise (resolved when the
    /// options are loaded: see SensorSelection). Never the kind of a stored template.
    case auto
    /// libfprint-2 readers, driven by the `biounlock-fprint` helper process.
    case libfprint
    /// The fprintd daemon over D-Bus (through the helper): the prints GNOME Settings, KDE and
    /// `fprintd-enroll` make, which fprintd keeps; the store holds none.
    case fprintd
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
    public static let defaultFprintdHelperPath = "/usr/libexec/biounlock/biounlock-fprintd"
    /// Where scripts/install (and the Debian package) put the setuid checker.
    public static let defaultCheckHelperPath = "/usr/libexec/biounlock/biounlock-check"

    /// The system bus, where fprintd lives.
    public static let systemBusAddress = "unix:path=/run/dbus/system_bus_socket"

    public var policy: Policy = .biometricsOrPasscode
    /// The backend in use. `auto` until the options are loaded (Configuration.load resolves it);
    /// `sensorSetting` keeps what was configured.
    public var sensor: SensorKind = .auto
    /// What `sensor=` said (`auto` unless set), for `biounlock doctor`.
    public var sensorSetting: SensorKind = .auto
    /// Why `sensor` is what it is (set when `auto` is resolved), for `biounlock doctor`.
    public var sensorChoice: SensorSelection.Reason?
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
    /// The re-authentication stack of biounlockd (/etc/pam.d/biounlock-reauth): only the typed
    /// passcode is taken, the reader is never opened, and a user who has biometric unlock on for
    /// any service is asked (docs/SECURITY.md, "biounlockd"). Never taken from the checker's caller.
    public var passcodeOnly: Bool = false
    /// The libfprint helper executable (root-owned, in root-owned directories).
    public var fprintHelper: String = Options.defaultFprintHelperPath
    /// fprintd's client for sensor=fprintd (root-owned, in root-owned directories).
    public var fprintdHelper: String = Options.defaultFprintdHelperPath
    /// Which reader to use when several are attached: a driver name, a device id, or "driver/id".
    public var fprintDevice: String?
    /// Test setting: a libfprint `virtual_device` listening on this socket (FP_VIRTUAL_DEVICE in
    /// the helper's environment). Only ever read from root-owned configuration, never from the
    /// caller's environment.
    public var fprintVirtualDevice: String?
    /// Test setting: the `virtual_device_storage` variant (FP_VIRTUAL_DEVICE_STORAGE).
    public var fprintVirtualDeviceStorage: String?
    /// The D-Bus address where sensor=fprintd finds fprintd: the system bus, or (tests) a private
    /// bus. Only ever read from root-owned configuration; DBUS_SYSTEM_BUS_ADDRESS is never read.
    public var fprintdBus: String = Options.systemBusAddress
    /// The setuid checker the module runs when it runs without root (screen lockers that run as
    /// the user). Read by the module only; the checker itself never takes a path from its caller.
    public var checkHelper: String = Options.defaultCheckHelperPath

    /// Consecutive failed matches (across transactions and services) that lock biometrics.
    public var biometricLockout: Int = 5
    /// Under policy=biometrics (no biounlock passcode to unlock with): seconds until a biometric
    /// lockout lifts by itself.
    public var biometricUnlockSeconds: Int = 15 * 60
    /// Consecutive wrong passcodes before the escalating waits start.
    public var passcodeLockout: Int = 5
    /// When the finger is skipped and the passcode (or, under policy=biometrics, the password)
    /// is required.
    public var requirePasscode: PasscodeRequirementRules = .default
    /// Remote sessions: left alone (PAM_IGNORE, the default), the passcode only, or the finger too.
    public var remote: RemoteRule = .ignore
    /// A closed laptop lid: skip the finger (default) or ignore the lid.
    public var lid: LidRule = .skip
    /// Where lid switches are read (one directory per lid, each with a `state` file).
    public var lidPath: String = "/proc/acpi/button/lid"
    /// Where systemd-logind keeps its session files (REMOTE=1 marks a remote session).
    public var logindPath: String = "/run/systemd/sessions"
    /// Audit events older than this (seconds) are pruned.
    public var logRetentionSeconds: Int = 90 * 86400
    /// At most this many audit events are kept.
    public var logMaxEvents: Int = 100_000
    /// `concurrent`: where the caller is a terminal, one prompt takes a touch or a typed passcode.
    public var prompt: PromptMode = .concurrent
    /// Callers without a terminal (dialogs, lockers, pamtester): seconds the touch request is shown
    /// alone before the passcode-or-password prompt comes up (the reader keeps waiting behind it).
    /// 0: the prompt at once, for callers that answer every prompt with the secret they hold.
    public var touchFirstSeconds: Int = 2
    /// The touch prompt; `%s` becomes the PAM service. The default is shown in the user's
    /// language; a text the admin sets is shown as written.
    public var reason: String = Options.defaultReason
    public static let defaultReason = "Touch the fingerprint reader to authenticate for %s"
    /// Test setting: where the message catalogs are (`LANG/LC_MESSAGES/biounlock.mo`). Only ever
    /// read from root-owned configuration, like every option.
    public var localeDir: String = Localization.defaultDirectory

    // The face (issue 34; README, "The face"). Off unless the admin turns it on.
    public static let defaultFaceHelperPath = "/usr/libexec/biounlock/biounlock-face"
    public static let defaultFaceModels = "/usr/share/biounlock/face"
    /// `face=on`: the camera may watch for an enrolled user's face beside the reader.
    public var face: Bool = false
    /// The V4L2 camera (an infrared one: greyscale frames).
    public var faceCamera: String = "/dev/video0"
    /// Take a colour camera too (weaker: `enable` and `doctor` say so).
    public var faceAllowRGB: Bool = false
    /// The largest descriptor distance that counts as the same face, in thousandths (0.40: see
    /// bench/RESULTS.md, "The face").
    public var faceThresholdMilli: Int = 400
    /// The face helper executable (root-owned, in root-owned directories).
    public var faceHelper: String = Options.defaultFaceHelperPath
    /// Where the model files are (root-owned).
    public var faceModels: String = Options.defaultFaceModels
    /// Test setting: the simulated camera's control socket, used instead of `face_camera`.
    public var faceSimSocket: String?
    /// Services without a terminal where the face is tried (a greeter, a screen locker).
    public var faceDialogServices: [String] = []
    /// PAM services whose caller runs a fingerprint stack of its own beside them (GDM runs
    /// gdm-fingerprint beside gdm-password, KDE's lock screen kde-fingerprint beside kde): there
    /// biounlock never opens the reader -- so the two stacks never both claim it -- and its
    /// prompt, the passcode or the password, is up at once (docs/DESIGN.md, "Greeters and lock
    /// screens as Debian ships them"). Empty (`none`): every service may use the reader.
    public var passwordServices: [String] = Options.defaultPasswordServices
    public static let defaultPasswordServices = ["gdm-password", "kde"]
    /// PAM services whose caller reads the secret before PAM asks and answers every prompt with
    /// it, showing none of the module's messages (i3lock, swaylock, hyprlock): there the prompt
    /// comes at once, whatever `touch_first` says -- the touch request would only hold the typed
    /// password back (Debian's /etc/pam.d/i3lock is `auth include login`, common-auth with the
    /// profile). An empty answer still waits for a touch. `none`: touch_first everywhere.
    public var promptFirstServices: [String] = Options.defaultPromptFirstServices
    public static let defaultPromptFirstServices = ["i3lock", "swaylock", "hyprlock"]

    /// `touch_first` for this service: 0 in `prompt_first_services`.
    public func touchFirstSeconds(service: String) -> Int {
        promptFirstServices.contains(service) ? 0 : touchFirstSeconds
    }
    /// The services that start a desktop or console session (issue 32): there, the rule "after a
    /// restart" of require_passcode takes the Unix password (through the stack's password module),
    /// not biounlock's passcode, so that the keyring that opens with it is opened once per boot.
    /// Empty: no service is treated so.
    public var loginServices: [String] = Options.defaultLoginServices
    public static let defaultLoginServices = ["login", "gdm-password", "gdm-fingerprint", "lightdm", "sddm"]
    /// `keep_password`: this line, after the password module of a login service, keeps the Unix
    /// password the stack just accepted for the boot (issue 32; PamBiounlock.KeptPassword). It
    /// decides nothing: the line always returns PAM_IGNORE.
    public var keepPassword = false

    public init() {}
}

/// What biounlock does in a remote session (SSH, PAM_RHOST of another host, logind REMOTE=1).
/// A short PIN is a credential of this device, not a network credential: by default a remote
/// login is left to the password (or the keys) the remote service already checks.
public enum RemoteRule: String, CaseIterable, Sendable {
    /// PAM_IGNORE: nothing asked, nothing shown, nothing counted.
    case ignore
    /// No finger (nobody can touch the reader from there); the passcode-or-password prompt.
    case passcode
    /// The finger too (the reader is in reach of the remote user, e.g. a lab machine).
    case allow

    /// `skip` is the name 0.1.0 used for `passcode`.
    init?(configValue: String) {
        if configValue == "skip" { self = .passcode; return }
        self.init(rawValue: configValue)
    }
}
public enum PromptMode: String, CaseIterable, Sendable { case concurrent, sequential }
public enum LidRule: String, CaseIterable, Sendable { case skip, ignore }

/// `require_passcode=`: which rules make the passcode required (LocalAuthentication's
/// "passcode required after restart / after enrolment change / after 48 h").
public struct PasscodeRequirementRules: Equatable, Sendable {
    public var afterBoot: Bool
    public var afterEnrolmentChange: Bool
    /// Seconds since the last passcode after which it is required again; nil: never.
    public var maximumAgeSeconds: Int?

    public static let `default` = PasscodeRequirementRules(afterBoot: true, afterEnrolmentChange: true, maximumAgeSeconds: 72 * 3600)
    public static let none = PasscodeRequirementRules(afterBoot: false, afterEnrolmentChange: false, maximumAgeSeconds: nil)

    /// Parses `boot,enrolment,72h`, any subset of them, or `none`.
    public init?(parsing text: String) {
        if text == "none" { self = .none; return }
        var rules = PasscodeRequirementRules.none
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            switch word {
            case "boot": rules.afterBoot = true
            case "enrolment", "enrollment": rules.afterEnrolmentChange = true
            default:
                guard let seconds = parseDuration(String(word)), seconds > 0 else { return nil }
                rules.maximumAgeSeconds = seconds
            }
        }
        self = rules
    }

    public init(afterBoot: Bool, afterEnrolmentChange: Bool, maximumAgeSeconds: Int?) {
        self.afterBoot = afterBoot; self.afterEnrolmentChange = afterEnrolmentChange; self.maximumAgeSeconds = maximumAgeSeconds
    }

    public var description: String {
        var words: [String] = []
        if afterBoot { words.append("boot") }
        if afterEnrolmentChange { words.append("enrolment") }
        if let age = maximumAgeSeconds { words.append(formatDuration(age)) }
        return words.isEmpty ? "none" : words.joined(separator: ",")
    }
}

/// Parses `90` (seconds), `30s`, `15m`, `72h` or `3d`, up to one year; nil otherwise.
public func parseDuration(_ text: String) -> Int? {
    guard let last = text.utf8.last else { return nil }
    // A switch, not a [Character: Int]: the dictionary's type was built at run time in every
    // fresh sudo whose config names a duration, with a scan of every protocol conformance in
    // the module for Character: Hashable (perf; about 0.3 ms of each whole process in
    // interleaved spawn runs).
    let unit: Int?
    switch last {
    case UInt8(ascii: "s"): unit = 1
    case UInt8(ascii: "m"): unit = 60
    case UInt8(ascii: "h"): unit = 3600
    case UInt8(ascii: "d"): unit = 86400
    default: unit = nil
    }
    let (digits, scale) = unit.map { (String(text.utf8.dropLast()) ?? "", $0) } ?? (text, 1)
    guard let n = boundedInteger(digits, in: 0...(366 * 86400)), n <= 366 * 86400 / scale else { return nil }
    return n * scale
}

/// `72h`, `15m`, `90s`: the largest whole unit.
public func formatDuration(_ seconds: Int) -> String {
    if seconds % 86400 == 0 && seconds >= 86400 { return "\(seconds / 86400)d" }
    if seconds % 3600 == 0 && seconds >= 3600 { return "\(seconds / 3600)h" }
    if seconds % 60 == 0 && seconds >= 60 { return "\(seconds / 60)m" }
    return "\(seconds)s"
}

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
        OptionKey(name: "logind_path", accepts: "an absolute path") { o, v in
            guard let v, isAbsolutePath(v) else { return false }
            o.logindPath = v; return true
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

/// Longest option value accepted; longer ones are refused (and logged as invalid).
let maximumOptionValueLength = 4096

func isAbsolutePath(_ value: String) -> Bool {
    value.utf8.first == UInt8(ascii: "/") && value.utf8.count <= maximumOptionValueLength && !value.utf8.contains(0)
}

/// sun_path holds 108 bytes including the terminator; libfprint silently truncates longer paths.
public let maximumSocketPathLength = 107

/// A D-Bus address of the one kind biounlock accepts: `unix:path=` and an absolute socket path,
/// nothing after it. Security choice: D-Bus libraries run programs for `autolaunch:` and
/// `unixexec:` addresses and connect anywhere for `tcp:`; a Unix socket whose directory the module
/// checks is the only transport fprintd's system bus needs (and all biounlock-fprintd speaks).
func isUnixBusAddress(_ value: String) -> Bool {
    let prefix = "unix:path="
    guard value.hasPrefix(prefix) else { return false }
    let path = String(value.dropFirst(prefix.count))
    return isAbsolutePath(path) && path.utf8.count <= maximumSocketPathLength
        && path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "%") }
}

/// The socket path of a `unix:path=` address.
public func unixBusPath(_ address: String) -> String? {
    guard isUnixBusAddress(address) else { return nil }
    return String(address.dropFirst("unix:path=".count))
}

/// A reader selector: printable ASCII without spaces, at most 128 bytes.
func isReaderSelector(_ value: String) -> Bool {
    !value.isEmpty && value.utf8.count <= 128 && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
}

/// Parses "0.4", "0.40" or "0.405" (at most three decimals, below 10) as thousandths.
func parseThousandths(_ value: String) -> Int? {
    let parts = value.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, let whole = boundedInteger(String(parts[0]), in: 0...9) else { return nil }
    guard parts.count == 2 else { return whole * 1000 }
    let fraction = String(parts[1])
    guard !fraction.isEmpty, fraction.utf8.count <= 3, let f = boundedInteger(fraction, in: 0...999) else { return nil }
    let scale = fraction.utf8.count == 1 ? 100 : fraction.utf8.count == 2 ? 10 : 1
    return whole * 1000 + f * scale
}

/// Parses a decimal integer within `range` without trapping on any input: ASCII digits only (no
/// sign, no spaces), at most 9 of them. The one integer rule for module arguments, the config file
/// and the CLI's options.
public func boundedInteger(_ value: String?, in range: ClosedRange<Int>) -> Int? {
    guard let value, !value.isEmpty, value.utf8.count <= 9,
          value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value), range.contains(n)
    else { return nil }
    return n
}
