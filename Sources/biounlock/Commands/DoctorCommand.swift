import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockSensors
import BiounlockStore

/// `biounlock doctor [--pam-dir DIR] [--module PATH]`: checks the installation and reports each
/// problem with its fix. Exit 1 when anything is wrong (warnings alone exit 0).
enum DoctorCommand {
    static let spec = CommandSpec(
        path: ["doctor"], positionals: [],
        options: [OptionSpec(name: "--pam-dir", value: "DIR", help: L("PAM service files to check (default /etc/pam.d)")),
                  OptionSpec(name: "--module", value: "PATH", help: L("the installed module (default: searched in the security dirs)"))],
        abstract: L("Check the installation and say how to fix each problem."),
        discussion: L("Module file, the setuid checker for screen lockers, every pam.d service using the module (control value, order, fallback, pam_fprintd beside it, greeter fingerprint stacks), store and config permissions, which sensor backend is in use and why, the reader, fprintd."),
        writes: false, reportsJSON: true, run: run)

    static let securityDirs = ["/lib/x86_64-linux-gnu/security", "/usr/lib/x86_64-linux-gnu/security", "/lib/security", "/usr/lib/security"]

    struct Check {
        enum Status: String { case ok, warning, problem }
        let name: String
        let status: Status
        let detail: String
        let fix: String?
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        // An unsafe config file is one problem among the others: every other check still runs,
        // with the defaults and the command line's options.
        let context = try Context(invocation, toleratingUntrustedConfig: true)
        let pamDir = invocation.value("--pam-dir") ?? "/etc/pam.d"
        var checks: [Check] = []

        // The module file.
        let modulePath = invocation.value("--module") ?? securityDirs.map { $0 + "/pam_biounlock.so" }.first { FileSystem.exists($0) }
        if let modulePath {
            checks.append(moduleCheck(modulePath))
        } else {
            checks.append(Check(name: "module", status: .problem,
                                detail: L("pam_biounlock.so is not in {dirs}", ["dirs": securityDirs.joined(separator: ", ")]),
                                fix: L("install the package (apt install ./dist/biounlock_VERSION_amd64.deb) or run scripts/install")))
        }

        // The checker that screen lockers running as the user need.
        checks.append(checkerCheck(context.options.checkHelper))

        // The SQLite linked into the module, against the system's.
        checks.append(sqliteCheck())

        // The face, when it is on (FaceCommands.swift).
        checks += faceChecks(context.options)

        // The PAM services.
        let files = readPamDir(pamDir)
        if files.isEmpty {
            checks.append(Check(name: "pam.d", status: .warning, detail: L("no readable service files in {dir}", ["dir": pamDir]), fix: nil))
        } else {
            let findings = PamStackLint.lint(files: files)
            let users = files.filter { $0.value.contains("pam_biounlock.so") }.keys.sorted()
            if users.isEmpty {
                // The package's profile first; a hand edit only for a service of its own.
                checks.append(Check(name: "pam.d", status: .warning, detail: L("no service in {dir} uses pam_biounlock.so yet", ["dir": pamDir]),
                                    fix: L("run {command} (every service that includes common-auth); or, for one service only, add '{line}' before its '@include common-auth' (see pam.d/sudo)",
                                           ["command": PamStackLint.enableCommand, "line": "auth \(PamStackLint.recommendedControl) pam_biounlock.so"])))
            } else if findings.isEmpty {
                checks.append(Check(name: "pam.d", status: .ok,
                                    detail: L("used by {services}; every stack falls back to the password", ["services": users.joined(separator: ", ")]), fix: nil))
            }
            for f in findings {
                checks.append(Check(name: "pam.d/\(f.file):\(f.line)", status: f.severity == .problem ? .problem : .warning, detail: f.message, fix: f.fix))
            }
            for (file, problem) in PamDirectory.trustProblems(pamDir, names: files.keys.sorted()) {
                let path = file.map { pamDir + "/" + $0 } ?? pamDir
                if let file {
                    checks.append(Check(name: "pam.d/\(file)", status: .problem,
                                        detail: L("{problem}: whoever can write it decides how the services that use it authenticate", ["problem": "\(problem)"]),
                                        fix: "chown root:root \(path); chmod 0644 \(path)"))
                } else {
                    checks.append(Check(name: "pam.d", status: .problem,
                                        detail: L("{problem}: whoever can write it decides how every service authenticates", ["problem": "\(problem)"]),
                                        fix: "chown root:root \(path); chmod 0755 \(path)"))
                }
            }
            for (name, text) in files.sorted(by: { $0.key < $1.key }) {
                for path in text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) where path.hasPrefix("/") && path.hasSuffix("pam_biounlock.so") {
                    if !FileSystem.exists(String(path)) {
                        checks.append(Check(name: "pam.d/\(name)", status: .problem, detail: L("{path} does not exist", ["path": String(path)]),
                                            fix: L("fix the path or install the module there")))
                    }
                }
            }
        }

