import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockSensors
import BiounlockStore

/// `biounlock doctor [--pam-dir DIR] [--module PATH]`: checks the installation and reports each
/// problem with its fix. Exit 1 when anything is wrong (warnings alone exit 0). The checks are
/// BiounlockAdmin's `Doctor` table; this file fills its probes from the store and sensors layers
/// and prints the findings as text or JSON.
enum DoctorCommand {
    static let spec = CommandSpec(
        path: ["doctor"], positionals: [],
        options: [OptionSpec(name: "--pam-dir", value: "DIR", help: L("PAM service files to check (default /etc/pam.d)")),
                  OptionSpec(name: "--module", value: "PATH", help: L("the installed module (default: searched in the security dirs)"))],
        abstract: L("Check the installation and say how to fix each problem."),
        discussion: L("Module file, the setuid checker for screen lockers, every pam.d service using the module (control value, order, fallback, pam_fprintd beside it, greeter fingerprint stacks), store and config permissions, which sensor backend is in use and why, the reader, fprintd."),
        writes: false, reportsJSON: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        // An unsafe config file is one problem among the others: every other check still runs,
        // with the defaults and the command line's options.
        let context = try Context(invocation, toleratingUntrustedConfig: true)
        let inputs = Doctor.Inputs(options: context.options, pamDir: invocation.value("--pam-dir") ?? "/etc/pam.d",
                                   module: invocation.value("--module"), configProblem: context.configProblem,
                                   globals: invocation.globals.typed)
        let findings = Doctor.run(inputs, probes(context))
        if invocation.globals.json {
            Output.line(JSON.object([
                ("ok", .bool(Doctor.exitStatus(findings) == 0)),
                ("checks", .array(findings.map { f in
                    .object([("check", .string(f.check)), ("status", .string(f.status.rawValue)), ("detail", .string(f.detail)),
                             ("fix", f.fix.map { .string($0) } ?? .null)])
                })),
            ]).serialized())
        } else {
            // TRANSLATORS: doctor's marks in front of each check; keep them short (PROBLEM is
            // upper case to stand out).
            let marks: [Doctor.Finding.Status: String] = [.ok: L("ok"), .warning: L("warning"), .problem: L("PROBLEM")]
            let width = marks.values.map(\.displayWidth).max() ?? 7
            for f in findings {
                let mark = (marks[f.status] ?? f.status.rawValue).padding(to: width + 2)
                Output.line("\(mark)\(f.check): \(f.detail)")
                if let fix = f.fix, f.status != .ok { Output.line(String(repeating: " ", count: width + 2) + L("fix: {command}", ["command": fix])) }
            }
        }
        return Doctor.exitStatus(findings)
    }

    /// What the admin library does not link: the store (BiounlockStore), the readers
    /// (BiounlockSensors), SQLite's versions (dpkg-query, the linked library).
    static func probes(_ context: Context) -> Doctor.Probes {
        Doctor.Probes(
            store: { _ in
                switch context.storeVisibility() {
                case .missing: return .missing
                case .hidden(let failure):
                    return .hidden(failure.message, fix: ProcessIdentity.effectiveUserID == 0 ? nil : "sudo " + context.suggest("doctor"))
                case .present: return .present
                }
            },
            storeTrust: { Store.trustProblem(path: $0) },
            records: { _ in
                do throws(CommandFailure) {
                    let store = try context.openStore()
                    return .success(try storeCall(L("cannot read the store")) { () throws(StoreFailure) -> [UserRecord] in try store.allUsers() })
                } catch {
                    return .failure(Doctor.Failure(error.message))
                }
            },
            reader: { options in
                let sensors = Sensors(logger: StderrLogger(), helperDiagnostics: .stderr)
                if options.sensor == .fprintd {
                    return .fprintd(sensors.fprintdFingers(options, user: "")
                        .map { $0.map { "fprintd/\($0.shortName) \($0.name)" } }
                        .mapError { Doctor.Failure("\($0)") })
                }
                switch sensors.open(options) {
                case .success(let sensor):
                    sensor.close()
                    return .sensor(nil)
                case .failure(let why):
                    return .sensor(Doctor.Failure("\(why)"))
                }
            },
            sqlite: sqliteVersions)
    }

    /// Installed from the package, the packages' versions (its Built-Using against the installed
    /// libsqlite3-0, from dpkg-query): a Debian security update keeps SQLite's own version
    /// number. Otherwise (a source install) SQLite's: the one this build compiled against, the
    /// one it runs with.
    static func sqliteVersions() -> (built: String, running: String) {
        func dpkgQuery(_ arguments: [String]) -> String? {
            ChildProcess.output(of: "/usr/bin/dpkg-query", arguments: arguments, environment: ["LC_ALL=C"])
                .map { String(decoding: $0, as: UTF8.self) }
        }
        if let biounlock = dpkgQuery(InstalledPackages.queries.biounlock), let libsqlite = dpkgQuery(InstalledPackages.queries.libsqlite),
           let packages = InstalledPackages.sqlite(biounlock: biounlock, libsqlite: libsqlite) {
            return (packages.built, packages.installed)
        }
        return (SQLiteLibrary.built, SQLiteLibrary.running)
    }
}
