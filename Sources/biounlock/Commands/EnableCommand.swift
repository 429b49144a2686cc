import BiounlockCore
import BiounlockAdmin
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockSystem
import BiounlockServiceProtocol

/// `biounlock enable|disable USER [--service S]`: the "biometric unlock" toggle.
///
/// S is a PAM service, or a group as biounlockd and the settings app take it (ManagerAPI.Scope):
/// `@sudo` and `@login` write an override for each service of the group (ServiceGroup) in one
/// store transaction, `@all` is the settings app's main switch (the toggle, every override of
/// the user removed). A group needs no pam.d file: its services are the known ones.
enum EnableCommand {
    static let serviceOption = OptionSpec(name: "--service", value: "S",
                                          help: L("only for this PAM service (e.g. sudo), or a group of them: @sudo, @login, @all"), kind: .serviceScope)
    static let serviceOptions = [
        serviceOption,
        OptionSpec(name: "--pam-dir", value: "DIR", help: L("where --service must have its file (default /etc/pam.d, then /usr/lib/pam.d)")),
        OptionSpec(name: "--force", value: nil, help: L("set --service S although no PAM service file S exists yet")),
    ]
    /// Where libpam looks for a service's file (Debian 12's libpam: /etc/pam.d, then the vendor directory).
    static let pamDirectories = ["/etc/pam.d", "/usr/lib/pam.d"]

    static let enable = CommandSpec(
        path: ["enable"], positionals: [("USER", false)], options: serviceOptions,
        abstract: L("Turn biometric unlock on for USER."),
        discussion: L("Refuses, naming the command to run, while no finger is enrolled or (policy biometrics-or-passcode) no passcode is set."),
        writes: true, run: { try run($0, enabled: true) })

    static let disable = CommandSpec(
        path: ["disable"], positionals: [("USER", false)], options: serviceOptions,
        abstract: L("Turn biometric unlock off for USER."), discussion: "",
        writes: true, run: { try run($0, enabled: false) })

    static func run(_ invocation: Invocation, enabled: Bool) throws -> Int32 {
        let context = try Context(invocation)
        let account = try context.account(invocation.positionals[0])
        let service = invocation.value("--service")
        // The parser let through only a service name or a group (OptionValueKind.serviceScope).
        let scope = service.flatMap(ManagerAPI.Scope.init(argument:)) ?? .toggle
        if case .service(let name) = scope, !invocation.has("--force") { try requireService(name, invocation: invocation) }
        if !enabled {
            // Nothing to turn off for a user biounlock has no record of: refused, and no row is
            // made (nor a store) for a name that never had one.
            let stored = try context.storeToRead().flatMap { store in
                try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(account.name) }
            }
            guard stored != nil else {
                throw CommandFailure(L("{user} has no biounlock record: biometric unlock is off for {user} already; nothing was changed",
                                       ["user": account.name]))
            }
        }
        let store = try context.openStore()
        var record: UserRecord?
        var fprintdDevices: [FprintdReader]?
        if enabled {
            try context.requireOwnRecord(account, in: store)
            record = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(account.name) }
            // Like canEvaluatePolicy before the toggle: a reader must be there (libfprint only; the
            // simulated sensor exists only while something listens on its socket).
            let selector = context.options.fprintDevice
            let sensors = Sensors(logger: StderrLogger(), helperDiagnostics: .stderr)
            var readers: Result<[ReaderInfo], SensorUnavailable>?
            var fprintdFingers: Result<[Finger], SensorUnavailable>?
            switch context.options.sensor {
            case .libfprint:
                readers = sensors.list(context.options).map { list in list.filter { selector == nil || $0.matches(selector ?? "") } }
            case .fprintd:
                // One set of prints: the fingers fprintd holds for the user (GNOME Settings, KDE,
                // fprintd-enroll or `biounlock enrol`) are the ones enable accepts.
                let devices = sensors.fprintdFingers(context.options, user: account.name)
                readers = devices.map { $0.map(\.info) }
                fprintdFingers = devices.map { list in list.flatMap(\.templates).map(\.finger) }
                fprintdDevices = try? devices.get()
            case .simulated, .auto:
                break
            }
            let refusals = EnableCheck.refusals(user: account.name, record: record, options: context.options,
                                                globals: invocation.globals.typed, readers: readers, fprintdFingers: fprintdFingers)
            if !refusals.isEmpty {
                var message = L("biometric unlock stays off for {user}:", ["user": account.name])
                for r in refusals { message += "\n  - " + r.problem + "\n    " + L("run: {command}", ["command": r.fix]) }
                throw CommandFailure(message)
            }
        }
        try storeCall(L("cannot change the setting")) { () throws(StoreFailure) in
            switch scope {
            case .toggle: try store.setEnabled(enabled, user: account.name, service: nil, at: context.now())
            case .service(let name): try store.setEnabled(enabled, user: account.name, service: name, at: context.now())
            case .group(let group): try store.setEnabled(enabled, user: account.name, services: group.services, at: context.now())
            case .everywhere: try store.setEnabledEverywhere(enabled, user: account.name, at: context.now())
            }
        }
        if let fprintdDevices {
            // The prints enable accepted are the ones the module compares fprintd's with
            // (FprintdPrints): the first set, or, when they are not the set biounlock last saw, a
            // change of the enrolled set.
            try storeCall(L("cannot change the setting")) { () throws(StoreFailure) in
                try FprintdPrintsRecord.afterListing(fprintdDevices, user: account.name, stored: record?.fprintdPrints, store: store)
            }
        }
        if enabled, context.options.face, context.options.faceAllowRGB, !(record?.faceTemplates.isEmpty ?? true) {
            Output.warning(L("face_allow_rgb=yes: a colour camera is taken, and a printed photo may pass for a face"))
        }
        // Turned off (anywhere): the Unix password kept for the boot goes too (issue 32).
        if !enabled { KeptPasswordKey.drop(user: account.name) }
        let v: KeyValuePairs = ["user": account.name, "service": service ?? ""]
        switch (enabled, service != nil) {
        case (true, false): Output.line(L("Biometric unlock on for {user}.", v))
        case (false, false): Output.line(L("Biometric unlock off for {user}.", v))
        case (true, true): Output.line(L("Biometric unlock on for {user} (service {service}).", v))
        case (false, true): Output.line(L("Biometric unlock off for {user} (service {service}).", v))
        }
        return 0
    }

    /// A --service that names no PAM service file turns biometric unlock on or off for a name
    /// no program authenticates with (`sudoo`): refused, with the closest name there is, unless
    /// --force says the service is to be installed later.
    static func requireService(_ service: String, invocation: Invocation) throws(CommandFailure) {
        let directories = invocation.value("--pam-dir").map { [$0] } ?? pamDirectories
        if directories.contains(where: { FileSystem.exists($0 + "/" + service) }) { return }
        let known = directories.flatMap(PamDirectory.serviceNames)
        let dirs = directories.joined(separator: ", ")
        if let suggestion = Suggestion.closest(to: service, among: known) {
            // TRANSLATORS: {service} is what was typed after --service, {suggestion} the PAM
            // service with the closest name, {dirs} the pam.d directories; --force is an option.
            throw CommandFailure(L("no PAM service '{service}' in {dirs}; did you mean '{suggestion}'? (--force sets it for a service that is not installed yet)",
                                   ["service": service, "dirs": dirs, "suggestion": suggestion]))
        }
        throw CommandFailure(L("no PAM service '{service}' in {dirs}; check the name (--force sets it for a service that is not installed yet)",
                               ["service": service, "dirs": dirs]))
    }
}
