import BiounlockCore
import BiounlockSystem

/// `biounlock doctor`'s checks of an installation, as a table of named checks each returning
/// findings with their fixes. The CLI gathers what this library does not link (the store, the
/// sensors, SQLite's versions: `Doctor.Probes`) and prints the findings as text or JSON; the
/// settings app or a test can run the same table with other probes.
public enum Doctor {
    public struct Finding: Equatable, Sendable {
        public enum Status: String, Sendable { case ok, warning, problem }
        public let check: String
        public let status: Status
        public let detail: String
        public let fix: String?

        public init(check: String, status: Status, detail: String, fix: String?) {
            self.check = check
            self.status = status
            self.detail = detail
            self.fix = fix
        }
    }

    /// What the checks read that is given, not looked up: the effective options, where to look.
    public struct Inputs: Sendable {
        public var options: Options
        public var pamDir: String
        /// The module named on the command line; nil: searched in `securityDirs`.
        public var module: String?
        /// The config file was refused while loading (the other checks then use the defaults).
        public var configProblem: FileTrustProblem?
        /// The global options the fixes repeat (`--store PATH`...).
        public var globals: [String]

        public init(options: Options, pamDir: String = "/etc/pam.d", module: String? = nil,
                    configProblem: FileTrustProblem? = nil, globals: [String] = []) {
            self.options = options
            self.pamDir = pamDir
            self.module = module
            self.configProblem = configProblem
            self.globals = globals
        }
    }

    /// The store as the caller can see it.
    public enum StoreState: Sendable {
        case missing
        /// This process cannot tell (not root): why, and the command that can.
        case hidden(String, fix: String?)
        case present
    }

    public struct Failure: Error, Equatable, Sendable {
        public let message: String
        public init(_ message: String) { self.message = message }
    }

    /// The reader as the configured backend sees it.
    public enum ReaderState: Sendable {
        /// sensor=fprintd: the readers fprintd lists ("fprintd/SHORT NAME"), or why it cannot be asked.
        case fprintd(Result<[String], Failure>)
        /// sensor=libfprint or simulated: nil when it opened, else why not.
        case sensor(Failure?)
    }

    /// The seams: what the admin library does not link, filled by the CLI (BiounlockStore,
    /// BiounlockSensors) or by a test.
    public struct Probes {
        public var store: (Options) -> StoreState
        public var storeTrust: (String) -> FileTrustProblem?
        /// The store's rows, read only once `storeTrust` found nothing wrong.
        public var records: (Options) -> Result<[UserRecord], Failure>
        public var reader: (Options) -> ReaderState
        /// SQLite linked into the module and the system's (versions or package versions).
        public var sqlite: () -> (built: String, running: String)
        public var fprintdRunning: () -> Bool

        public init(store: @escaping (Options) -> StoreState,
                    storeTrust: @escaping (String) -> FileTrustProblem?,
                    records: @escaping (Options) -> Result<[UserRecord], Failure>,
                    reader: @escaping (Options) -> ReaderState,
                    sqlite: @escaping () -> (built: String, running: String),
                    fprintdRunning: @escaping () -> Bool = Doctor.fprintdRunning) {
            self.store = store
            self.storeTrust = storeTrust
            self.records = records
            self.reader = reader
            self.sqlite = sqlite
            self.fprintdRunning = fprintdRunning
        }
    }

    public struct Check: Sendable {
        public let name: String
        public let run: @Sendable (Inputs, Probes) -> [Finding]
    }

    /// The checks, in the order they are reported.
    public static let checks: [Check] = [
        Check(name: "module") { inputs, _ in [module(inputs.module)] },
        Check(name: "checker") { inputs, _ in [checker(inputs.options.checkHelper)] },
        Check(name: "sqlite") { _, probes in let v = probes.sqlite(); return [sqlite(built: v.built, running: v.running)] },
        Check(name: "face") { inputs, _ in face(inputs.options) },
        Check(name: "pam.d") { inputs, _ in pamServices(inputs.pamDir, fingerprintServices: inputs.options.fingerprintServices) },
        Check(name: "keyring") { inputs, _ in keyring(inputs.options, pamDir: inputs.pamDir) },
        Check(name: "store") { inputs, probes in store(inputs, probes) },
        Check(name: "config") { inputs, _ in [config(inputs)] },
        Check(name: "sensor") { inputs, probes in sensor(inputs.options, probes) },
    ]

    /// Every check, in order.
    public static func run(_ inputs: Inputs, _ probes: Probes) -> [Finding] {
        checks.flatMap { $0.run(inputs, probes) }
    }