        // The store and the config.
        let visibility = context.storeVisibility()
        if case .missing = visibility {
            checks.append(Check(name: "store", status: .warning,
                                detail: L("{path} does not exist yet (created by the first enrol or passcode set)", ["path": context.options.storePath]), fix: nil))
        } else if case .hidden(let failure) = visibility {
            // Not "does not exist yet": a user who is not root cannot see into its directory.
            checks.append(Check(name: "store", status: .problem, detail: failure.message,
                                fix: ProcessIdentity.effectiveUserID == 0 ? nil : "sudo " + context.suggest("doctor")))
        } else if let problem = Store.trustProblem(path: context.options.storePath) {
            checks.append(Check(name: "store", status: .problem,
                                detail: L("{problem}; the module refuses it and everyone falls back to the password", ["problem": "\(problem)"]),
                                fix: L("chown root:root the file and its directory; chmod 0700 the directory, 0600 the file")))
        } else {
            checks.append(Check(name: "store", status: .ok, detail: L("{path}: root-owned, not writable by others", ["path": context.options.storePath]), fix: nil))
            checks += recordChecks(context, globals: invocation.globals.typed)
        }
        switch context.configProblem ?? TrustedFiles.checkFile(context.options.configPath) {
        case nil:
            checks.append(Check(name: "config", status: .ok, detail: L("{path}: root-owned, not writable by others", ["path": context.options.configPath]), fix: nil))
        case .missing?:
            checks.append(Check(name: "config", status: .ok, detail: L("no {path}; defaults apply", ["path": context.options.configPath]), fix: nil))
        case let problem?:
            checks.append(Check(name: "config", status: .problem,
                                detail: context.configProblem == nil
                                    ? L("{problem}; the module refuses it and everyone falls back to the password", ["problem": "\(problem)"])
                                    // TRANSLATORS: `biounlock doctor`: the config file was refused; the other checks ran without it.
                                    : L("{problem}; the module refuses it and everyone falls back to the password (the other checks use the defaults)",
                                        ["problem": "\(problem)"]),
                                fix: trustFix(problem)))
        }

