import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockStore

/// What every command needs: the effective options and a way to reach the store.
struct Context {
    let options: Options
    let invocation: Invocation

    /// Why the config file was refused (`untrustedConfig`), when the command chose to go on
    /// without it (doctor, which reports it as one of its checks).
    private(set) var configProblem: FileTrustProblem?

    /// `toleratingUntrustedConfig`: a config file the module would refuse does not stop the
    /// command; it runs with the defaults and the command line's options, and `configProblem`
    /// says why (doctor). Every other command refuses to run on settings it cannot trust.
    init(_ invocation: Invocation, toleratingUntrustedConfig: Bool = false) throws(CommandFailure) {
        self.invocation = invocation
        var result = Configuration.load(arguments: invocation.globals.words)
        if toleratingUntrustedConfig, case .failure(.untrustedConfig(let problem)) = result {
            configProblem = problem
            result = Configuration.load(arguments: invocation.globals.words, readFile: { .failure(.missing($0)) })
        }
        switch result {
        case .failure(let failure):
            throw CommandFailure("\(failure)")
        case .success(var loaded):
            if configProblem != nil { loaded.notes = [] } // not "does not exist": it was refused, and doctor says why
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

    /// Whether a store file exists yet (commands that write decide whether to create one).
    var storeExists: Bool { FileSystem.exists(options.storePath) }

    /// The store for a command that only reads it (`status`, `list`, `log`): nil when there is
    /// none yet, and then nothing is created. A store this user cannot see or read is never
    /// taken for a missing one: `stat` failing with EACCES (its directory is 0700) is not ENOENT,
    /// and the command fails saying so instead of reporting an empty store ("biometric unlock:
    /// off" for everyone).
    func storeToRead() throws(CommandFailure) -> Store? {
        switch storeVisibility() {
        case .missing: return nil
        case .hidden(let failure): throw failure
        case .present: break
        }
        do {
            let store = try Store.open(path: options.storePath, mode: .administer)
            store.retention = Store.Retention(options)
            return store
        } catch {
            // The store is root's (directory 0700, file 0600): whoever else runs this cannot open it.
            if ProcessIdentity.effectiveUserID != 0 { throw onlyRootCanRead }
            throw CommandFailure(L("cannot open the store: {error}", ["error": "\(error)"]))
        }
    }

    enum StoreVisibility {
        case present
        case missing
        /// It may exist, but this process cannot tell: the failure says why.
        case hidden(CommandFailure)
    }

    /// What `stat` says of the store's path: there, not there (ENOENT), or not visible to this
    /// user (EACCES, EPERM: a directory it may not search) or unreadable for another reason.
    func storeVisibility() -> StoreVisibility {
        do throws(Errno) {
            _ = try FileStatus.of(options.storePath, followingSymbolicLinks: true)
            return .present
        } catch where error.code == .noSuchFileOrDirectory {
            return .missing
        } catch where (error.code == .permissionDenied || error.code == .notPermitted) && ProcessIdentity.effectiveUserID != 0 {
            return .hidden(onlyRootCanRead)
        } catch {
            return .hidden(CommandFailure(L("cannot read the biounlock store ({path}): {error}", ["path": options.storePath, "error": error.message])))
        }
    }

    /// The store is root-only by design (docs/SECURITY.md): said plainly, with the way to read it.
    var onlyRootCanRead: CommandFailure {
        // TRANSLATORS: a user who is not root ran `biounlock status` (or list, log, doctor);
        // the store is readable by root alone.
        CommandFailure(L("cannot read the biounlock store ({path}): only root can; run it with sudo", ["path": options.storePath]))
    }

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
