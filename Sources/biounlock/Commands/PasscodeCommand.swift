import Glibc
import BiounlockCore
import BiounlockStore

/// `biounlock passcode set|clear USER`: biounlock's own passcode (Argon2id), the fallback
/// under policy=biometrics-or-passcode.
enum PasscodeCommand {
    static let set = CommandSpec(
        path: ["passcode", "set"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--kind", value: "KIND", help: "pin (digits, at least 4), password (at least 6) or pattern (3x3 grid path as digits 1-9); default pin"),
                  OptionSpec(name: "--stdin", value: nil, help: "read the passcode from one line of standard input")],
        abstract: "Set USER's passcode.",
        discussion: "From a terminal the passcode is asked twice, without echo. It is stored only as an Argon2id hash.",
        writes: true, run: runSet)

    static let clear = CommandSpec(
        path: ["passcode", "clear"], positionals: [("USER", false)], options: [],
        abstract: "Remove USER's passcode.", discussion: "", writes: true, run: runClear)

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
            throw UsageError("unknown kind '\(kindName)'; use pin, password or pattern", command: set)
        }
        let typed: Secret
        if invocation.has("--stdin") {
            // Nothing of the secret is printed: standard output ends up in provisioning logs.
            typed = try SecretInput.readLine(fd: STDIN_FILENO)
        } else {
            guard isatty(STDIN_FILENO) != 0 else {
                throw UsageError("standard input is not a terminal; pass --stdin to read the passcode from it", command: set)
            }
            let noun = kind == .pin ? "PIN" : kind.rawValue
            // The pattern's drawing goes to the terminal only, while it is confirmed, and is erased
            // once the repeat is typed (where the terminal can erase).
            let terminal = TerminalNotes()
            if kind == .pattern {
                terminal?.show("Type the pattern as the digits of its points:\n"
                               + Pattern.draw([1, 2, 3, 4, 5, 6, 7, 8, 9]).split(separator: "\n").dropLast().joined(separator: "\n") + "\n")
            }
            typed = try SecretInput.prompt("New \(noun) for \(account.name): ")
            if let problem = kind.problem(with: typed) { throw CommandFailure("passcode not set: \(problem)") }
            var drawn = 0
            if kind == .pattern, case .success(let path) = typed.withBytes({ Pattern.canonical(Array($0)) }) {
                drawn = terminal?.show(Pattern.draw(path) + "\n") ?? 0
            }
            let again: Secret
            do {
                defer { if drawn > 0 { terminal?.erase(lines: drawn + 1) } } // the drawing and the repeat prompt
                again = try SecretInput.prompt("Repeat the \(noun): ")
            }
            guard let a = kind.normalized(typed), let b = kind.normalized(again), a.constantTimeEquals(b) else {
                throw CommandFailure("passcode not set: the two entries differ")
            }
        }
        if let problem = kind.problem(with: typed) { throw CommandFailure("passcode not set: \(problem)") }
        guard let secret = kind.normalized(typed) else { throw CommandFailure("passcode not set: not a valid \(kind.rawValue)") }
        let hash: String
        do { hash = try Passcode.hash(secret) } catch { throw CommandFailure("cannot hash the passcode: \(error)") }
        let store = try opened ?? context.openStore()
        try storeCall("cannot store the passcode") { () throws(StoreFailure) in
            try store.setPasscode(StoredPasscode(hash: hash, kind: kind), user: account.name, at: context.now())
        }
        Output.line("Passcode (\(kind.rawValue)) set for \(account.name).")
        return 0
    }

    static func runClear(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let store = try context.openStore()
        try storeCall("cannot clear the passcode") { () throws(StoreFailure) in try store.setPasscode(nil, user: name, at: context.now()) }
        Output.line("Passcode cleared for \(name).")
        return 0
    }
}
