/// A problem found while reading options. Never fatal: the module logs it and carries on
/// with the default for that key (an unknown key is ignored: docs/DESIGN.md).
public struct OptionDiagnostic: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        case unknownKey(String)
        case invalidValue(key: String, accepts: String)
        case malformedLine
        case notAllowedInConfigFile(String)
        /// The key was set before in the same place (the pam.d line, or the file), at `earlier`.
        case repeated(key: String, earlier: String)
    }
    public let kind: Kind
    /// "argument 3" or "/etc/security/biounlock.conf:12".
    public let location: String
    /// What is in force for the key afterwards, as said in the line: "the default", "5 (argument 1)".
    public let kept: String
    /// For `repeated`: the value that was set before and is no longer used.
    public let replaced: String

    public init(kind: Kind, location: String, kept: String = "the default", replaced: String = "") {
        self.kind = kind; self.location = location; self.kept = kept; self.replaced = replaced
    }

    public var description: String {
        switch kind {
        case .unknownKey(let key): return "\(location): unknown option '\(key)' ignored"
        case .invalidValue(let key, let accepts): return "\(location): invalid value for '\(key)' (expects \(accepts)); keeping \(kept)"
        case .malformedLine: return "\(location): not 'key = value'; line ignored"
        case .notAllowedInConfigFile(let key): return "\(location): '\(key)' is only valid as a module argument; ignored"
        case .repeated(let key, let earlier): return "\(location): '\(key)' given again (also \(earlier)); using \(kept), not \(replaced)"
        }
    }
}

/// Where each key's value in force came from, so that a diagnostic can say truthfully which value
/// is kept: the default, or the value set at a location. Shared across the config file and the
/// module arguments by Configuration.load.
public struct OptionOrigins: Sendable {
    struct Origin: Sendable {
        let key: String
        /// "arguments" or the config file's path: a key set twice in one source is a repeat.
        let source: String
        /// The argument's number or the file's line: the location's text is made only when a
        /// diagnostic shows it.
        let position: Int
        var location: String { OptionParser.location(source: source, position: position) }
        /// As given (nil for a bare word such as `debug`).
        let value: String?
        /// The value as a diagnostic shows it (sanitized only when one is written).
        var shown: String { value.map { sanitizedForLog($0) } ?? "(no value)" }
    }
    /// One per key set, the latest. A short list searched in order rather than a dictionary: a
    /// fresh sudo would instantiate a String-keyed hash table's generic metadata for it at run
    /// time, which cost more than the whole search (scripts/bench).
    private var origins: [Origin] = []
    public init() {}

    subscript(key: String) -> Origin? {
        origins.first { $0.key == key }
    }

    mutating func set(_ origin: Origin) {
        if let index = origins.firstIndex(where: { $0.key == origin.key }) {
            origins[index] = origin
        } else {
            origins.append(origin)
        }
    }

    /// "the default" or "VALUE (LOCATION)".
    func kept(_ key: String) -> String {
        self[key].map { "\($0.shown) (\($0.location))" } ?? "the default"
    }
}

/// The one parser for module arguments (`key=value` words), the config file (`key = value` lines)
/// and the CLI's global options.
public enum OptionParser {
    /// Applies module-argument words such as `policy=biometrics` or `debug` to `options`.
    public static func apply(arguments words: [String], to options: inout Options) -> [OptionDiagnostic] {
        var origins = OptionOrigins()
        return apply(arguments: words, to: &options, origins: &origins)
    }

    public static func apply(arguments words: [String], to options: inout Options, origins: inout OptionOrigins) -> [OptionDiagnostic] {
        var diagnostics: [OptionDiagnostic] = []
        for (index, word) in words.enumerated() {
            let (key, value) = split(word)
            if let d = apply(key: key, value: value, to: &options, source: argumentsSource, position: index + 1, origins: &origins) {
                diagnostics.append(d)
            }
        }
        return diagnostics
    }

    /// The value of `config=` among module arguments, if any, so the file can be read first.
    public static func configPath(in words: [String]) -> String? {
        var options = Options()
        var found: String?
        for word in words {
            let (key, value) = split(word)
            if key == "config", let d = Options.key(named: "config"), d.apply(&options, value) {
                found = options.configPath
            }
        }
        return found
    }

    /// Applies the text of a config file. `config` may not point to yet another file.
    public static func apply(configText text: String, path: String, to options: inout Options) -> [OptionDiagnostic] {
        var origins = OptionOrigins()
        return apply(configText: text, path: path, to: &options, origins: &origins)
    }

    public static func apply(configText rawText: String, path: String, to options: inout Options, origins: inout OptionOrigins) -> [OptionDiagnostic] {
        var diagnostics: [OptionDiagnostic] = []
        // A UTF-8 byte-order mark (some editors write one) is not part of the first key.
        var text = Substring(rawText)
        if text.unicodeScalars.first == "\u{FEFF}" { text = Substring(text.unicodeScalars.dropFirst()) }
        forEachSetting(of: text) { lineNumber, line in
            let (rawKey, rawValue) = split(line)
            let key = String(trim(rawKey))
            let value = rawValue.map { String(trim($0)) }
            if key.isEmpty || key.utf8.contains(UInt8(ascii: " ")) || value == "" {
                diagnostics.append(OptionDiagnostic(kind: .malformedLine, location: location(source: path, position: lineNumber)))
                return
            }
            if key == "config" {
                diagnostics.append(OptionDiagnostic(kind: .notAllowedInConfigFile(key), location: location(source: path, position: lineNumber)))
                return
            }
            if let d = apply(key: key, value: value, to: &options, source: path, position: lineNumber, origins: &origins) {
                diagnostics.append(d)
            }
        }
        return diagnostics
    }

