import BiounlockCore
import BiounlockServiceProtocol

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
    /// A PAM service name, or a group of them as biounlockd and the settings app take it
    /// (ManagerAPI.Scope: `@sudo`, `@login`, `@all`).
    case serviceScope

    /// The usage error for `text` given to `option`, or nil when it is valid.
    func problem(with text: String, option: String) -> String? {
        switch self {
        case .text:
            return nil
        case .seconds(let range):
            guard boundedInteger(text, in: range) == nil else { return nil }
            return L("{option} takes {range} seconds", ["option": option, "range": "\(range.lowerBound)-\(range.upperBound)"])
        case .count(let range):
            guard boundedInteger(text, in: range) == nil else { return nil }
            return L("{option} takes {range}", ["option": option, "range": "\(range.lowerBound)-\(range.upperBound)"])
        case .service:
            guard !ServiceName.isValid(text) else { return nil }
            return L("'{service}' is not a PAM service name", ["service": sanitizedForLog(text)])
        case .serviceScope:
            // "" is the Scope of the toggle: no --service at all, not an empty one.
            guard text.isEmpty || ManagerAPI.Scope(argument: text) == nil else { return nil }
            return L("'{service}' is neither a PAM service name nor a group of them (@sudo, @login, @all)", ["service": sanitizedForLog(text)])
        }
    }
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
    func problem(with text: String) -> String? { kind.problem(with: text, option: name) }
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
    /// Prints a report a script may read: takes --json. Commands that do not refuse it (a usage
    /// error), so that --json is never silently ignored.
    var reportsJSON = false
    /// Other spellings of the command word (fprintd's `enroll`), accepted and listed in its help.
    var aliases: [String] = []
    let run: (Invocation) throws -> Int32

    var usage: String {
        var parts = ["biounlock"] + path
        parts += positionals.map { $0.optional ? "[\($0.name)]" : $0.name }
        parts += options.map { o in "[\(o.name)\(o.value.map { " \($0)" } ?? "")]" }
        return parts.joined(separator: " ")
    }

    var help: String {
        var lines = [L("USAGE: {usage}", ["usage": usage]), "", abstract]
        if !aliases.isEmpty {
            // TRANSLATORS: `biounlock enrol --help`; {commands} is another spelling of the
            // command that works the same ("biounlock enroll", fprintd's word).
            lines.append(L("Also: {commands}", ["commands": aliases.map { (["biounlock"] + path.dropLast() + [$0]).joined(separator: " ") }.joined(separator: ", ")]))
        }
        if !discussion.isEmpty { lines += ["", discussion] }
        var shown = options.map { o in ("  \(o.name)\(o.value.map { " \($0)" } ?? "")", o.help) }
        if reportsJSON { shown.append(("  --json", L("machine-readable output, in English"))) }
        if !shown.isEmpty {
            lines += ["", L("OPTIONS:")]
            for (left, help) in shown { lines.append(left.padding(to: 26) + help) }
        }
        // The global options are listed once, in `biounlock --help`.
        lines += ["", L("Global options (--db, --config, ...): see '{command}'.", ["command": "biounlock --help"])]
        return lines.joined(separator: "\n")
    }

    /// `usage` without "biounlock ", as the command lists show it.
    var shortUsage: String { String(usage.dropFirst("biounlock ".count)) }
}

