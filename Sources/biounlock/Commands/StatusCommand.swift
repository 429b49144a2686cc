import BiounlockCore
import BiounlockAdmin
import BiounlockStore
import BiounlockSensors

/// `biounlock status [USER] [--json]`: what the store holds, never a hash or a template.
enum StatusCommand {
    static let spec = CommandSpec(
        path: ["status"], positionals: [("USER", true)], options: [],
        abstract: L("Show biometric unlock settings, fingers, passcode kind and counters."),
        discussion: L("With --json the output has the shape documented in docs/GUIDE.md."),
        writes: false, reportsJSON: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals.first
        var records: [UserRecord] = []
        /// Names shown without a row in the store (nothing stored, so nothing of another account's).
        var placeholders = Set<String>()
        /// A name without a row: shown as "off" when it is an account (that is the truth: nothing
        /// is set up), refused when it is not one (no full record for a name nobody has).
        func placeholder(_ name: String) throws(CommandFailure) {
            _ = try context.account(name)
            records.append(UserRecord(name: name))
            placeholders.insert(name)
        }
        if let store = try context.storeToRead() {
            if let name {
                if let r = try storeCall(L("cannot read the store"), { () throws(StoreFailure) in try store.loadUser(name) }) {
                    records.append(r)
                } else {
                    try placeholder(name)
                }
            } else {
                // One snapshot of every user (Store.allUsers).
                records = try storeCall(L("cannot read the store")) { () throws(StoreFailure) in try store.allUsers() }
            }
        } else if let name {
            try placeholder(name)
        }
        let now = StatusReport.Now(options: context.options, time: context.now(), bootID: SessionProbe.bootID(),
                                   globals: invocation.globals.typed) { record in
            placeholders.contains(record.name) ? .bound : AccountBinding.of(record, account: Accounts.lookup(record.name))
        }
        var fprintd = FprintdCheck.scan()
        fprintd.sensor = context.options.sensor
        if context.options.sensor == .fprintd {
            fprintd.error = FprintdFingers.add(to: &records, options: context.options)
        }
        let check = Sensors.problem(with:)
        if invocation.globals.json {
            Output.line(StatusReport.json(store: context.options.storePath, users: records, now: now, fprintd: fprintd, check: check).serialized())
        } else {
            if records.isEmpty {
                Output.line(L("No users have biometric unlock set up (store: {store}).", ["store": context.options.storePath]))
            } else {
                Output.line(records.map { StatusReport.text(user: $0, now: now, check: check) }.joined(separator: "\n\n"))
            }
            for note in fprintd.notes { Output.line(note) }
        }
        return 0
    }
}