        // The backend, the reader, and fprintd.
        let options = context.options
        // TRANSLATORS: {sensor} is libfprint, fprintd or simulated; {reason} says why, e.g.
        // "sensor=auto: fprintd's D-Bus service is installed (PATH)".
        checks.append(Check(name: "sensor", status: .ok,
                            detail: L("{sensor} is in use: {reason}", ["sensor": options.sensor.rawValue, "reason": options.sensorReason]), fix: nil))
        if options.sensor == .fprintd {
            switch Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).fprintdFingers(options, user: "") {
            case .success(let devices) where !devices.isEmpty:
                let names = devices.map { "fprintd/\($0.shortName) \($0.name)" }.joined(separator: ", ")
                checks.append(Check(name: "reader", status: .ok,
                                    detail: L("fprintd ({bus}) has 1 reader: {readers}", plural: "fprintd ({bus}) has {count} readers: {readers}",
                                              count: devices.count, ["bus": options.fprintdBus, "readers": names]), fix: nil))
            case .success:
                checks.append(Check(name: "reader", status: .warning, detail: L("fprintd runs but reports no fingerprint reader; everyone falls back to the passcode or password"),
                                    fix: L("plug in a reader supported by libfprint ({command} shows what fprintd sees)", ["command": "fprintd-list USER"])))
            case .failure(let why):
                checks.append(Check(name: "reader", status: .warning,
                                    detail: L("fprintd cannot be reached ({bus}): {reason}; everyone falls back to the passcode or password",
                                              ["bus": options.fprintdBus, "reason": "\(why)"]),
                                    fix: L("install and start fprintd ({command}), or set {setting} in {path}",
                                           ["command": "apt install fprintd", "setting": "sensor = libfprint", "path": options.configPath])))
            }
        } else {
            switch Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).open(options) {
            case .success(let sensor):
                sensor.close()
                checks.append(Check(name: "reader", status: .ok, detail: L("{sensor} sensor available", ["sensor": options.sensor.rawValue]), fix: nil))
            case .failure(let why):
                checks.append(Check(name: "reader", status: .warning, detail: "\(options.sensor.rawValue): \(why)", fix: nil))
            }
            if options.sensor == .libfprint && fprintdRunning() {
                checks.append(Check(name: "fprintd", status: .warning, detail: L("fprintd is running: it claims the reader while its clients verify, and biounlock then finds it busy"),
                                    fix: L("use {setting} (or auto) to share fprintd's reader and prints, or stop it if biounlock is the only fingerprint user: {command}",
                                           ["setting": "sensor = fprintd", "command": "systemctl disable --now fprintd"])))
            }
        }

        if invocation.globals.json {
            Output.line(JSON.object([
                ("ok", .bool(!checks.contains { $0.status == .problem })),
                ("checks", .array(checks.map { c in
                    .object([("check", .string(c.name)), ("status", .string(c.status.rawValue)), ("detail", .string(c.detail)),
                             ("fix", c.fix.map { .string($0) } ?? .null)])
                })),
            ]).serialized())
        } else {
            // TRANSLATORS: doctor's marks in front of each check; keep them short (PROBLEM is
            // upper case to stand out).
            let marks: [Check.Status: String] = [.ok: L("ok"), .warning: L("warning"), .problem: L("PROBLEM")]
            let width = marks.values.map(\.displayWidth).max() ?? 7
            for c in checks {
                let mark = (marks[c.status] ?? c.status.rawValue).padding(to: width + 2)
                Output.line("\(mark)\(c.name): \(c.detail)")
                if let fix = c.fix, c.status != .ok { Output.line(String(repeating: " ", count: width + 2) + L("fix: {command}", ["command": fix])) }
            }
        }
        return checks.contains { $0.status == .problem } ? 1 : 0
    }

    /// What makes a file the module refused trusted again: the fix names the path the problem
    /// is about (the file, or a directory above it).
    static func trustFix(_ problem: FileTrustProblem) -> String? {
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

    /// Rows that belong to another account than the one that has the name now (AccountBinding).
    static func recordChecks(_ context: Context, globals: [String]) -> [Check] {
        let records: [UserRecord]
        do {
            let store = try context.openStore()
            records = try storeCall(L("cannot read the store")) { () throws(StoreFailure) -> [UserRecord] in
                try store.allUsers()
            }
        } catch {
            return [Check(name: "store", status: .problem, detail: error.message, fix: nil)]
        }
        return records.compactMap { r in
            let binding = AccountBinding.of(r, account: Accounts.lookup(r.name))
            guard !binding.isBound else { return nil }
            return Check(name: "store/\(sanitizedForLog(r.name))", status: .warning,
                         detail: L("{problem}; the module ignores the record", ["problem": binding.localizedProblem(user: r.name)]),
                         fix: AccountBinding.fix(user: r.name, globals: globals))
        }
    }

    static func moduleCheck(_ path: String) -> Check {
        guard let st = try? FileStatus.of(path, followingSymbolicLinks: false) else {
            return Check(name: "module", status: .problem, detail: L("{path} does not exist", ["path": path]), fix: L("install build/pam_biounlock.so there"))
        }
        if st.owner != 0 || st.isWritableByGroupOrOthers {
            return Check(name: "module", status: .problem, detail: L("{path} is not root-owned or is writable by others", ["path": path]),
                         fix: "chown root:root \(path); chmod 0644 \(path)")
        }
        // dlopen in a child process, so a broken module cannot take this one down.
        guard SharedObject.loadsInChildProcess(path, exporting: ["pam_sm_authenticate", "pam_sm_setcred"]) else {
            return Check(name: "module", status: .problem,
                         detail: L("{path} does not load (or lacks pam_sm_authenticate/pam_sm_setcred): PAM would report 'module unknown'", ["path": path]),
                         fix: L("reinstall it from a build for this system"))
        }
        return Check(name: "module", status: .ok, detail: L("{path} loads and exports the PAM entry points", ["path": path]), fix: nil)
    }

    /// pam_biounlock.so carries the SQLite of the build (libsqlite3.a, Package.swift): a fix in
    /// the system's libsqlite3 reaches the module only with a rebuilt biounlock, so a system
    /// SQLite other than the module's is said. Installed from the package, the versions compared
    /// are the packages' (its Built-Using against the installed libsqlite3-0, from dpkg-query):
    /// a Debian security update keeps SQLite's own version number. Otherwise (a source
    /// install) SQLite's versions: the one this build compiled against, the one it runs with. A
    /// warning, not a problem: the module reads only a root-owned store it checked, with fixed
    /// statements (docs/SECURITY.md, "SQLite inside the module").
    static func sqliteCheck() -> Check {
        func dpkgQuery(_ arguments: [String]) -> String? {
            ChildProcess.output(of: "/usr/bin/dpkg-query", arguments: arguments, environment: ["LC_ALL=C"])
                .map { String(decoding: $0, as: UTF8.self) }
        }
        if let biounlock = dpkgQuery(InstalledPackages.queries.biounlock), let libsqlite = dpkgQuery(InstalledPackages.queries.libsqlite),
           let packages = InstalledPackages.sqlite(biounlock: biounlock, libsqlite: libsqlite) {
            return sqliteCheck(built: packages.built, running: packages.installed)
        }
        return sqliteCheck(built: SQLiteLibrary.built, running: SQLiteLibrary.running)
    }

    static func sqliteCheck(built: String, running: String) -> Check {
        guard built != running else {
            // TRANSLATORS: `biounlock doctor`; {version} is SQLite's version, e.g. 3.40.1.
            return Check(name: "sqlite", status: .ok, detail: L("pam_biounlock.so has SQLite {version} linked in, the version this system has", ["version": built]), fix: nil)
        }
        // TRANSLATORS: `biounlock doctor`; {built} and {running} are SQLite versions, e.g. 3.40.1.
        return Check(name: "sqlite", status: .warning,
                     detail: L("pam_biounlock.so has SQLite {built} linked in and this system has {running}: a SQLite fix reaches the module only when biounlock is rebuilt",
                               ["built": built, "running": running]),
                     fix: L("rebuild and reinstall biounlock (scripts/package), or install the distribution's rebuilt package"))
    }

    /// biounlock-check: what the module checks before it starts it (TrustedFiles.checkSetuidHelper):
    /// setuid root, executable by others, root-owned and not writable by others all the way up.
    static func checkerCheck(_ path: String) -> Check {
        switch TrustedFiles.checkSetuidHelper(path) {
        case nil:
            return Check(name: "checker", status: .ok,
                         detail: L("{path}: setuid root, root-owned all the way up; screen lockers that run as the user can use biounlock", ["path": path]), fix: nil)
        case .missing?:
            // TRANSLATORS: `biounlock doctor`; the checker is biounlock-check, which screen lockers
            // that run PAM as the user (not as root) need to reach biounlock's root-only store.
            return Check(name: "checker", status: .warning,
                         detail: L("{path} does not exist: screen lockers that run as the user (i3lock, swaylock, xscreensaver) fall back to the password", ["path": path]),
                         fix: L("install the package (or scripts/install), or point check_helper at the installed biounlock-check"))
        case let problem?:
            return Check(name: "checker", status: .problem,
                         detail: L("{problem}: the module refuses it and screen lockers that run as the user (i3lock, swaylock, xscreensaver) fall back to the password",
                                   ["problem": "\(problem)"]),
                         fix: L("{command}; every directory above it root-owned and not writable by group or others",
                                ["command": "chown root:root \(path); chmod 4755 \(path)"]))
        }
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

    static func fprintdRunning() -> Bool {
        var running = false
        Directory.forEachEntry(in: "/proc") { name in
            guard name.first?.isNumber == true, let comm = FileSystem.readRegularFile("/proc/\(name)/comm", limit: 32) else { return true }
            running = comm.starts(with: Array("fprintd".utf8))
            return !running
        }
        return running
    }
}
