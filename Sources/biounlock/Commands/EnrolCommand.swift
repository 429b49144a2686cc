import BiounlockCore
import BiounlockAdmin
import BiounlockSensors
import BiounlockStore
import BiounlockFprintProtocol

/// `biounlock enrol USER [--finger F] [--device D]`: takes the enrolment touches and stores the template.
enum EnrolCommand {
    static let spec = CommandSpec(
        path: ["enrol"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--finger", value: "F", help: L("finger to enrol (default {finger})", ["finger": Finger.default.name])),
                  OptionSpec(name: "--device", value: "D", help: L("reader to use: driver, device id or driver/id (see 'biounlock sensors')")),
                  OptionSpec(name: "--timeout", value: "SECONDS", help: L("how long to wait for the touches (default 60)"), kind: .seconds(1...600)),
                  OptionSpec(name: "--replace", value: nil, help: L("enrol a finger that is already enrolled again, replacing its print")),
                  OptionSpec(name: "--face", value: nil, help: L("enrol the face (the camera face_camera names) instead of a finger"))],
        abstract: L("Enrol a finger for USER."),
        discussion: L("Touch the reader as many times as it asks (5 for the simulated sensor) with the same finger. A finger that is already enrolled is enrolled again only with --replace (on a terminal, after asking). With sensor fprintd, fprintd takes and keeps the print (as GNOME Settings and fprintd-enroll do)."),
        writes: true, aliases: ["enroll"], run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let account = try context.account(invocation.positionals[0])
        let finger = try context.finger(invocation.value("--finger") ?? Finger.default.name)
        let seconds = invocation.integer("--timeout") ?? 60
        let options = try context.optionsWithDevice()
        let store = try context.openStore()
        try context.requireOwnRecord(account, in: store)
        if invocation.has("--face") {
            return try FaceCommands.enrol(context, options: options, store: store, user: account.name, seconds: seconds)
        }
        if options.sensor == .fprintd {
            return try enrolInFprintd(context, options: options, store: store, user: account.name, finger: finger, seconds: seconds)
        }
        let previous = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(account.name) }?
            .templates.first { $0.finger == finger && $0.sensor == options.sensor }
        if previous != nil { try requireReplacing(finger, user: account.name, context: context) }

        let sensors = Sensors(logger: StderrLogger(), helperDiagnostics: .stderr)
        let reader: OpenReader
        switch sensors.openReader(options) {
        case .success(let r): reader = r
        case .failure(let why): throw CommandFailure(L("reader not available: {reason}", ["reason": "\(why)"]))
        }
        defer { reader.sensor.close() }