    /// Exit status: 1 when anything is a problem (warnings alone: 0).
    public static func exitStatus(_ findings: [Finding]) -> Int32 {
        findings.contains { $0.status == .problem } ? 1 : 0
    }

    public static let securityDirs = ["/lib/x86_64-linux-gnu/security", "/usr/lib/x86_64-linux-gnu/security", "/lib/security", "/usr/lib/security"]

    // MARK: - The module and its helpers

    static func module(_ given: String?) -> Finding {
        guard let path = given ?? securityDirs.map({ $0 + "/pam_biounlock.so" }).first(where: { FileSystem.exists($0) }) else {
            return Finding(check: "module", status: .problem,
                           detail: L("pam_biounlock.so is not in {dirs}", ["dirs": securityDirs.joined(separator: ", ")]),
                           fix: L("install the package (apt install ./dist/biounlock_VERSION_amd64.deb) or run scripts/install"))
        }
        guard let st = try? FileStatus.of(path, followingSymbolicLinks: false) else {
            return Finding(check: "module", status: .problem, detail: L("{path} does not exist", ["path": path]), fix: L("install build/pam_biounlock.so there"))
        }
        if st.owner != 0 || st.isWritableByGroupOrOthers {
            return Finding(check: "module", status: .problem, detail: L("{path} is not root-owned or is writable by others", ["path": path]),
                           fix: "chown root:root \(path); chmod 0644 \(path)")
        }
        // dlopen in a child process, so a broken module cannot take this one down.
        guard SharedObject.loadsInChildProcess(path, exporting: ["pam_sm_authenticate", "pam_sm_setcred"]) else {
            return Finding(check: "module", status: .problem,
                           detail: L("{path} does not load (or lacks pam_sm_authenticate/pam_sm_setcred): PAM would report 'module unknown'", ["path": path]),
                           fix: L("reinstall it from a build for this system"))
        }
        return Finding(check: "module", status: .ok, detail: L("{path} loads and exports the PAM entry points", ["path": path]), fix: nil)
    }

    /// biounlock-check: what the module checks before it starts it (TrustedFiles.checkSetuidHelper):
    /// setuid root, executable by others, root-owned and not writable by others all the way up.
    static func checker(_ path: String) -> Finding {
        switch TrustedFiles.checkSetuidHelper(path) {
        case nil:
            return Finding(check: "checker", status: .ok,
                           detail: L("{path}: setuid root, root-owned all the way up; screen lockers that run as the user can use biounlock", ["path": path]), fix: nil)
        case .missing?:
            // TRANSLATORS: `biounlock doctor`; the checker is biounlock-check, which screen lockers
            // that run PAM as the user (not as root) need to reach biounlock's root-only store.
            return Finding(check: "checker", status: .warning,
                           detail: L("{path} does not exist: screen lockers that run as the user (i3lock, swaylock, xscreensaver) fall back to the password", ["path": path]),
                           fix: L("install the package (or scripts/install), or point check_helper at the installed biounlock-check"))
        case let problem?:
            return Finding(check: "checker", status: .problem,
                           detail: L("{problem}: the module refuses it and screen lockers that run as the user (i3lock, swaylock, xscreensaver) fall back to the password",
                                     ["problem": "\(problem)"]),
                           fix: L("{command}; every directory above it root-owned and not writable by group or others",
                                  ["command": "chown root:root \(path); chmod 4755 \(path)"]))
        }
    }

    /// pam_biounlock.so carries the SQLite of the build (libsqlite3.a, Package.swift): a fix in
    /// the system's libsqlite3 reaches the module only with a rebuilt biounlock, so a system
    /// SQLite other than the module's is said. A warning, not a problem: the module reads only a
    /// root-owned store it checked, with fixed statements (docs/SECURITY.md, "SQLite inside the
    /// module"). The CLI's probe compares the packages' versions when installed from the package
    /// (a Debian security update keeps SQLite's own version number), else SQLite's.
    public static func sqlite(built: String, running: String) -> Finding {
        guard built != running else {
            // TRANSLATORS: `biounlock doctor`; {version} is SQLite's version, e.g. 3.40.1.
            return Finding(check: "sqlite", status: .ok, detail: L("pam_biounlock.so has SQLite {version} linked in, the version this system has", ["version": built]), fix: nil)
        }
        // TRANSLATORS: `biounlock doctor`; {built} and {running} are SQLite versions, e.g. 3.40.1.
        return Finding(check: "sqlite", status: .warning,
                       detail: L("pam_biounlock.so has SQLite {built} linked in and this system has {running}: a SQLite fix reaches the module only when biounlock is rebuilt",
                                 ["built": built, "running": running]),
                       fix: L("rebuild and reinstall biounlock (scripts/package), or install the distribution's rebuilt package"))
    }

