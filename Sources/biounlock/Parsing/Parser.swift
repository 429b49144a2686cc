import BiounlockCore

/// A usage mistake: exit 64 (EX_USAGE) with a message naming it.
struct UsageError: Error {
    let message: String
    let command: CommandSpec?
    init(_ message: String, command: CommandSpec? = nil) { self.message = message; self.command = command }
}

/// A failure while running a command: exit 1 with the message.
struct CommandFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// One option a command accepts.
struct OptionSpec {
    let name: String          // "--finger"
    let value: String?        // "F" when it takes a value, nil for a flag
    let help: String
}

/// What a subcommand looks like: its words, positionals, options and help (in the spirit of
/// swift-argument-parser: declared once, used for parsing, validation and --help).
struct CommandSpec {
    let path: [String]                 // ["passcode", "set"]
    let positionals: [(name: String, optional: Bool)]
    let options: [OptionSpec]
    let abstract: String
    let discussion: String
    let writes: Bool                   // changes the store: root only
    let run: (Invocation) throws -> Int32

    var usage: String {
        var parts = ["biounlock"] + path
        parts += positionals.map { $0.optional ? "[\($0.name)]" : $0.name }
        parts += options.map { o in "[\(o.name)\(o.value.map { " \($0)" } ?? "")]" }
        return parts.joined(separator: " ")
    }

    var help: String {
        var lines = ["USAGE: \(usage)", "", abstract]
        if !discussion.isEmpty { lines += ["", discussion] }
        if !options.isEmpty {
            lines += ["", "OPTIONS:"]
            for o in options {
                let left = "  \(o.name)\(o.value.map { " \($0)" } ?? "")"
                lines.append(left.padding(to: 26) + o.help)
            }
        }
        lines += ["", "GLOBAL OPTIONS:"] + GlobalOptions.helpLines
        return lines.joined(separator: "\n")
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// Options every command takes. Each maps onto a key of the shared option parser, so the
/// CLI reads the same settings as the module (defaults < config file < these).
struct GlobalOptions {
    static let specs: [(flag: String, key: String, value: String, help: String)] = [
        ("--db", "db", "PATH", "store (default \(Options.defaultStorePath))"),
        ("--config", "config", "PATH", "config file (default \(Options.defaultConfigPath))"),
        ("--sensor", "sensor", "KIND", "auto|libfprint|fprintd|simulated"),
        ("--sim-socket", "sim_socket", "PATH", "control socket of the simulated sensor"),
        ("--policy", "policy", "POLICY", "biometrics-or-passcode|biometrics"),
    ]

    static var helpLines: [String] {
        specs.map { "  \($0.flag) \($0.value)".padding(to: 26) + $0.help }
            + ["  --json".padding(to: 26) + "machine-readable output (commands that read)",
               "  -h, --help".padding(to: 26) + "show help"]
    }

    /// As typed, to repeat them in suggested commands.
    var typed: [String] = []
    /// As option words for the shared parser (`db=/x`).
    var words: [String] = []
    var json = false
}

/// The parsed command line handed to a command.
struct Invocation {
    let spec: CommandSpec
    let globals: GlobalOptions
    let positionals: [String]
    let values: [String: String]
    let flags: Set<String>

    func value(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

enum Parser {
    enum Parsed {
        case run(Invocation)
        case help(String)
    }

    static func parse(_ args: [String], commands: [CommandSpec], topHelp: String) throws(UsageError) -> Parsed {
        var globals = GlobalOptions()
        var rest: [String] = []
        var wantsHelp = false
        var index = 0
        while index < args.count {
            let arg = args[index]
            if arg == "--json" { globals.json = true }
            else if arg == "-h" || arg == "--help" { wantsHelp = true }
            else if let g = GlobalOptions.specs.first(where: { $0.flag == arg || arg.hasPrefix($0.flag + "=") }) {
                let value: String
                if arg.hasPrefix(g.flag + "=") {
                    value = String(arg.dropFirst(g.flag.count + 1))
                } else {
                    index += 1
                    guard index < args.count else { throw UsageError("\(g.flag) needs a value (\(g.value))") }
                    value = args[index]
                }
                globals.typed += [g.flag, value]
                globals.words.append("\(g.key)=\(value)")
            } else {
                rest.append(arg)
            }
            index += 1
        }

        // Longest command path that matches the leading words.
        let spec = commands
            .filter { rest.starts(with: $0.path) }
            .max { $0.path.count < $1.path.count }
        guard let spec else {
            if rest.isEmpty || rest == ["help"] { return .help(topHelp) }
            if rest.first == "help", let target = commands.first(where: { Array(rest.dropFirst()).starts(with: $0.path) }) {
                return .help(target.help)
            }
            // A command group on its own (`biounlock sim`, `biounlock passcode --help`): its commands.
            let group = commands.filter { $0.path.count > rest.count && $0.path.starts(with: rest) }
            if !rest.isEmpty && !group.isEmpty {
                let lines = group.map { "  " + $0.usage.padding(to: 44) + $0.abstract }
                return .help((["USAGE: biounlock \(rest.joined(separator: " ")) <command>", "", "COMMANDS:"] + lines
                              + ["", "Run 'biounlock \(rest.joined(separator: " ")) <command> --help' for details."]).joined(separator: "\n"))
            }
            throw UsageError("unknown command '\(rest.joined(separator: " "))'")
        }
        if wantsHelp { return .help(spec.help) }

        var positionals: [String] = []
        var values: [String: String] = [:]
        var flags = Set<String>()
        var words = Array(rest.dropFirst(spec.path.count))
        while !words.isEmpty {
            let word = words.removeFirst()
            if word.hasPrefix("--") {
                let (name, inline) = splitOption(word)
                guard let option = spec.options.first(where: { $0.name == name }) else {
                    throw UsageError("unknown option '\(name)' for '\(spec.path.joined(separator: " "))'", command: spec)
                }
                if let valueName = option.value {
                    if let inline { values[name] = inline }
                    else if !words.isEmpty { values[name] = words.removeFirst() }
                    else { throw UsageError("\(name) needs a value (\(valueName))", command: spec) }
                } else {
                    guard inline == nil else { throw UsageError("\(name) takes no value", command: spec) }
                    flags.insert(name)
                }
            } else {
                positionals.append(word)
            }
        }
        let required = spec.positionals.filter { !$0.optional }.count
        if positionals.count < required {
            throw UsageError("missing \(spec.positionals[positionals.count].name)", command: spec)
        }
        if positionals.count > spec.positionals.count {
            throw UsageError("unexpected argument '\(positionals[spec.positionals.count])'", command: spec)
        }
        return .run(Invocation(spec: spec, globals: globals, positionals: positionals, values: values, flags: flags))
    }

    static func splitOption(_ word: String) -> (String, String?) {
        guard let eq = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<eq]), String(word[word.index(after: eq)...]))
    }
}
