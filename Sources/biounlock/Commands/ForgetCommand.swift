import BiounlockCore
import BiounlockStore

/// `biounlock forget USER`: removes everything the store holds for USER -- fingers, passcode,
/// settings, counters -- for instance the record of a deleted account whose name now belongs to
/// someone else (AccountBinding). The audit log keeps its history.
enum ForgetCommand {
    static let spec = CommandSpec(
        path: ["forget"], positionals: [("USER", false)], options: [],
        abstract: L("Remove everything stored for USER (fingers, passcode, settings, counters)."),
        discussion: L("Works whether or not USER is an account now: use it for the record of a deleted account, or of a name given to another account. The audit log is kept. Prints a reader keeps itself (match-on-chip) are not touched: run 'unenrol USER --all' first while the reader is attached."),
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let store = try context.openStore()
        guard let record = try storeCall(L("cannot read the store"), { () throws(StoreFailure) in try store.loadUser(name) }) else {
            throw CommandFailure(L("'{user}' has no biounlock record", ["user": sanitizedForLog(name)]))
        }
        _ = try storeCall(L("cannot forget {user}", ["user": sanitizedForLog(name)])) { () throws(StoreFailure) in try store.forget(user: name) }
        KeptPasswordKey.drop(user: name)   // issue 32: the password kept for the boot too
        let fingers = record.templates.count
        if record.passcode == nil {
            Output.line(L("Forgot {user}: 1 finger, no passcode, settings and counters.",
                          plural: "Forgot {user}: {count} fingers, no passcode, settings and counters.", count: fingers, ["user": name]))
        } else {
            Output.line(L("Forgot {user}: 1 finger, the passcode, settings and counters.",
                          plural: "Forgot {user}: {count} fingers, the passcode, settings and counters.", count: fingers, ["user": name]))
        }
        return 0
    }
}
