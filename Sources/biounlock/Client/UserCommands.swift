import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockServiceProtocol
import BiounlockBus

/// The user-mode commands (UserMode): each asks biounlockd and prints what it answered, in the
/// user's language. Every change but turning biometric unlock off first asks for the Unix
/// password (or the current biounlock passcode), like passwd; `--stdin` reads it from the first
/// line of standard input (and `passcode set` the new passcode from the second).
enum UserCommands {
    static func run(_ inv: UserMode.Invocation) throws -> Int32 {
        let client = try ServiceClient(command: inv.typed + " " + ClientIdentity.name)
        switch inv.path {
        case ["status"]: return try status(client, inv)
        case ["log"]: return try log(client, inv)
        case ["enable"]: return try enable(client, inv)
        case ["disable"]: return try disable(client, inv)
        case ["passcode", "set"], ["passcode", "change"]: return try setPasscode(client, inv)
        case ["passcode", "remove"], ["passcode", "clear"]: return try removePasscode(client, inv)
        case ["enrol"], ["enroll"]: return try UserEnrolment.run(client, inv)
        case ["unenrol"], ["unenroll"]: return try unenrol(client, inv)
        case ["reset"]: return try reset(client, inv)
        case ["forget-password"]: return try forgetPassword(client, inv)
        default: throw UsageError(L("unknown command '{command}'", ["command": inv.path.joined(separator: " ")]))
        }
    }

    // MARK: the proof

    /// Reads the Unix password (or the biounlock passcode): line 1 of stdin with --stdin, else
    /// from the terminal without echo; then re-authenticates the connection with it.
    static func authenticate(_ client: ServiceClient, _ inv: UserMode.Invocation) throws {
        let secret: Secret
        if inv.has("--stdin") {
            secret = try SecretInput.readLine()
        } else {
            guard FileDescriptor.standardInput.isTerminal else {
                throw UsageError(L("standard input is not a terminal; pass --stdin to read your password from its first line"))
            }
            secret = try SecretInput.prompt(L("Password (or biounlock passcode) for {user}: ", ["user": ClientIdentity.name]))
        }
        guard !secret.isEmpty else { throw CommandFailure(L("authentication failed: nothing was typed; nothing was changed")) }
        try client.authenticate(secret)
    }

    // MARK: reading

    static func status(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let s = try client.status()
        if inv.json {
            Output.line(JSON.object([("users", .array([ClientStatus.json(s)]))]).serialized())
        } else {
            Output.line(ClientStatus.text(s))
        }
        return 0
    }

    static func log(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        var since: Int64 = 0
        if let text = inv.value("--since") {
            guard let t = parseSince(text, now: SystemClock().now()) else {
                throw UsageError(L("--since takes a duration (2h, 3d) or a date (2026-11-01), not '{value}'", ["value": sanitizedForLog(text)]))
            }
            since = t
        }
        var limit: UInt32 = ManagerAPI.defaultEventLimit
        if let text = inv.value("--limit") {
            guard let n = boundedInteger(text, in: 1...Int(ManagerAPI.maximumEventLimit)) else {
                throw UsageError(L("{option} takes {range}", ["option": "--limit", "range": "1-\(ManagerAPI.maximumEventLimit)"]))
            }
            limit = UInt32(n)
        }
        let v = try client.call(.getEvents, [.string(""), .int64(since), .uint32(limit)])
        let me = ClientIdentity.name
        var events = (v.first?.elements ?? []).compactMap(EventRow.init).map {
            AuditEvent(time: $0.time, user: me, service: $0.service, tty: $0.tty, rhost: $0.rhost,
                       method: AuthMethod(rawValue: $0.method) ?? .none, outcome: $0.outcome, reason: $0.reason)
        }
        if let service = inv.value("--service") { events = events.filter { $0.service == service } }
        if inv.json {
            Output.line(StatusReport.json(events: events).serialized())
        } else if events.isEmpty {
            Output.line(L("No events."))
        } else {
            for e in events { Output.line(StatusReport.text(event: e)) }
        }
        return 0
    }

    // MARK: the toggle

    static func enable(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let service = inv.value("--service") ?? ""
        // What is missing first (the toggle stays off and says why), before any password.
        let s = try client.status()
        let check = try client.call(.checkEnable, [.string(""), .string(service)])
        let missing = ClientStatus.missing(check.first)
        if !missing.isEmpty { throw refusal(missing, status: s) }
        try authenticate(client, inv)
        let reply = try client.call(.enable, [.string(""), .string(service)])
        if reply.first?.bool != true { throw refusal(ClientStatus.missing(reply.last), status: s) }
        let v: KeyValuePairs = ["user": s.user, "service": service]
        Output.line(service.isEmpty ? L("Biometric unlock on for {user}.", v) : L("Biometric unlock on for {user} (service {service}).", v))
        return 0
    }

