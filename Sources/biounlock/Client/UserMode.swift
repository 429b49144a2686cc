import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockServiceProtocol

/// The CLI run by a user (not root): the commands about one's own account go through
/// biounlockd -- `status`, `log`, `enable`/`disable`, `passcode set|change|remove`,
/// `enrol`/`unenrol`, `reset`, `forget-password` -- with no USER or the user's own name. Another user's name is
/// refused (exit 1); root's global options (--db, --config, --sensor, --sim-socket, --policy),
/// help and every other command go to the root path unchanged (which refuses what needs root).
enum UserMode {
    struct Spec {
        let path: [String]
        let options: [String: Bool] // name: takes a value
        /// What --service takes: a service name, or for enable/disable what the root path's
        /// option takes (EnableCommand.serviceOption: a group too, as biounlockd takes it).
        var service: OptionValueKind = .service
    }

    static let specs: [Spec] = [
        Spec(path: ["status"], options: [:]),
        Spec(path: ["log"], options: ["--user": true, "--service": true, "--since": true, "--limit": true]),
        Spec(path: ["enable"], options: ["--service": true, "--stdin": false], service: EnableCommand.serviceOption.kind),
        Spec(path: ["disable"], options: ["--service": true], service: EnableCommand.serviceOption.kind),
        Spec(path: ["passcode", "set"], options: ["--kind": true, "--stdin": false]),
        Spec(path: ["passcode", "change"], options: ["--kind": true, "--stdin": false]),
        Spec(path: ["passcode", "remove"], options: ["--stdin": false]),
        Spec(path: ["passcode", "clear"], options: ["--stdin": false]),
        Spec(path: ["enrol"], options: ["--finger": true, "--timeout": true, "--stdin": false]),
        Spec(path: ["enroll"], options: ["--finger": true, "--timeout": true, "--stdin": false]),
        Spec(path: ["unenrol"], options: ["--finger": true, "--all": false, "--stdin": false]),
        Spec(path: ["unenroll"], options: ["--finger": true, "--all": false, "--stdin": false]),
        Spec(path: ["reset"], options: ["--biometric": false, "--passcode": false, "--stdin": false]),
        Spec(path: ["forget-password"], options: [:]),
    ]

    struct Invocation {
        let path: [String]
        let values: [String: String]
        let flags: Set<String>
        let json: Bool
        var typed: String { (["biounlock"] + path).joined(separator: " ") }
        func value(_ name: String) -> String? { values[name] }
        func has(_ flag: String) -> Bool { flags.contains(flag) }
    }

    /// The exit status when this is a user-mode command, nil when the root path takes it.
    static func run(_ arguments: [String]) -> Int32? {
        let rootOptions = ["--db", "--config", "--sensor", "--sim-socket", "--policy"]
        if arguments.contains(where: { a in a == "-h" || a == "--help" || rootOptions.contains { a == $0 || a.hasPrefix($0 + "=") } }) {
            return nil
        }
        let words = arguments.filter { $0 != "--json" }
        guard let spec = specs.filter({ words.starts(with: $0.path) }).max(by: { $0.path.count < $1.path.count }) else { return nil }
        do {
            let invocation = try parse(Array(words.dropFirst(spec.path.count)), spec: spec, json: arguments.contains("--json"))
            return try UserCommands.run(invocation)
        } catch let error as UsageError {
            Output.error(error.message)
            Output.errorLine(L("Usage: {usage}; see '{help}'.", ["usage": (["biounlock"] + spec.path + ["[options]"]).joined(separator: " "),
                                                                  "help": (["biounlock"] + spec.path + ["--help"]).joined(separator: " ")]))
            return 64
        } catch let error as CommandFailure {
            Output.error(error.message)
            return 1
        } catch {
            Output.error("\(error)")
            return 1
        }
    }

    static func parse(_ words: [String], spec: Spec, json: Bool) throws -> Invocation {
        var values: [String: String] = [:]
        var flags = Set<String>()
        var positionals: [String] = []
        var rest = words
        while !rest.isEmpty {
            let word = rest.removeFirst()
            guard word.hasPrefix("--") else { positionals.append(word); continue }
            let (name, inline) = Parser.splitOption(word)
            guard let takesValue = spec.options[name] else {
                throw UsageError(L("unknown option '{option}' for '{command}'", ["option": name, "command": spec.path.joined(separator: " ")]))
            }
            if takesValue {
                if let inline { values[name] = inline }
                else if !rest.isEmpty { values[name] = rest.removeFirst() }
                else { throw UsageError(L("{option} needs a value ({value})", ["option": name, "value": "…"])) }
            } else {
                guard inline == nil else { throw UsageError(L("{option} takes no value", ["option": name])) }
                flags.insert(name)
            }
        }
        if positionals.count > 1 {
            throw UsageError(L("unexpected argument '{argument}'", ["argument": positionals[1]]))
        }
        // Another user's name (or --user): refused here, before anything is asked or read.
        for named in positionals + [values["--user"]].compactMap({ $0 }) {
            guard let account = Accounts.lookup(named), account.uid == ProcessIdentity.realUserID else {
                throw CommandFailure(L("you can manage only your own biometric unlock (you are {me}); another user's needs root: {command}",
                                       ["me": ClientIdentity.name,
                                        "command": (["sudo", "biounlock"] + spec.path + [sanitizedForLog(named)]).joined(separator: " ")]))
            }
        }
        if let s = values["--service"], let problem = spec.service.problem(with: s, option: "--service") {
            throw UsageError(problem)
        }
        return Invocation(path: spec.path, values: values, flags: flags, json: json)
    }
}
