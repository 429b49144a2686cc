import BiounlockCore

/// `biounlock reset USER [--biometric | --passcode]`: clears failure counters and so lockouts
/// (like `faillock --user U --reset`).
enum ResetCommand {
    static let spec = CommandSpec(
        path: ["reset"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--biometric", value: nil, help: L("only the fingerprint counter and lockout")),
                  OptionSpec(name: "--passcode", value: nil, help: L("only the passcode counter and lockout"))],
        abstract: L("Clear USER's failure counters and lockouts."), discussion: L("Without an option, both are cleared."),
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let onlyBio = invocation.has("--biometric"), onlyPasscode = invocation.has("--passcode")
        if onlyBio && onlyPasscode { throw UsageError(L("--biometric and --passcode exclude each other; give neither to clear both"), command: spec) }
        let store = try context.openStore()
        guard try storeCall(L("cannot read the store"), { () throws(StoreFailure) in try store.loadUser(name) }) != nil else {
            throw CommandFailure(L("'{user}' has no biounlock record", ["user": sanitizedForLog(name)]))
        }
        try storeCall(L("cannot reset")) { () throws(StoreFailure) in
            try store.resetCounters(user: name, biometric: !onlyPasscode, passcode: !onlyBio)
        }
        if onlyBio {
            Output.line(L("Cleared the fingerprint failure counters of {user}.", ["user": name]))
        } else if onlyPasscode {
            Output.line(L("Cleared the passcode failure counters of {user}.", ["user": name]))
        } else {
            Output.line(L("Cleared the fingerprint and passcode failure counters of {user}.", ["user": name]))
        }
        return 0
    }
}
