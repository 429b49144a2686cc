import BiounlockCore
import BiounlockStore

/// `biounlock migrate`: brings an existing store to this version's schema, keeping everything in
/// it (the package runs it on upgrade, scripts/install after installing). Until then the module
/// refuses an older store and falls back to the password, logging why. Never creates a store.
enum MigrateCommand {
    static let spec = CommandSpec(
        path: ["migrate"], positionals: [], options: [],
        abstract: L("Bring the store to this version's schema (the package does it on upgrade)."),
        discussion: L("Keeps every setting, print, passcode, counter and audit row. Does nothing when there is no store yet. Each migration runs in one transaction: an interrupted one leaves the store as it was."),
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        guard context.storeExists else {
            Output.line(L("No store at {path} yet: nothing to migrate.", ["path": context.options.storePath]))
            return 0
        }
        let store = try context.openStore()
        let version = try storeCall(L("cannot read the store's schema version")) { () throws(StoreFailure) in try store.schemaVersion() }
        Output.line(L("The store {path} is at schema version {version}, this biounlock's.", ["path": context.options.storePath, "version": String(version)]))
        return 0
    }
}