/// Lines of a command list: each usage, then its abstract from one column on (wide characters
/// counted as two: String.displayWidth); a usage too long for that column stands on a line of
/// its own, with its abstract under it in the same column.
func commandList(_ entries: [(usage: String, abstract: String)], column: Int = 46) -> [String] {
    entries.flatMap { entry -> [String] in
        let left = "  " + entry.usage
        if left.displayWidth + 2 <= column { return [left.padding(to: column) + entry.abstract] }
        return [left, String(repeating: " ", count: column) + entry.abstract]
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
        ("--sensor", "sensor", "KIND", SensorKind.allCases.map(\.rawValue).joined(separator: "|")),
        ("--sim-socket", "sim_socket", "PATH", L("control socket of the simulated sensor")),
        ("--policy", "policy", "POLICY", Policy.allCases.map(\.rawValue).joined(separator: "|")),
    ]

    /// What `flag` accepts, for its usage error.
    static func accepts(_ flag: String) -> String {
        switch flag {
        case "--sensor": return SensorKind.allCases.map(\.rawValue).joined(separator: ", ")
        case "--policy": return Policy.allCases.map(\.rawValue).joined(separator: ", ")
        default: return L("an absolute path")
        }
    }

    /// The lines of `biounlock --help`; `reporting` names the commands that take --json.
    static func helpLines(reporting: [String]) -> [String] {
        specs.map { "  \($0.flag) \($0.value)".padding(to: 26) + $0.help }
            + ["  --json".padding(to: 26) + L("machine-readable output, in English ({commands})", ["commands": reporting.joined(separator: ", ")]),
               "  --version".padding(to: 26) + L("show the version"),
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
        case .text, .service, .serviceScope: return nil
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
        var wantsVersion = false
        var index = 0
        while index < args.count {
            let arg = args[index]
            if arg == "--json" { globals.json = true }
            else if arg == "-h" || arg == "--help" { wantsHelp = true }
            else if arg == "--version" { wantsVersion = true }
            else if let g = GlobalOptions.specs.first(where: { $0.flag == arg || arg.hasPrefix($0.flag + "=") }) {
                let value: String
                if arg.hasPrefix(g.flag + "=") {
                    value = String(arg.dropFirst(g.flag.count + 1))
                } else {
                    index += 1
                    guard index < args.count else { throw UsageError(L("{option} needs a value ({value})", ["option": g.flag, "value": g.value])) }
                    value = args[index]
                }
                // Checked by the option table the module and the config file use: a value it
                // refuses is a usage error here, not a warning and the default.
                guard Options().with(key: g.key, value: value) != nil else {
                    throw UsageError(L("{option} does not take '{value}'; use {accepts}",
                                       ["option": g.flag, "value": sanitizedForLog(value), "accepts": GlobalOptions.accepts(g.flag)]))
                }
                globals.typed += [g.flag, value]
                globals.words.append("\(g.key)=\(value)")
            } else {
                rest.append(arg)
            }
            index += 1
        }
        // `biounlock --version` alone is the version command; after a command it is that
        // command's unknown option.
        if wantsVersion {
            if rest.isEmpty { rest = ["version"] } else { rest.append("--version") }
        }
        rest = spelledAsCommands(rest, commands: commands)
        if rest.first == "help" { rest = ["help"] + spelledAsCommands(Array(rest.dropFirst()), commands: commands) }

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
            let words = Array(rest.prefix { !$0.hasPrefix("-") })
            let group = commands.filter { $0.path.count > words.count && $0.path.starts(with: words) }
            if !words.isEmpty && !group.isEmpty && (words.count == rest.count || wantsHelp) {
                let lines = commandList(group.map { ($0.usage, $0.abstract) })
                let joined = words.joined(separator: " ")
                return .help(([L("USAGE: {usage}", ["usage": "biounlock \(joined) <command>"]), "", L("COMMANDS:")] + lines
                              + ["", L("Run '{command}' for details.", ["command": "biounlock \(joined) <command> --help"])]).joined(separator: "\n"))
            }
            throw unknownCommand(rest, commands: commands)
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
                    let known = spec.options.map(\.name) + GlobalOptions.specs.map(\.flag) + ["--help"] + (spec.reportsJSON ? ["--json"] : [])
                    let shown = sanitizedForLog(name), command = spec.path.joined(separator: " ")
                    guard let suggestion = Suggestion.closest(to: name, among: known) else {
                        throw UsageError(L("unknown option '{option}' for '{command}'", ["option": shown, "command": command]), command: spec)
                    }
                    throw UsageError(L("unknown option '{option}' for '{command}'; did you mean '{suggestion}'?",
                                       ["option": shown, "command": command, "suggestion": suggestion]), command: spec)
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
        if globals.json && !spec.reportsJSON {
            // TRANSLATORS: {command} is a command such as "enable"; --json is the option's name.
            throw UsageError(L("'{command}' has no --json output (its exit status says whether it worked)",
                               ["command": spec.path.joined(separator: " ")]), command: spec)
        }
        return .run(Invocation(spec: spec, globals: globals, positionals: positionals, values: values, flags: flags))
    }

    /// The words with the first (or the one after a command group's word) spelled as the
    /// command it is another spelling of: fprintd's `enroll` and `unenroll`.
    static func spelledAsCommands(_ words: [String], commands: [CommandSpec]) -> [String] {
        var words = words
        for position in 0..<min(2, words.count) {
            let prefix = Array(words.prefix(position))
            if let spec = commands.first(where: { $0.path.count == position + 1 && Array($0.path.prefix(position)) == prefix
                                                   && $0.aliases.contains(words[position]) }) {
                words[position] = spec.path[position]
            }
        }
        return words
    }

    /// "unknown command 'X'", with the command it most likely meant (Suggestion) when there is one.
    static func unknownCommand(_ rest: [String], commands: [CommandSpec]) -> UsageError {
        // The words that name a command: a group's word (`sim`, `passcode`) and the next one, or
        // the first word alone.
        let first = rest.first ?? ""
        if first.hasPrefix("-") {
            // An option before any command that is not a global one.
            let flags = GlobalOptions.specs.map(\.flag) + ["--json", "--help", "--version"]
            guard let suggestion = Suggestion.closest(to: first, among: flags) else {
                return UsageError(L("unknown option '{option}'", ["option": sanitizedForLog(first)]))
            }
            return UsageError(L("unknown option '{option}'; did you mean '{suggestion}'?", ["option": sanitizedForLog(first), "suggestion": suggestion]))
        }
        var typed = [first]
        var known = Set(commands.map { $0.path[0] } + commands.flatMap { $0.path.count == 1 ? $0.aliases : [] } + ["help"])
        if commands.contains(where: { $0.path.count > 1 && $0.path[0] == first }), rest.count > 1 {
            typed = [first, rest[1]]
            known = Set(commands.filter { $0.path.count > 1 && $0.path[0] == first }.map { $0.path[1] })
        }
        let shown = sanitizedForLog(typed.joined(separator: " "))
        guard let suggestion = Suggestion.closest(to: typed[typed.count - 1], among: Array(known).sorted()) else {
            return UsageError(L("unknown command '{command}'", ["command": shown]))
        }
        let meant = (typed.dropLast() + [suggestion]).joined(separator: " ")
        return UsageError(L("unknown command '{command}'; did you mean '{suggestion}'?", ["command": shown, "suggestion": meant]))
    }

    static func splitOption(_ word: String) -> (String, String?) {
        guard let eq = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<eq]), String(word[word.index(after: eq)...]))
    }
}

/// "Did you mean ...?": the known word closest to a mistyped one.
enum Suggestion {
    /// The candidate `word` most likely stands for: the only one it is a prefix of (at least 3
    /// characters typed), else the nearest by edit distance (a swap of two neighbours counts as
    /// one edit) when it is at most 1 for words of up to 4 characters and 2 for longer ones; nil
    /// when none is close or two are equally close.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let typed = Array(word.lowercased().unicodeScalars)
        guard !typed.isEmpty, typed.count <= 64 else { return nil }
        let prefixed = candidates.filter { $0.hasPrefix(word) }
        if word.count >= 3 && prefixed.count == 1 { return prefixed[0] }
        let limit = typed.count <= 4 ? 1 : 2
        let scored = candidates.map { ($0, distance(typed, Array($0.unicodeScalars))) }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return nil }
        let nearest = scored.filter { $0.1 == best }
        return nearest.count == 1 ? nearest[0].0 : nil
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and
    /// transpositions of two neighbours, each one edit.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