    /// The face, when it is on: the helper and its models must pass the module's trust checks.
    static func face(_ options: Options) -> [Finding] {
        guard options.face else { return [] }
        var findings: [Finding] = []
        if let problem = TrustedFiles.checkExecutable(options.faceHelper) {
            findings.append(Finding(check: "face", status: .problem,
                                    detail: L("face=on, but the face helper is refused: {problem}; the face is never tried", ["problem": "\(problem)"]),
                                    fix: L("install the biounlock-face package")))
        }
        for name in ["shape_predictor_5_face_landmarks.dat", "dlib_face_recognition_resnet_model_v1.dat"] {
            if let problem = TrustedFiles.checkFile(options.faceModels + "/" + name) {
                findings.append(Finding(check: "face", status: .problem,
                                        detail: L("face=on, but a face model is refused: {problem}; the face is never tried", ["problem": "\(problem)"]),
                                        fix: L("install the biounlock-face package")))
            }
        }
        if options.faceAllowRGB {
            findings.append(Finding(check: "face", status: .warning,
                                    detail: L("face_allow_rgb=yes: a colour camera is taken, and a printed photo may pass for a face"),
                                    fix: L("use an infrared camera and set face_allow_rgb = no")))
        }
        if findings.isEmpty {
            findings.append(Finding(check: "face", status: .ok, detail: L("face=on: the face helper and its models are in place"), fix: nil))
        }
        return findings
    }

    // MARK: - The PAM services

