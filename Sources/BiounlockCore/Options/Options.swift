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
/// "Configuration", and biounlock.conf(5)); the config file overrides them and module arguments override both.
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
    /// Where USB devices are read (`*/idVendor`, `*/idProduct`, `*/removable`): a reader on a
    /// removable port is not under the lid (SessionProbe.externalReader).
    public var lidUSBPath: String = "/sys/bus/usb/devices"
    /// The USB ids of fingerprint readers: libfprint's udev hwdb ("Supported by libfprint driver").
    public var lidReaderIDsPath: String = "/lib/udev/hwdb.d/60-autosuspend-libfprint-2.hwdb"
    /// Where systemd-logind keeps its session files (REMOTE=1 marks a remote session).
    public var logindPath: String = "/run/systemd/sessions"
    /// Where processes are read when logind knows nothing of the session: an sshd above the
    /// caller, or holding its audit session, marks it remote (SessionProbe.sshdReason).
    public var procPath: String = "/proc"
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

    // The face (issue 34; docs/GUIDE.md, "The face"). Off unless the admin turns it on.
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
    /// PAM services that are a greeter's or a lock screen's fingerprint stack, run beside its
    /// password stack (GDM's gdm-fingerprint beside gdm-password, KDE's kde-fingerprint beside kde):
    /// there biounlock is the reader and nothing else (`Options.serving(_:)`): the finger alone,
    /// no prompt of its own, no typing at a terminal -- the password stack beside it takes what is
    /// typed, the PIN included. Debian 12's KDE ships no kde-fingerprint file, so that stack falls
    /// to `other` (common-auth, with the profile): without this, biounlock ran there as in a
    /// dialog and asked for a PIN after `touch_first` (issue 33). The policy stays the configured
    /// one, so a finger lockout still waits for the passcode (typed in the password stack) under
    /// biometrics-or-passcode. Empty (`none`): no service is treated so. A caller that names itself
    /// so gets a chain that takes less (no passcode, no password), never more.
    public var fingerprintServices: [String] = Options.defaultFingerprintServices
    public static let defaultFingerprintServices = ["gdm-fingerprint", "kde-fingerprint"]
    /// PAM services whose caller reads the secret before PAM asks and answers every prompt with
    /// it, showing none of the module's messages (i3lock, swaylock, hyprlock; SDDM, whose greeter
    /// takes the password before its helper starts `sddm`; GNU screen's lock, which reads
    /// "Password:" itself and has no pam.d file of its own on Debian, so `other`): there the
    /// prompt comes at once, whatever `touch_first` says -- the touch request would only hold the
    /// typed password back (Debian's /etc/pam.d/i3lock is `auth include login`, sddm's
    /// `@include common-auth`: common-auth with the profile). An empty answer still waits for a
    /// touch. `none`: touch_first everywhere.
    public var promptFirstServices: [String] = Options.defaultPromptFirstServices
    public static let defaultPromptFirstServices = ["i3lock", "swaylock", "hyprlock", "sddm", "screen"]

    /// This run is a fingerprint stack's (`serving`): the touch request, then the reader alone
    /// until its own timeout, no prompt. Not an option key: set from `fingerprint_services` only.
    public private(set) var readerAlone = false

    /// The options as they apply to `service`: in `fingerprint_services`, the reader alone (no
    /// prompt of biounlock's, no type-or-touch terminal, the policy unchanged); elsewhere unchanged.
    public func serving(_ service: String) -> Options {
        guard fingerprintServices.contains(where: { $0.utf8.elementsEqual(service.utf8) }) else { return self }
        var o = self
        o.prompt = .sequential
        o.readerAlone = true
        return o
    }

    /// Whether `service` is one of `prompt_first_services`: its caller reads the secret itself and
    /// answers the conversation's prompts with it.
    public func promptsFirst(_ service: String) -> Bool { promptFirstServices.contains(service) }

    /// `touch_first` for this service: 0 in `prompt_first_services`.
    public func touchFirstSeconds(service: String) -> Int {
        promptsFirst(service) ? 0 : touchFirstSeconds
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