    /// Calls `body` with the number (from 1) and the setting of each line of `text` that has
    /// one: the line up to a '#', without leading and trailing blanks (`trim`), when that is
    /// not empty. Comment and blank lines -- most of the shipped file -- are passed over on the
    /// UTF-8 bytes and make no Substring: cutting every line as a Substring by index offsets and
    /// searching it with Collection.firstIndex cost 51,000 more user-space instructions a
    /// transaction (callgrind, 857,000 -> 806,000 for a user without biometric unlock).
    static func forEachSetting(of text: Substring, _ body: (Int, Substring) -> Void) {
        let bytes = text.utf8
        var number = 0
        func lines(_ buffer: UnsafeBufferPointer<UInt8>) {
            forEachLineRange(in: buffer) { start, end in
                number += 1
                var cut = start
                while cut < end, buffer[cut] != UInt8(ascii: "#") { cut += 1 }
                var first = start, last = cut
                while first < last, isBlank(buffer[first]) { first += 1 }
                while first < last, isBlank(buffer[last - 1]) { last -= 1 }
                guard first < last else { return }
                body(number, text[bytes.index(bytes.startIndex, offsetBy: first)..<bytes.index(bytes.startIndex, offsetBy: last)])
            }
        }
        if bytes.withContiguousStorageIfAvailable(lines) == nil {
            Array(bytes).withUnsafeBufferPointer(lines)
        }
    }

    /// The lines of `buffer` as byte offsets [start, end), split where a Character is a newline
    /// (LF, VT, FF, CR, CR LF, NEL, U+2028, U+2029) as `split(whereSeparator: \.isNewline)`
    /// splits them, found by scanning the UTF-8 bytes (a tenth of the cost of the Character
    /// walk). No array of lines is built: in a fresh process each new array type is made at
    /// run time.
    static func forEachLineRange(in buffer: UnsafeBufferPointer<UInt8>, _ body: (Int, Int) -> Void) {
        var i = 0, start = 0
        while i < buffer.count {
            var length = 0
            switch buffer[i] {
            case 0x0a, 0x0b, 0x0c: length = 1
            case 0x0d: length = i + 1 < buffer.count && buffer[i + 1] == 0x0a ? 2 : 1
            case 0xc2: if i + 1 < buffer.count && buffer[i + 1] == 0x85 { length = 2 }
            case 0xe2: if i + 2 < buffer.count && buffer[i + 1] == 0x80 && (buffer[i + 2] == 0xa8 || buffer[i + 2] == 0xa9) { length = 3 }
            default: break
            }
            if length == 0 { i += 1; continue }
            body(start, i)
            i += length
            start = i
        }
        body(start, buffer.count)
    }

    /// The source module arguments are recorded under in OptionOrigins.
    static let argumentsSource = "arguments"

    /// "argument N" or "PATH:LINE", as diagnostics name where a setting was given.
    static func location(source: String, position: Int) -> String {
        source == argumentsSource ? "argument \(position)" : "\(source):\(position)"
    }

    static func apply(key: String, value: String?, to options: inout Options, source: String, position: Int,
                      origins: inout OptionOrigins) -> OptionDiagnostic? {
        func here() -> String { location(source: source, position: position) }
        guard let known = Options.key(named: key) else {
            return OptionDiagnostic(kind: .unknownKey(sanitizedForLog(key)), location: here())
        }
        guard value.map({ $0.utf8.count <= maximumOptionValueLength }) ?? true, known.apply(&options, value) else {
            return OptionDiagnostic(kind: .invalidValue(key: key, accepts: known.accepts), location: here(), kept: origins.kept(key))
        }
        let earlier = origins[key]
        origins.set(OptionOrigins.Origin(key: key, source: source, position: position, value: value))
        guard let earlier, earlier.source == source else { return nil }
        return OptionDiagnostic(kind: .repeated(key: key, earlier: earlier.location), location: here(),
                                kept: origins.kept(key), replaced: earlier.shown)
    }

    /// "key=value" split at the first "=" (nil: no "="). Both this and trim work on the UTF-8
    /// bytes: the Character versions ran a grapheme-breaking pass over every module argument of
    /// every transaction, for separators and blanks that are single ASCII bytes.
    static func split(_ word: String) -> (String, String?) {
        let (key, value) = split(Substring(word))
        return (String(key), value.map(String.init))
    }

    /// The same, as slices of `word` (no copy).
    static func split(_ word: Substring) -> (Substring, Substring?) {
        guard let index = word.utf8.firstIndex(of: UInt8(ascii: "=")) else { return (word, nil) }
        return (word[..<index], word[word.utf8.index(after: index)...])
    }

    /// Without leading and trailing spaces, tabs and carriage returns.
    static func trim(_ s: String) -> String { String(trim(Substring(s))) }

    /// The same, as a slice of `s` (no copy).
    static func trim(_ s: Substring) -> Substring {
        let bytes = s.utf8
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start = bytes.index(after: start) }
        while start < end, isBlank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return s[start..<end]
    }

    /// A space, a tab or a carriage return: what `trim` takes off.
    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0d }
}

/// Makes untrusted text safe for one log line: printable ASCII only, at most 64 characters.
public func sanitizedForLog(_ text: String) -> String {
    var out = ""
    for byte in text.utf8.prefix(64) {
        out.append(byte >= 0x20 && byte < 0x7f ? Character(Unicode.Scalar(byte)) : "?")
    }
    if text.utf8.count > 64 { out += "…" }
    return out
}
