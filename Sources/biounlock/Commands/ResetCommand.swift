import BiounlockCore

/// `biounlock reset USER [--biometric | --passcode]`: clears failure counters and so lockouts
/// (like `faillock --user U --reset`).
enum ResetCommand {
    static let spec = CommandSpec(
        path: ["reset"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--biometric", value: nil, help: "only the fingerprint counter and lockout"),
                  OptionSpec(name: "--passcode", value: nil, help: "only the passcode counter and lockout")],
        abstract: "Clear USER's failure counters and lockouts.", discussion: "Without an option, both are cleared.",
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let onlyBio = invocation.has("--biometric"), onlyPasscode = invocation.has("--passcode")
        if onlyBio && onlyPasscode { throw UsageError("--biometric and --passcode exclude each other; give neither to clear both", command: spec) }
        let store = try context.openStore()
        guard try storeCall("cannot read the store", { () throws(StoreFailure) in try store.loadUser(name) }) != nil else {
            throw CommandFailure("'\(sanitizedForLog(name))' has no biounlock record")
        }
        try storeCall("cannot reset") { () throws(StoreFailure) in
            try store.resetCounters(user: name, biometric: !onlyPasscode, passcode: !onlyBio)
        }
        let what = onlyBio ? "fingerprint" : onlyPasscode ? "passcode" : "fingerprint and passcode"
        Output.line("Cleared the \(what) failure counters of \(name).")
        return 0
    }
}
