import BiounlockCore
import BiounlockStore

/// `biounlock migrate`: brings an existing store to this version's schema, keeping everything in
/// it (the package runs it on upgrade, scripts/install after installing). Until then the module
/// refuses an older store and falls back to the password, logging why. Never creates a store.
enum MigrateCommand {
    static let spec = CommandSpec(
        path: ["migrate"], positionals: [], options: [],
        abstract: "Bring the store to this version's schema (the package does it on upgrade).",
        discussion: "Keeps every setting, print, passcode, counter and audit row. Does nothing when there is no store yet. Each migration runs in one transaction: an interrupted one leaves the store as it was.",
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        guard context.storeExists else {
            Output.line("No store at \(context.options.storePath) yet: nothing to migrate.")
            return 0
        }
        let store = try context.openStore()
        let version = try storeCall("cannot read the store's schema version") { () throws(StoreFailure) in try store.schemaVersion() }
        Output.line("The store \(context.options.storePath) is at schema version \(version), this biounlock's.")
        return 0
    }
}