    static func refusal(_ missing: [(String, String)], status s: AccountStatus) -> CommandFailure {
        var message = L("biometric unlock stays off for {user}:", ["user": s.user])
        for (code, detail) in missing {
            let (problem, fix) = ClientStatus.explain(code, detail: detail, status: s)
            message += "\n  - " + problem
            if let fix { message += "\n    " + L("run: {command}", ["command": fix]) }
        }
        return CommandFailure(message)
    }

    /// Drops the Unix password kept for this boot (issue 32); like `disable`, no password asked.
    static func forgetPassword(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let dropped = try client.call(.forgetPassword, [.string("")]).first?.bool ?? false
        let user = ClientIdentity.name
        Output.line(dropped ? L("Dropped the password kept for {user}.", ["user": user]) : L("No password is kept for {user}.", ["user": user]))
        return 0
    }

    static func disable(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let service = inv.value("--service") ?? ""
        try client.call(.disable, [.string(""), .string(service)])
        let v: KeyValuePairs = ["user": ClientIdentity.name, "service": service]
        Output.line(service.isEmpty ? L("Biometric unlock off for {user}.", v) : L("Biometric unlock off for {user} (service {service}).", v))
        return 0
    }

    // MARK: the passcode

    static func setPasscode(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let kindName = inv.value("--kind") ?? PasscodeKind.pin.rawValue
        guard let kind = PasscodeKind(rawValue: kindName) else {
            throw UsageError(L("unknown kind '{kind}'; use pin, password or pattern", ["kind": sanitizedForLog(kindName)]))
        }
        let user = ClientIdentity.name
        _ = try client.status() // the service is there before anything is typed
        let typed: Secret
        if inv.has("--stdin") {
            // Line 1: the password; line 2: the new passcode. Nothing of either is printed.
            try authenticate(client, inv)
            typed = try SecretInput.readLine()
        } else {
            try authenticate(client, inv)
            typed = try PasscodeCommand.askNew(kind, user: user)
        }
        if let problem = kind.problem(with: typed) { throw PasscodeCommand.notSet(problem) }
        let fd = try ServiceClient.carrying(typed)
        try client.call(.setPasscode, [.string(""), .string(kind.rawValue), .handle(0)], descriptors: [fd.descriptor])
        Output.line(L("Passcode ({kind}) set for {user}.", ["kind": kind.rawValue, "user": user]))
        return 0
    }

    static func removePasscode(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        _ = try client.status()
        try authenticate(client, inv)
        try client.call(.removePasscode, [.string("")])
        Output.line(L("Passcode cleared for {user}.", ["user": ClientIdentity.name]))
        return 0
    }

    // MARK: fingers and lockouts

    static func unenrol(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let all = inv.has("--all")
        let name = inv.value("--finger")
        guard all != (name != nil) else { throw UsageError(L("name one finger with --finger F, or use --all")) }
        var finger: Finger?
        if let name {
            guard let f = Finger(name: name) else {
                throw UsageError(L("unknown finger '{finger}'; use one of: {fingers}",
                                   ["finger": sanitizedForLog(name), "fingers": Finger.allCases.map(\.name).joined(separator: ", ")]))
            }
            finger = f
        }
        _ = try client.status()
        try authenticate(client, inv)
        let removed = Int(try client.call(.deleteFingers, [.string(""), .string(finger?.name ?? "")]).first?.uint32 ?? 0)
        let user = ClientIdentity.name
        if let finger {
            Output.line(L("Removed {finger} for {user} (1 template).", plural: "Removed {finger} for {user} ({count} templates).", count: removed,
                          ["finger": finger.name, "user": user]))
        } else {
            Output.line(L("Removed all fingers for {user} (1 template).", plural: "Removed all fingers for {user} ({count} templates).", count: removed,
                          ["user": user]))
        }
        return 0
    }

    static func reset(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let onlyBio = inv.has("--biometric"), onlyPasscode = inv.has("--passcode")
        if onlyBio && onlyPasscode { throw UsageError(L("--biometric and --passcode exclude each other; give neither to clear both")) }
        _ = try client.status()
        try authenticate(client, inv)
        try client.call(.resetLockouts, [.string(""), .string(onlyBio ? "biometric" : onlyPasscode ? "passcode" : "")])
        let user = ClientIdentity.name
        if onlyBio {
            Output.line(L("Cleared the fingerprint failure counters of {user}.", ["user": user]))
        } else if onlyPasscode {
            Output.line(L("Cleared the passcode failure counters of {user}.", ["user": user]))
        } else {
            Output.line(L("Cleared the fingerprint and passcode failure counters of {user}.", ["user": user]))
        }
        return 0
    }
}
