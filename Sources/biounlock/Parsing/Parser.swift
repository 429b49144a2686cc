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

/// What an option's value must be; the parser checks it, so a command reads a value that is
/// already valid (and every command with --service, say, refuses the same names the same way).
enum OptionValueKind {
    /// Anything (the command checks it: a user, a finger, a date).
    case text
    /// A whole number of seconds in the range (Core's integer rule: digits only).
    case seconds(ClosedRange<Int>)
    /// A count in the range.
    case count(ClosedRange<Int>)
    /// A PAM service name (ServiceName).
    case service
}

/// One option a command accepts.
struct OptionSpec {
    let name: String          // "--finger"
    let value: String?        // "F" when it takes a value, nil for a flag
    let help: String
    let kind: OptionValueKind

    init(name: String, value: String?, help: String, kind: OptionValueKind = .text) {
        self.name = name; self.value = value; self.help = help; self.kind = kind
    }

    /// The usage error for `text` given to this option, or nil when it is valid.
    func problem(with text: String) -> String? {
        switch kind {
        case .text:
            return nil
        case .seconds(let range):
            guard boundedInteger(text, in: range) == nil else { return nil }
            return L("{option} takes {range} seconds", ["option": name, "range": "\(range.lowerBound)-\(range.upperBound)"])
        case .count(let range):
            guard boundedInteger(text, in: range) == nil else { return nil }
            return L("{option} takes {range}", ["option": name, "range": "\(range.lowerBound)-\(range.upperBound)"])
        case .service:
            guard !ServiceName.isValid(text) else { return nil }
            return L("'{service}' is not a PAM service name", ["service": sanitizedForLog(text)])
        }
    }
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
        var lines = [L("USAGE: {usage}", ["usage": usage]), "", abstract]
        if !discussion.isEmpty { lines += ["", discussion] }
        if !options.isEmpty {
            lines += ["", L("OPTIONS:")]
            for o in options {
                let left = "  \(o.name)\(o.value.map { " \($0)" } ?? "")"
                lines.append(left.padding(to: 26) + o.help)
            }
        }
        lines += ["", L("GLOBAL OPTIONS:")] + GlobalOptions.helpLines
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// Pads to `width` terminal columns (East Asian wide characters take two), or adds one space.
    func padding(to width: Int) -> String {
        let columns = displayWidth
        return columns >= width ? self + " " : self + String(repeating: " ", count: width - columns)
    }

    /// Terminal columns: two for the East Asian wide and full-width characters (CJK, kana,
    /// hangul, full-width forms), one for the rest -- enough to align translated help and reports.
    var displayWidth: Int {
        unicodeScalars.reduce(0) { width, s in
            switch s.value {
            case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
                 0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
                 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
                return width + 2
            default:
                return width + 1
            }
        }
    }
}

/// Options every command takes. Each maps onto a key of the shared option parser, so the
/// CLI reads the same settings as the module (defaults < config file < these).
struct GlobalOptions {
    static let specs: [(flag: String, key: String, value: String, help: String)] = [
        ("--db", "db", "PATH", L("store (default {path})", ["path": Options.defaultStorePath])),
        ("--config", "config", "PATH", L("config file (default {path})", ["path": Options.defaultConfigPath])),
        ("--sensor", "sensor", "KIND", "auto|libfprint|fprintd|simulated"),
        ("--sim-socket", "sim_socket", "PATH", L("control socket of the simulated sensor")),
        ("--policy", "policy", "POLICY", "biometrics-or-passcode|biometrics"),
    ]

    static var helpLines: [String] {
        specs.map { "  \($0.flag) \($0.value)".padding(to: 26) + $0.help }
            + ["  --json".padding(to: 26) + L("machine-readable output, in English (commands that read)"),
               "  -h, --help".padding(to: 26) + L("show help")]
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
    /// A number option's value (checked by the parser against its range), or nil when not given.
    func integer(_ name: String) -> Int? {
        guard let text = values[name], let option = spec.options.first(where: { $0.name == name }) else { return nil }
        switch option.kind {
        case .seconds(let range), .count(let range): return boundedInteger(text, in: range)
        case .text, .service: return nil
        }
    }
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
                    guard index < args.count else { throw UsageError(L("{option} needs a value ({value})", ["option": g.flag, "value": g.value])) }
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
                let words = rest.joined(separator: " ")
                return .help(([L("USAGE: {usage}", ["usage": "biounlock \(words) <command>"]), "", L("COMMANDS:")] + lines
                              + ["", L("Run '{command}' for details.", ["command": "biounlock \(words) <command> --help"])]).joined(separator: "\n"))
            }
            throw UsageError(L("unknown command '{command}'", ["command": rest.joined(separator: " ")]))
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
                    throw UsageError(L("unknown option '{option}' for '{command}'", ["option": name, "command": spec.path.joined(separator: " ")]), command: spec)
                }
                if let valueName = option.value {
                    let value: String
                    if let inline { value = inline }
                    else if !words.isEmpty { value = words.removeFirst() }
                    else { throw UsageError(L("{option} needs a value ({value})", ["option": name, "value": valueName]), command: spec) }
                    if let problem = option.problem(with: value) { throw UsageError(problem, command: spec) }
                    values[name] = value
                } else {
                    guard inline == nil else { throw UsageError(L("{option} takes no value", ["option": name]), command: spec) }
                    flags.insert(name)
                }
            } else {
                positionals.append(word)
            }
        }
        let required = spec.positionals.filter { !$0.optional }.count
        if positionals.count < required {
            throw UsageError(L("missing {argument}", ["argument": spec.positionals[positionals.count].name]), command: spec)
        }
        if positionals.count > spec.positionals.count {
            throw UsageError(L("unexpected argument '{argument}'", ["argument": positionals[spec.positionals.count]]), command: spec)
        }
        return .run(Invocation(spec: spec, globals: globals, positionals: positionals, values: values, flags: flags))
    }

    static func splitOption(_ word: String) -> (String, String?) {
        guard let eq = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<eq]), String(word[word.index(after: eq)...]))
    }
}
