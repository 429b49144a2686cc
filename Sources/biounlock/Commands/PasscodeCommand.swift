import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockStore

/// `biounlock passcode set|clear USER`: biounlock's own passcode (Argon2id), the fallback
/// under policy=biometrics-or-passcode.
enum PasscodeCommand {
    static let set = CommandSpec(
        path: ["passcode", "set"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--kind", value: "KIND", help: L("pin (digits, at least 4), password (at least 6) or pattern (3x3 grid path as digits 1-9); default pin")),
                  OptionSpec(name: "--stdin", value: nil, help: L("read the passcode from one line of standard input"))],
        abstract: L("Set USER's passcode."),
        discussion: L("From a terminal the passcode is asked twice, without echo. It is stored only as an Argon2id hash."),
        writes: true, run: runSet)

    static let clear = CommandSpec(
        path: ["passcode", "clear"], positionals: [("USER", false)], options: [],
        abstract: L("Remove USER's passcode."), discussion: "", writes: true, run: runClear)

    static func runSet(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let account = try context.account(invocation.positionals[0])
        let kindName = invocation.value("--kind") ?? PasscodeKind.pin.rawValue
        // Refused before anything is typed when the record is another account's.
        var opened: Store?
        if context.storeExists {
            let store = try context.openStore()
            try context.requireOwnRecord(account, in: store)
            opened = store
        }
        guard let kind = PasscodeKind(rawValue: kindName) else {
            throw UsageError(L("unknown kind '{kind}'; use pin, password or pattern", ["kind": sanitizedForLog(kindName)]), command: set)
        }
        let typed: Secret
        if invocation.has("--stdin") {
            // Nothing of the secret is printed: standard output ends up in provisioning logs.
            typed = try SecretInput.readLine()
        } else {
            guard FileDescriptor.standardInput.isTerminal else {
                throw UsageError(L("standard input is not a terminal; pass --stdin to read the passcode from it"), command: set)
            }
            // The pattern's drawing goes to the terminal only, while it is confirmed, and is erased
            // once the repeat is typed (where the terminal can erase).
            let terminal = TerminalNotes()
            if kind == .pattern {
                terminal?.show(L("Type the pattern as the digits of its points:") + "\n"
                               + Pattern.draw([1, 2, 3, 4, 5, 6, 7, 8, 9]).split(separator: "\n").dropLast().joined(separator: "\n") + "\n")
            }
            // As passwd does: a passcode that breaks a rule, or a repeat that differs, is asked for
            // again, at most `attempts` times in all; then the command fails and nothing is stored.
            var accepted: Secret?
            var failure = CommandFailure("")
            for attempt in 1...attempts {
                let first = try SecretInput.prompt(newPrompt(kind, user: account.name))
                if let problem = kind.problem(with: first) {
                    failure = notSet(problem)
                    if attempt < attempts { Output.error(L("{problem}; try again.", ["problem": problem])) }
                    continue
                }
                var drawn = 0
                if kind == .pattern, case .success(let path) = first.withBytes({ Pattern.canonical(Array($0)) }) {
                    drawn = terminal?.show(Pattern.draw(path) + "\n") ?? 0
                }
                let again: Secret
                do {
                    defer { if drawn > 0 { terminal?.erase(lines: drawn + 1) } } // the drawing and the repeat prompt
                    again = try SecretInput.prompt(repeatPrompt(kind))
                }
                guard let a = kind.normalized(first), let b = kind.normalized(again), a.constantTimeEquals(b) else {
                    failure = CommandFailure(L("passcode not set: the two entries differ"))
                    if attempt < attempts { Output.error(L("The two entries differ; try again.")) }
                    continue
                }
                accepted = first
                break
            }
            guard let accepted else { throw failure }
            typed = accepted
        }
        if let problem = kind.problem(with: typed) { throw notSet(problem) }
        guard let secret = kind.normalized(typed) else {
            switch kind {
            case .pin: throw CommandFailure(L("passcode not set: not a valid PIN"))
            case .password: throw CommandFailure(L("passcode not set: not a valid text passcode"))
            case .pattern: throw CommandFailure(L("passcode not set: not a valid pattern"))
            }
        }
        let hash: String
        do { hash = try Passcode.hash(secret) } catch { throw CommandFailure(L("cannot hash the passcode: {error}", ["error": "\(error)"])) }
        let store = try opened ?? context.openStore()
        try storeCall(L("cannot store the passcode")) { () throws(StoreFailure) in
            try store.setPasscode(StoredPasscode(hash: hash, kind: kind), user: account.name, at: context.now())
        }
        switch kind {
        case .pin: Output.line(L("PIN set for {user}.", ["user": account.name]))
        // TRANSLATORS: a passcode of --kind password: letters, digits and signs (biounlock's own, not the Unix password).
        case .password: Output.line(L("Text passcode set for {user}.", ["user": account.name]))
        case .pattern: Output.line(L("Pattern set for {user}.", ["user": account.name]))
        }
        return 0
    }

    static func runClear(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let store = try context.openStore()
        try storeCall(L("cannot clear the passcode")) { () throws(StoreFailure) in try store.setPasscode(nil, user: name, at: context.now()) }
        KeptPasswordKey.drop(user: name)   // issue 32: the password kept for the boot goes with it
        Output.line(L("Passcode cleared for {user}.", ["user": name]))
        return 0
    }

    /// How many times a terminal is asked for a new passcode before `passcode set` gives up.
    static let attempts = 3

    static func newPrompt(_ kind: PasscodeKind, user: String) -> String {
        switch kind {
        case .pin: return L("New PIN for {user}: ", ["user": user])
        case .password: return L("New passcode for {user}: ", ["user": user])
        case .pattern: return L("New pattern for {user}: ", ["user": user])
        }
    }

    static func repeatPrompt(_ kind: PasscodeKind) -> String {
        switch kind {
        case .pin: return L("Repeat the PIN: ")
        case .password: return L("Repeat the passcode: ")
        case .pattern: return L("Repeat the pattern: ")
        }
    }

    /// The rule the typed passcode breaks (PasscodeKind.problem).
    static func notSet(_ problem: String) -> CommandFailure {
        CommandFailure(L("passcode not set: {problem}", ["problem": problem]))
    }
}