    static func pamServices(_ pamDir: String, fingerprintServices: [String] = Options.defaultFingerprintServices) -> [Finding] {
        let files = readPamDir(pamDir)
        guard !files.isEmpty else {
            return [Finding(check: "pam.d", status: .warning, detail: L("no readable service files in {dir}", ["dir": pamDir]), fix: nil)]
        }
        var findings: [Finding] = []
        let lint = PamStackLint.lint(files: files, fingerprintServices: fingerprintServices)
        let users = files.filter { $0.value.contains("pam_biounlock.so") }.keys.sorted()
        if users.isEmpty {
            // The package's profile first; a hand edit only for a service of its own.
            findings.append(Finding(check: "pam.d", status: .warning, detail: L("no service in {dir} uses pam_biounlock.so yet", ["dir": pamDir]),
                                    fix: L("run {command} (every service that includes common-auth); or, for one service only, add '{line}' before its '@include common-auth' (see pam.d/sudo)",
                                           ["command": PamStackLint.enableCommand, "line": "auth \(PamStackLint.recommendedControl) pam_biounlock.so"])))
        } else if lint.isEmpty {
            findings.append(Finding(check: "pam.d", status: .ok,
                                    detail: L("used by {services}; every stack falls back to the password", ["services": users.joined(separator: ", ")]), fix: nil))
        }
        for f in lint {
            findings.append(Finding(check: "pam.d/\(f.file):\(f.line)", status: f.severity == .problem ? .problem : .warning, detail: f.message, fix: f.fix))
        }
        for (file, problem) in PamDirectory.trustProblems(pamDir, names: files.keys.sorted()) {
            let path = file.map { pamDir + "/" + $0 } ?? pamDir
            if let file {
                findings.append(Finding(check: "pam.d/\(file)", status: .problem,
                                        detail: L("{problem}: whoever can write it decides how the services that use it authenticate", ["problem": "\(problem)"]),
                                        fix: "chown root:root \(path); chmod 0644 \(path)"))
            } else {
                findings.append(Finding(check: "pam.d", status: .problem,
                                        detail: L("{problem}: whoever can write it decides how every service authenticates", ["problem": "\(problem)"]),
                                        fix: "chown root:root \(path); chmod 0755 \(path)"))
            }
        }
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            for path in text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) where path.hasPrefix("/") && path.hasSuffix("pam_biounlock.so") {
                if !FileSystem.exists(String(path)) {
                    findings.append(Finding(check: "pam.d/\(name)", status: .problem, detail: L("{path} does not exist", ["path": String(path)]),
                                            fix: L("fix the path or install the module there")))
                }
            }
        }
        return findings
    }

    /// Issue 32: at the login services that use biounlock, whether the Unix password is kept for
    /// the keyring (a `keep_password` line in the stack, the service's file or what it includes).
    /// Without it a finger or PIN login leaves GNOME Keyring and KWallet locked: a warning with
    /// the profile that adds the line. Nothing is said when no login service uses biounlock.
    static func keyring(_ options: Options, pamDir: String) -> [Finding] {
        let files = readPamDir(pamDir)
        var kept: [String] = [], locked: [String] = []
        // A greeter's fingerprint-only stack (gdm-fingerprint) needs no line of its own: the
        // password is kept where it is typed (gdm-password) and handed on where the finger logs in.
        for service in options.loginServices.sorted() where !PamStackLint.isFingerprintOnly(service: service) {
            // The stack as PamStackLint reads it: comments and continuations, @include and
            // `auth include|substack` followed.
            let lines = PamStackLint.authLines(of: service, files: files, depth: 0).filter { $0.moduleName == "pam_biounlock.so" }
            guard lines.contains(where: { !$0.arguments.contains("keep_password") }) else { continue }
            if lines.contains(where: { $0.arguments.contains("keep_password") }) { kept.append(service) } else { locked.append(service) }
        }
        if !locked.isEmpty {
            return [Finding(check: "keyring", status: .warning,
                            detail: L("a finger or PIN login at {services} leaves the keyring locked: no keep_password line keeps the password for the boot",
                                      ["services": locked.joined(separator: ", ")]),
                            fix: L("run {command}, or add '{line}' after the password module", ["command": "pam-auth-update --enable biounlock-keyring",
                                                                                               "line": "auth optional pam_biounlock.so keep_password"]))]
        }
        if !kept.isEmpty {
            return [Finding(check: "keyring", status: .ok,
                            detail: L("the password is kept for the keyring at {services}", ["services": kept.joined(separator: ", ")]), fix: nil)]
        }
        return []
    }

    /// Regular files of the pam.d directory, at most 64 KiB each (PamDirectory: the layer's
    /// directory reading, as `biounlock sensors` and the module read directories).
    static func readPamDir(_ dir: String) -> [String: String] {
        var files: [String: String] = [:]
        for name in PamDirectory.serviceNames(dir) {
            guard let bytes = FileSystem.readRegularFile(dir + "/" + name, limit: PamDirectory.maximumFileSize) else { continue }
            files[name] = String(decoding: bytes, as: UTF8.self)
        }
        return files
    }

    // MARK: - The store and the config

    static func store(_ inputs: Inputs, _ probes: Probes) -> [Finding] {
        let path = inputs.options.storePath
        switch probes.store(inputs.options) {
        case .missing:
            return [Finding(check: "store", status: .warning,
                            detail: L("{path} does not exist yet (created by the first enrol or passcode set)", ["path": path]), fix: nil)]
        case .hidden(let why, let fix):
            // Not "does not exist yet": a user who is not root cannot see into its directory.
            return [Finding(check: "store", status: .problem, detail: why, fix: fix)]
        case .present:
            if let problem = probes.storeTrust(path) {
                return [Finding(check: "store", status: .problem,
                                detail: L("{problem}; the module refuses it and everyone falls back to the password", ["problem": "\(problem)"]),
                                fix: L("chown root:root the file and its directory; chmod 0700 the directory, 0600 the file"))]
            }
            let trusted = Finding(check: "store", status: .ok, detail: L("{path}: root-owned, not writable by others", ["path": path]), fix: nil)
            switch probes.records(inputs.options) {
            case .failure(let failure):
                return [trusted, Finding(check: "store", status: .problem, detail: failure.message, fix: nil)]
            case .success(let records):
                return [trusted] + records.compactMap { record(of: $0, globals: inputs.globals) }
            }
        }
    }

    /// A row that belongs to another account than the one that has the name now (AccountBinding).
    static func record(of r: UserRecord, globals: [String]) -> Finding? {
        let binding = AccountBinding.of(r, account: Accounts.lookup(r.name))
        guard !binding.isBound else { return nil }
        return Finding(check: "store/\(sanitizedForLog(r.name))", status: .warning,
                       detail: L("{problem}; the module ignores the record", ["problem": binding.localizedProblem(user: r.name)]),
                       fix: AccountBinding.fix(user: r.name, globals: globals))
    }

    static func config(_ inputs: Inputs) -> Finding {
        let path = inputs.options.configPath
        switch inputs.configProblem ?? TrustedFiles.checkFile(path) {
        case nil:
            return Finding(check: "config", status: .ok, detail: L("{path}: root-owned, not writable by others", ["path": path]), fix: nil)
        case .missing?:
            return Finding(check: "config", status: .ok, detail: L("no {path}; defaults apply", ["path": path]), fix: nil)
        case let problem?:
            return Finding(check: "config", status: .problem,
                           detail: inputs.configProblem == nil
                               ? L("{problem}; the module refuses it and everyone falls back to the password", ["problem": "\(problem)"])
                               // TRANSLATORS: `biounlock doctor`: the config file was refused; the other checks ran without it.
                               : L("{problem}; the module refuses it and everyone falls back to the password (the other checks use the defaults)",
                                   ["problem": "\(problem)"]),
                           fix: trustFix(problem))
        }
    }

    /// What makes a file the module refused trusted again: the fix names the path the problem
    /// is about (the file, or a directory above it).
    public static func trustFix(_ problem: FileTrustProblem) -> String? {
        switch problem {
        case .wrongOwner(let path, _), .writableByOthers(let path, _):
            return "chown root:root \(path); chmod go-w \(path)"
        case .symlink(let path):
            return L("replace the symbolic link {path} with the file itself", ["path": path])
        case .notRegularFile(let path):
            return L("make {path} a regular file, or remove it (the defaults then apply)", ["path": path])
        case .tooLarge(let path):
            return L("shorten {path}", ["path": path])
        case .unreadable(let path, _):
            return L("make {path} readable by root", ["path": path])
        case .missing, .notDirectory, .notExecutable, .notCanonical, .notSetuidRoot:
            return nil
        }
    }

    // MARK: - The backend, the reader, and fprintd

    static func sensor(_ options: Options, _ probes: Probes) -> [Finding] {
        // TRANSLATORS: {sensor} is libfprint, fprintd or simulated; {reason} says why, e.g.
        // "sensor=auto: fprintd's D-Bus service is installed (PATH)".
        var findings = [Finding(check: "sensor", status: .ok,
                                detail: L("{sensor} is in use: {reason}", ["sensor": options.sensor.rawValue, "reason": options.sensorReason]), fix: nil)]
        switch probes.reader(options) {
        case .fprintd(.success(let readers)) where !readers.isEmpty:
            findings.append(Finding(check: "reader", status: .ok,
                                    detail: L("fprintd ({bus}) has 1 reader: {readers}", plural: "fprintd ({bus}) has {count} readers: {readers}",
                                              count: readers.count, ["bus": options.fprintdBus, "readers": readers.joined(separator: ", ")]), fix: nil))
        case .fprintd(.success):
            findings.append(Finding(check: "reader", status: .warning, detail: L("fprintd runs but reports no fingerprint reader; everyone falls back to the passcode or password"),
                                    fix: L("plug in a reader supported by libfprint ({command} shows what fprintd sees)", ["command": "fprintd-list USER"])))
        case .fprintd(.failure(let why)):
            findings.append(Finding(check: "reader", status: .warning,
                                    detail: L("fprintd cannot be reached ({bus}): {reason}; everyone falls back to the passcode or password",
                                              ["bus": options.fprintdBus, "reason": why.message]),
                                    fix: L("install and start fprintd ({command}), or set {setting} in {path}",
                                           ["command": "apt install fprintd", "setting": "sensor = libfprint", "path": options.configPath])))
        case .sensor(nil):
            findings.append(Finding(check: "reader", status: .ok, detail: L("{sensor} sensor available", ["sensor": options.sensor.rawValue]), fix: nil))
        case .sensor(let why?):
            findings.append(Finding(check: "reader", status: .warning, detail: "\(options.sensor.rawValue): \(why.message)", fix: nil))
        }
        if options.sensor == .libfprint && probes.fprintdRunning() {
            findings.append(Finding(check: "fprintd", status: .warning, detail: L("fprintd is running: it claims the reader while its clients verify, and biounlock then finds it busy"),
                                    fix: L("use {setting} (or auto) to share fprintd's reader and prints, or stop it if biounlock is the only fingerprint user: {command}",
                                           ["setting": "sensor = fprintd", "command": "systemctl disable --now fprintd"])))
        }
        return findings
    }

    /// Whether a process named fprintd runs (its /proc/PID/comm).
    public static func fprintdRunning() -> Bool {
        var running = false
        Directory.forEachEntry(in: "/proc") { name in
            guard name.first?.isNumber == true, let comm = FileSystem.readRegularFile("/proc/\(name)/comm", limit: 32) else { return true }
            running = comm.starts(with: Array("fprintd".utf8))
            return !running
        }
        return running
    }
}
