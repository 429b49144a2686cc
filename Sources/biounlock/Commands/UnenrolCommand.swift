import BiounlockCore
import BiounlockSensors
import BiounlockStore
import BiounlockFprintProtocol

/// `biounlock unenrol USER (--finger F | --all)`: removes enrolled fingers from the store and,
/// on readers that keep prints of their own, from the reader.
enum UnenrolCommand {
    static let spec = CommandSpec(
        path: ["unenrol"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--finger", value: "F", help: L("the finger to remove")),
                  OptionSpec(name: "--all", value: nil, help: L("remove every enrolled finger")),
                  OptionSpec(name: "--face", value: nil, help: L("remove the enrolled face")),
                  OptionSpec(name: "--device", value: "D", help: L("reader holding on-reader prints: driver, device id or driver/id"))],
        abstract: L("Remove an enrolled finger (or all) for USER."),
        discussion: L("Readers that store prints themselves (match-on-chip) also have them deleted; when that reader is absent the print is still removed from the store, which is what grants access. With sensor fprintd the prints are deleted from fprintd."),
        writes: true, aliases: ["unenroll"], run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let account = try context.account(invocation.positionals[0])
        if invocation.has("--face") {
            guard !invocation.has("--all"), invocation.value("--finger") == nil else {
                throw UsageError(L("--face removes the face only: name fingers in another call"), command: spec)
            }
            return try FaceCommands.unenrol(store: try context.openStore(), user: account.name)
        }
        let all = invocation.has("--all")
        let fingerName = invocation.value("--finger")
        guard all != (fingerName != nil) else {
            throw UsageError(L("name one finger with --finger F, or use --all"), command: spec)
        }
        let finger = try fingerName.map(context.finger)
        let options = try context.optionsWithDevice()
        let store = try context.openStore()
        // Issue 32: removing fingers drops the Unix password kept for the boot (first: even an
        // unenrol that fails half-way leaves no kept password behind; the next login takes it).
        KeptPasswordKey.drop(user: account.name)
        if options.sensor == .fprintd {
            return try unenrolInFprintd(context, options: options, store: store, user: account.name, finger: finger)
        }
        let record = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(account.name) }
        let doomed = (record?.templates ?? []).filter { finger == nil || $0.finger == finger }
        guard !doomed.isEmpty else {
            if let finger { throw CommandFailure(L("{finger} is not enrolled for {user}", ["finger": finger.name, "user": account.name])) }
            throw CommandFailure(L("no finger is enrolled for {user}", ["user": account.name]))
        }

        // The reader first (while the prints are still known), then the store, which is what
        // grants access: a reader that cannot be reached never keeps a finger in the store.
        for (template, outcome) in Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).deleteFromReader(doomed, options: options) {
            switch outcome {
            case .deleted(let reader):
                Output.line(L("Deleted {finger} from the reader {device}.", ["finger": template.finger.name, "device": "\(reader.driver)/\(reader.device)"]))
            case .notKeptOnReader: break
            case .failed(let why):
                Output.warning(L("{finger} could not be deleted from its reader: {reason}", ["finger": template.finger.name, "reason": "\(why)"]))
            }
        }
        let removed = try storeCall(L("cannot remove the template")) { () throws(StoreFailure) in try store.deleteTemplates(user: account.name, finger: finger) }
        if let finger {
            Output.line(L("Removed {finger} for {user} (1 template).", plural: "Removed {finger} for {user} ({count} templates).", count: removed,
                          ["finger": finger.name, "user": account.name]))
        } else {
            Output.line(L("Removed all fingers for {user} (1 template).", plural: "Removed all fingers for {user} ({count} templates).", count: removed,
                          ["user": account.name]))
        }
        let after = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(account.name) }
        if let after, after.enabled, after.templates.isEmpty {
            Output.line(L("No finger is left: the module now falls back at once. Turn biometric unlock off with: {command}",
                          ["command": context.suggest("disable \(account.name)")]))
        }
        return 0
    }

    /// sensor=fprintd: the prints are fprintd's; they are deleted there (GNOME Settings, KDE and
    /// fprintd-list stop showing them), and the store notes that the enrolled set changed.
    static func unenrolInFprintd(_ context: Context, options: Options, store: Store, user: String, finger: Finger?) throws -> Int32 {
        let sensors = Sensors(logger: StderrLogger(), helperDiagnostics: .stderr)
        let devices: [FprintdReader]
        switch sensors.fprintdFingers(options, user: user) {
        case .success(let d): devices = d
        case .failure(let why): throw CommandFailure(L("fprintd not available: {reason}", ["reason": "\(why)"]))
        }
        let held = devices.flatMap(\.templates).map(\.finger)
        guard finger.map(held.contains) ?? !held.isEmpty else {
            if let finger { throw CommandFailure(L("{finger} is not enrolled in fprintd for {user}", ["finger": finger.name, "user": user])) }
            throw CommandFailure(L("no finger is enrolled in fprintd for {user}", ["user": user]))
        }
        // Each device that holds the finger (or any finger, for --all), claimed by its path.
        for device in devices where finger.map({ device.fingers.contains(UInt8($0.rawValue)) }) ?? !device.fingers.isEmpty {
            let reader: FprintdSensor
            switch sensors.openFprintd(options.with(key: "fprint_device", value: device.path) ?? options, user: user) {
            case .success(let r): reader = r
            case .failure(let why): throw CommandFailure(L("fprintd not available: {reason}", ["reason": "\(why)"]))
            }
            defer { reader.close() }
            if case .failure(let why) = reader.delete(finger) { throw CommandFailure(L("fprintd could not delete it: {reason}", ["reason": "\(why)"])) }
        }
        let prints = FprintdPrintsRecord.listed(options, user: user)
        try storeCall(L("cannot record the change")) { () throws(StoreFailure) in
            try store.noteEnrolmentChange(user: user, at: context.now(), fprintdPrints: prints)
        }
        if let finger {
            Output.line(L("Removed {finger} for {user} from fprintd.", ["finger": finger.name, "user": user]))
        } else {
            Output.line(L("Removed all fingers for {user} from fprintd.", ["user": user]))
        }
        let after = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(user) }
        if let after, after.enabled, finger == nil || held == [finger].compactMap({ $0 }) {
            Output.line(L("No finger is left in fprintd: the module now falls back at once. Turn biometric unlock off with: {command}",
                          ["command": context.suggest("disable \(user)")]))
        }
        return 0
    }
}
