import BiounlockCore

/// `biounlock forget-password USER`: drops the Unix password kept for the boot for USER (issue
/// 32: the root-only kernel key the module keeps after a password login at a login service and
/// hands on to the keyring after a finger login there). USER's next login at a login service
/// then takes the password again. The store is not touched.
enum ForgetPasswordCommand {
    static let spec = CommandSpec(
        path: ["forget-password"], positionals: [("USER", false)], options: [],
        abstract: L("Drop the Unix password kept for this boot for USER."),
        discussion: L("After a password login at a login service the password is kept in a root-only kernel key for the boot, so that a finger login there opens the keyring. This drops it: the next login there takes the password again."),
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let account = try context.account(invocation.positionals[0])
        if KeptPasswordKey.drop(user: account.name) {
            Output.line(L("Dropped the password kept for {user}.", ["user": account.name]))
        } else {
            Output.line(L("No password is kept for {user}.", ["user": account.name]))
        }
        return 0
    }
}
