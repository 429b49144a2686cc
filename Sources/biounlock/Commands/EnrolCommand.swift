import BiounlockCore
import BiounlockSensors
import BiounlockStore
import BiounlockFprintProtocol

/// `biounlock enrol USER [--finger F] [--device D]`: takes the enrolment touches and stores the template.
enum EnrolCommand {
    static let spec = CommandSpec(
        path: ["enrol"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--finger", value: "F", help: "finger to enrol (default \(Finger.default.name))"),
                  OptionSpec(name: "--device", value: "D", help: "reader to use: driver, device id or driver/id (see 'biounlock sensors')"),
                  OptionSpec(name: "--timeout", value: "SECONDS", help: "how long to wait for the touches (default 60)")],
        abstract: "Enrol a finger for USER.",
        discussion: "Touch the reader as many times as it asks (5 for the simulated sensor) with the same finger. Re-enrolling a finger replaces it. With sensor fprintd, fprintd takes and keeps the print (as GNOME Settings and fprintd-enroll do).",
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let account = try context.account(invocation.positionals[0])
        let finger = try context.finger(invocation.value("--finger") ?? Finger.default.name)
        var seconds = 60
        if let text = invocation.value("--timeout") {
            guard let n = Int(text), (1...600).contains(n) else { throw UsageError("--timeout takes 1-600 seconds", command: spec) }
            seconds = n
        }
        let options = try context.optionsWithDevice()
        let store = try context.openStore()
        try context.requireOwnRecord(account, in: store)
        if options.sensor == .fprintd {
            return try enrolInFprintd(context, options: options, store: store, user: account.name, finger: finger, seconds: seconds)
        }
        let previous = try storeCall("cannot read the store") { () throws(StoreFailure) in try store.loadUser(account.name) }?
            .templates.first { $0.finger == finger && $0.sensor == options.sensor }

        let sensors = Sensors(logger: StderrLogger(), helperDiagnostics: .stderr)
        let reader: OpenReader
        switch sensors.openReader(options) {
        case .success(let r): reader = r
        case .failure(let why): throw CommandFailure("reader not available: \(why)")
        }
        defer { reader.sensor.close() }

        Output.progress("Enrolling \(finger.name) for \(account.name) on \(reader.info.name) (\(reader.info.driver)/\(reader.info.device)): touch the reader \(reader.info.enrolStages) times.")
        let result = reader.sensor.enroll(finger: finger, deadline: .after(milliseconds: Int64(seconds) * 1000)) { event in
            switch event {
            case .stage(let done, let total): Output.progress("touch \(done)/\(total)")
            case .retry(let reason): Output.progress(Messages.retry(reason))
            case .differentFinger: Output.progress("That was a different finger: touch again with the same one.")
            }
        }
        switch result {
        case .failure(let why):
            throw CommandFailure("enrolment failed: \(why); nothing was stored")
        case .success(let template):
            // Replaces the same finger in one transaction.
            try storeCall("cannot store the template") { () throws(StoreFailure) in try store.saveTemplate(template, user: account.name) }
        }
        Output.line("Enrolled \(finger.name) for \(account.name).")
        // A reader that keeps prints of its own still holds the replaced one: remove it there too.
        if let previous, case .failed(let why) = reader.forget(previous) {
            Output.error("warning: the replaced print could not be deleted from the reader: \(why)")
        }
        let record = try storeCall("cannot read the store") { () throws(StoreFailure) in try store.loadUser(account.name) }
        if record?.enabled != true {
            // The next step: `enable` once it would succeed (the reader is there: it just enrolled),
            // else the command that stands in its way.
            let next = EnableCheck.refusals(user: account.name, record: record, options: context.options,
                                            globals: invocation.globals.typed).first
            if let next {
                Output.line("Next: \(next.fix)   (\(next.problem); then enable)")
            } else {
                Output.line("Turn biometric unlock on with: \(context.suggest("enable \(account.name)"))")
            }
        }
        return 0
    }

    /// sensor=fprintd: fprintd takes the touches and keeps the print (EnrollStart), so GNOME
    /// Settings, KDE and `fprintd-enroll` see it; the store only notes that the enrolled set
    /// changed (require_passcode=enrolment).
    static func enrolInFprintd(_ context: Context, options: Options, store: Store, user: String, finger: Finger, seconds: Int) throws -> Int32 {
        let reader: FprintdSensor
        switch Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).openFprintd(options, user: user) {
        case .success(let r): reader = r
        case .failure(let why): throw CommandFailure("fprintd not available: \(why)")
        }
        defer { reader.close() }
        let stages = reader.device.enrolStages > 0 ? " \(reader.device.enrolStages) times" : ""
        Output.progress("Enrolling \(finger.name) for \(user) in fprintd on \(reader.device.name) (fprintd/\(reader.device.shortName)): touch the reader\(stages).")
        let result = reader.enroll(finger: finger, deadline: .after(milliseconds: Int64(seconds) * 1000)) { event in
            switch event {
            case .stage(let done, let total): Output.progress("touch \(done)/\(total)")
            case .retry(let reason): Output.progress(Messages.retry(reason))
            case .differentFinger: Output.progress("That was a different finger: touch again with the same one.")
            }
        }
        if case .failure(let why) = result { throw CommandFailure("enrolment failed: \(why); fprintd stored nothing") }
        try storeCall("cannot record the enrolment") { () throws(StoreFailure) in try store.noteEnrolmentChange(user: user, at: context.now()) }
        Output.line("Enrolled \(finger.name) for \(user) in fprintd (GNOME Settings, KDE and fprintd-list see it too).")
        let record = try storeCall("cannot read the store") { () throws(StoreFailure) in try store.loadUser(user) }
        if record?.enabled != true {
            Output.line("Turn biometric unlock on with: \(context.suggest("enable \(user)"))")
        }
        return 0
    }
}
