import BiounlockCore
import BiounlockStore

/// `biounlock forget USER`: removes everything the store holds for USER -- fingers, passcode,
/// settings, counters -- for instance the record of a deleted account whose name now belongs to
/// someone else (AccountBinding). The audit log keeps its history.
enum ForgetCommand {
    static let spec = CommandSpec(
        path: ["forget"], positionals: [("USER", false)], options: [],
        abstract: "Remove everything stored for USER (fingers, passcode, settings, counters).",
        discussion: "Works whether or not USER is an account now: use it for the record of a deleted account, or of a name given to another account. The audit log is kept. Prints a reader keeps itself (match-on-chip) are not touched: run 'unenrol USER --all' first while the reader is attached.",
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let store = try context.openStore()
        guard let record = try storeCall("cannot read the store", { () throws(StoreFailure) in try store.loadUser(name) }) else {
            throw CommandFailure("'\(sanitizedForLog(name))' has no biounlock record")
        }
        try storeCall("cannot forget \(sanitizedForLog(name))") { () throws(StoreFailure) in try store.forget(user: name) }
        let fingers = record.templates.count
        Output.line("Forgot \(name): \(fingers) finger\(fingers == 1 ? "" : "s"), \(record.passcode == nil ? "no passcode" : "the passcode"), settings and counters.")
        return 0
    }
}