        Output.progress(L("Enrolling {finger} for {user} on {reader} ({device}): touch the reader once.",
                          plural: "Enrolling {finger} for {user} on {reader} ({device}): touch the reader {count} times.",
                          count: reader.info.enrolStages,
                          ["finger": finger.name, "user": account.name, "reader": reader.info.name,
                           "device": "\(reader.info.driver)/\(reader.info.device)"]))
        let result = reader.sensor.enroll(finger: finger, deadline: .after(milliseconds: Int64(seconds) * 1000)) { event in
            switch event {
            case .stage(let done, let total): Output.progress(L("touch {done}/{total}", ["done": String(done), "total": String(total)]))
            case .retry(let reason): Output.progress(Messages.retry(reason))
            case .differentFinger: Output.progress(L("That was a different finger: touch again with the same one."))
            }
        }
        switch result {
        case .failure(let why):
            throw CommandFailure(L("enrolment failed: {reason}; nothing was stored", ["reason": "\(why)"]))
        case .success(let template):
            // Replaces the same finger in one transaction.
            try storeCall(L("cannot store the template")) { () throws(StoreFailure) in try store.saveTemplate(template, user: account.name) }
        }
        if previous != nil {
            Output.line(L("Enrolled {finger} for {user}, replacing the earlier print.", ["finger": finger.name, "user": account.name]))
        } else {
            Output.line(L("Enrolled {finger} for {user}.", ["finger": finger.name, "user": account.name]))
        }
        // A reader that keeps prints of its own still holds the replaced one: remove it there too.
        if let previous, case .failed(let why) = reader.forget(previous) {
            Output.warning(L("the replaced print could not be deleted from the reader: {reason}", ["reason": "\(why)"]))
        }
        let record = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(account.name) }
        if record?.enabled != true {
            // The next step: `enable` once it would succeed (the reader is there: it just enrolled),
            // else the command that stands in its way.
            let next = EnableCheck.refusals(user: account.name, record: record, options: context.options,
                                            globals: invocation.globals.typed).first
            if let next {
                Output.line(L("Next: {command}   ({problem}; then enable)", ["command": next.fix, "problem": next.problem]))
            } else {
                Output.line(L("Turn biometric unlock on with: {command}", ["command": context.suggest("enable \(account.name)")]))
            }
        }
        return 0
    }

    /// sensor=fprintd: fprintd takes the touches and keeps the print (EnrollStart), so GNOME
    /// Settings, KDE and `fprintd-enroll` see it; the store only notes that the enrolled set
    /// changed (require_passcode=enrolment).
    static func enrolInFprintd(_ context: Context, options: Options, store: Store, user: String, finger: Finger, seconds: Int) throws -> Int32 {
        // fprintd replaces a finger it holds without a word: asked here first, as for the store's prints.
        let held = (try? Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).fprintdFingers(options, user: user).get())?
            .flatMap(\.templates).contains { $0.finger == finger } ?? false
        if held { try requireReplacing(finger, user: user, context: context) }
        let reader: FprintdSensor
        switch Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).openFprintd(options, user: user) {
        case .success(let r): reader = r
        case .failure(let why): throw CommandFailure(L("fprintd not available: {reason}", ["reason": "\(why)"]))
        }
        defer { reader.close() }
        let v: KeyValuePairs = ["finger": finger.name, "user": user, "reader": reader.device.name, "device": "fprintd/\(reader.device.shortName)"]
        if reader.device.enrolStages > 0 {
            Output.progress(L("Enrolling {finger} for {user} in fprintd on {reader} ({device}): touch the reader once.",
                              plural: "Enrolling {finger} for {user} in fprintd on {reader} ({device}): touch the reader {count} times.",
                              count: reader.device.enrolStages, v))
        } else {
            Output.progress(L("Enrolling {finger} for {user} in fprintd on {reader} ({device}): touch the reader.", v))
        }
        let result = reader.enroll(finger: finger, deadline: .after(milliseconds: Int64(seconds) * 1000)) { event in
            switch event {
            case .stage(let done, let total): Output.progress(L("touch {done}/{total}", ["done": String(done), "total": String(total)]))
            case .retry(let reason): Output.progress(Messages.retry(reason))
            case .differentFinger: Output.progress(L("That was a different finger: touch again with the same one."))
            }
        }
        if case .failure(let why) = result { throw CommandFailure(L("enrolment failed: {reason}; fprintd stored nothing", ["reason": "\(why)"])) }
        reader.close() // (the deferred close then does nothing) before fprintd is asked what it holds now
        let prints = FprintdPrintsRecord.listed(options, user: user)
        try storeCall(L("cannot record the enrolment")) { () throws(StoreFailure) in
            try store.noteEnrolmentChange(user: user, at: context.now(), fprintdPrints: prints)
        }
        if held {
            Output.line(L("Enrolled {finger} for {user} in fprintd, replacing the earlier print (GNOME Settings, KDE and fprintd-list see it too).", ["finger": finger.name, "user": user]))
        } else {
            Output.line(L("Enrolled {finger} for {user} in fprintd (GNOME Settings, KDE and fprintd-list see it too).", ["finger": finger.name, "user": user]))
        }
        let record = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.loadUser(user) }
        if record?.enabled != true {
            Output.line(L("Turn biometric unlock on with: {command}", ["command": context.suggest("enable \(user)")]))
        }
        return 0
    }

    /// Re-enrolling a finger replaces its print, which the user may still be using: only with
    /// --replace, or a yes on the terminal; otherwise refused before the reader is opened.
    static func requireReplacing(_ finger: Finger, user: String, context: Context) throws(CommandFailure) {
        if context.invocation.has("--replace") { return }
        let v: KeyValuePairs = ["finger": finger.name, "user": user]
        if Question.confirm(L("{finger} is already enrolled for {user}. Enrol it again, replacing its print?", v)) { return }
        throw CommandFailure(L("{finger} is already enrolled for {user}; nothing was changed. To enrol it again, replacing its print: {command}",
                               ["finger": finger.name, "user": user,
                                "command": context.suggest("enrol \(user) --finger \(finger.name) --replace")]))
    }
}
