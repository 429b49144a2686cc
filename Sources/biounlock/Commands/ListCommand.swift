import BiounlockCore
import BiounlockAdmin
import BiounlockStore
import BiounlockSensors

/// `biounlock list [--json]`: every user the store knows, one line each (JSON: as `status`).
enum ListCommand {
    static let spec = CommandSpec(
        path: ["list"], positionals: [], options: [],
        abstract: L("List users with biometric unlock settings, one line each."),
        discussion: L("With --json the output is the same document as 'status --json'."),
        writes: false, reportsJSON: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        var records: [UserRecord] = []
        if let store = try context.storeToRead() {
            records = try storeCall(L("cannot read the store")) { () throws(StoreFailure) -> [UserRecord] in
                try store.allUsers()
            }
        }
        let now = StatusReport.Now(options: context.options, time: context.now(), bootID: SessionProbe.bootID(), globals: invocation.globals.typed)
        if context.options.sensor == .fprintd, let error = FprintdFingers.add(to: &records, options: context.options) {
            Output.warning(L("fprintd could not be asked for the enrolled fingers: {reason}", ["reason": error]))
        }
        if invocation.globals.json {
            Output.line(StatusReport.json(store: context.options.storePath, users: records, now: now).serialized())
        } else if records.isEmpty {
            Output.line(L("No users have biometric unlock set up (store: {store}).", ["store": context.options.storePath]))
        } else {
            for r in records { Output.line(StatusReport.line(user: r, now: now)) }
        }
        return 0
    }
}
