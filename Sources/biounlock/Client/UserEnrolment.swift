import BiounlockSystem
import BiounlockCore
import BiounlockServiceProtocol
import BiounlockBus

/// `biounlock enrol [--finger F] [--timeout N]` as a user: the service takes the touches (its
/// worker drives the reader) and tells this connection alone how it goes; Ctrl-C cancels it
/// (nothing is stored).
enum UserEnrolment {
    static func run(_ client: ServiceClient, _ inv: UserMode.Invocation) throws -> Int32 {
        let name = inv.value("--finger") ?? Finger.default.name
        guard let finger = Finger(name: name) else {
            throw UsageError(L("unknown finger '{finger}'; use one of: {fingers}",
                               ["finger": sanitizedForLog(name), "fingers": Finger.allCases.map(\.name).joined(separator: ", ")]))
        }
        var seconds: UInt32 = ManagerAPI.defaultEnrolSeconds
        if let text = inv.value("--timeout") {
            guard let n = boundedInteger(text, in: 1...Int(ManagerAPI.maximumEnrolSeconds)) else {
                throw UsageError(L("{option} takes {range} seconds", ["option": "--timeout", "range": "1-\(ManagerAPI.maximumEnrolSeconds)"]))
            }
            seconds = UInt32(n)
        }
        let user = ClientIdentity.name
        let before = try client.status()
        try UserCommands.authenticate(client, inv)
        // Signals from the service's own connection only: nobody else can make this command
        // print progress or "Enrolled".
        let owner = try client.serviceOwner()
        let loop = MainLoop()
        var result: (String, String)?
        let id = client.bus.subscribe(sender: owner, interface: ManagerAPI.interface, member: nil, path: ManagerAPI.objectPath) { member, args in
            guard args.first?.string == finger.name else { return }
            switch (ManagerAPI.Signal(rawValue: member), args.count) {
            case (.enrolStage?, 3):
                let done = args[1].uint32 ?? 0, total = args[2].uint32 ?? 0
                if done == 0 {
                    Output.progress(L("Enrolling {finger} for {user}: touch the reader once.",
                                      plural: "Enrolling {finger} for {user}: touch the reader {count} times.", count: Int(total),
                                      ["finger": finger.name, "user": user]))
                } else {
                    Output.progress(L("touch {done}/{total}", ["done": String(done), "total": String(total)]))
                }
            case (.enrolRetry?, 2):
                switch ManagerAPI.RetryCode(rawValue: args[1].string ?? "") {
                case .differentFinger?: Output.progress(L("That was a different finger: touch again with the same one."))
                case .tooShort?: Output.progress(Messages.retry(.tooShort))
                case .centerFinger?: Output.progress(Messages.retry(.centerFinger))
                case .removeFinger?: Output.progress(Messages.retry(.removeFinger))
                case .general?, nil: Output.progress(Messages.retry(.general))
                }
            case (.enrolFinished?, 3):
                result = (args[1].string ?? "", args[2].string ?? "")
                loop.quit()
            default:
                break
            }
        }
        defer { client.bus.unsubscribe(id) }
        // The service going away (killed, crashed) ends the wait at once: nothing was stored.
        var vanished = false
        let watch = client.bus.subscribe(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                                         path: "/org/freedesktop/DBus") { _, args in
            guard args.count == 3, args[0].string == owner, args[2].string == "" else { return }
            vanished = true
            loop.quit()
        }
        defer { client.bus.unsubscribe(watch) }
        // Ctrl-C: cancel, and wait for the service to say it ended.
        var interrupted = false
        MainLoop.onSignal(Signal.interrupt.rawValue) {
            interrupted = true
            _ = client.bus.callManager(.cancelEnrolment, timeoutMilliseconds: 10_000)
            return false
        }
        try client.call(.startEnrolment, [.string(""), .string(finger.name), .uint32(seconds)])
        // Bounded: the service ends the enrolment by its timeout; if it never says so, say that.
        MainLoop.every(milliseconds: (seconds + 45) * 1000) { loop.quit(); return false }
        loop.run()
        if vanished && result == nil {
            throw CommandFailure(L("enrolment failed: {reason}; nothing was stored", ["reason": L("the biounlock service stopped")]))
        }
        guard let (outcome, detail) = result else {
            throw CommandFailure(L("enrolment failed: {reason}; nothing was stored", ["reason": L("the service did not say how it ended")]))
        }
        switch ManagerAPI.EnrolResult(rawValue: outcome) {
        case .done?:
            Output.line(L("Enrolled {finger} for {user}.", ["finger": finger.name, "user": user]))
            if !before.enabled && !before.services.values.contains(true) {
                Output.line(L("Turn biometric unlock on with: {command}", ["command": "biounlock enable"]))
            }
            return 0
        case .cancelled?:
            throw CommandFailure(interrupted ? L("enrolment cancelled; nothing was stored")
                                             : L("enrolment failed: {reason}; nothing was stored", ["reason": detail]))
        case .failed?, nil:
            throw CommandFailure(L("enrolment failed: {reason}; nothing was stored", ["reason": detail]))
        }
    }
}

extension PasscodeCommand {
    /// The new passcode, asked twice on the terminal without echo (a pattern drawn while it is
    /// confirmed, then erased), as root's `passcode set` asks it.
    static func askNew(_ kind: PasscodeKind, user: String) throws -> Secret {
        let terminal = TerminalNotes()
        if kind == .pattern {
            terminal?.show(L("Type the pattern as the digits of its points:") + "\n"
                           + Pattern.draw([1, 2, 3, 4, 5, 6, 7, 8, 9]).split(separator: "\n").dropLast().joined(separator: "\n") + "\n")
        }
        let typed = try SecretInput.prompt(newPrompt(kind, user: user))
        if let problem = kind.problem(with: typed) { throw notSet(problem) }
        var drawn = 0
        if kind == .pattern, case .success(let path) = typed.withBytes({ Pattern.canonical(Array($0)) }) {
            drawn = terminal?.show(Pattern.draw(path) + "\n") ?? 0
        }
        let again: Secret
        do {
            defer { if drawn > 0 { terminal?.erase(lines: drawn + 1) } }
            again = try SecretInput.prompt(repeatPrompt(kind))
        }
        guard let a = kind.normalized(typed), let b = kind.normalized(again), a.constantTimeEquals(b) else {
            throw CommandFailure(L("passcode not set: the two entries differ"))
        }
        return typed
    }
}
