import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockStore

/// What every command needs: the effective options and a way to reach the store.
struct Context {
    let options: Options
    let invocation: Invocation

    init(_ invocation: Invocation) throws(CommandFailure) {
        self.invocation = invocation
        switch Configuration.load(arguments: invocation.globals.words) {
        case .failure(let failure):
            throw CommandFailure("\(failure)")
        case .success(let loaded):
            for d in loaded.diagnostics { Output.warning("\(d)") }
            for n in loaded.notes { Output.error(L("note: {message}", ["message": n])) }
            options = loaded.options
        }
    }

    /// Opens (creating and migrating if needed) the store for administration.
    func openStore() throws(CommandFailure) -> Store {
        do {
            let store = try Store.open(path: options.storePath, mode: .administer)
            store.retention = Store.Retention(options)
            return store
        } catch {
            throw CommandFailure(L("cannot open the store: {error}", ["error": "\(error)"]))
        }
    }

    /// Whether a store file exists yet (read commands do not create one).
    var storeExists: Bool { FileSystem.exists(options.storePath) }

    /// The account for USER, or a failure naming the problem.
    func account(_ name: String) throws(CommandFailure) -> Account {
        guard let account = Accounts.lookup(name) else {
            throw CommandFailure(L("no such user '{user}' on this system", ["user": sanitizedForLog(name)]))
        }
        return account
    }

    /// Refuses to add credentials or settings to a row that belongs to another account than the
    /// one `account` is (AccountBinding): the admin clears it first, so that nothing of the old
    /// account's is mixed with the new one's.
    func requireOwnRecord(_ account: Account, in store: Store) throws(CommandFailure) {
        guard let record = try storeCall(L("cannot read the store"), { () throws(StoreFailure) in try store.loadUser(account.name) }) else { return }
        let binding = AccountBinding.of(record, account: account)
        guard binding.isBound else {
            throw CommandFailure(L("{problem}.\n  Clear the old record first (its fingers, passcode, settings and counters), then set {user} up again:\n    run: {command}",
                                   ["problem": binding.localizedProblem(user: account.name), "user": account.name,
                                    "command": AccountBinding.fix(user: account.name, globals: invocation.globals.typed)]))
        }
    }

    /// The finger a --finger value names (fprintd's names, or the short forms).
    func finger(_ name: String) throws(UsageError) -> Finger {
        guard let finger = Finger(name: name) else {
            throw UsageError(L("unknown finger '{finger}'; use one of: {fingers}",
                               ["finger": sanitizedForLog(name), "fingers": Finger.allCases.map(\.name).joined(separator: ", ")]), command: invocation.spec)
        }
        return finger
    }

    /// The options with --device (if given) applied as fprint_device.
    func optionsWithDevice() throws(UsageError) -> Options {
        guard let device = invocation.value("--device") else { return options }
        guard let o = options.with(key: "fprint_device", value: device) else {
            throw UsageError(L("'{device}' is not a reader name (driver, device id or driver/id)", ["device": sanitizedForLog(device)]), command: invocation.spec)
        }
        return o
    }

    /// A suggested command with the same global options the admin typed.
    func suggest(_ rest: String) -> String {
        (["biounlock"] + invocation.globals.typed + [rest]).joined(separator: " ")
    }

    func now() -> Int64 { SystemClock().now() }
}

/// Runs a store call, turning its failure into a command failure: `what` (translated) and the
/// store's reason (English, as in the logs).
func storeCall<T>(_ what: String, _ body: () throws(StoreFailure) -> T) throws(CommandFailure) -> T {
    do { return try body() } catch {
        // TRANSLATORS: {what} says what failed ("cannot read the store"); {error} is the
        // store's own reason, in English.
        throw CommandFailure(L("{what}: {error}", ["what": what, "error": "\(error)"]))
    }
}
