/// A problem found while reading options. Never fatal: the module logs it and carries on
/// with the default for that key (an unknown key is ignored: docs/DESIGN.md).
public struct OptionDiagnostic: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        case unknownKey(String)
        case invalidValue(key: String, accepts: String)
        case malformedLine
        case notAllowedInConfigFile(String)
    }
    public let kind: Kind
    /// "argument 3" or "/etc/security/biounlock.conf:12".
    public let location: String

    public var description: String {
        switch kind {
        case .unknownKey(let key): return "\(location): unknown option '\(key)' ignored"
        case .invalidValue(let key, let accepts): return "\(location): invalid value for '\(key)' (expects \(accepts)); default kept"
        case .malformedLine: return "\(location): not 'key = value'; line ignored"
        case .notAllowedInConfigFile(let key): return "\(location): '\(key)' is only valid as a module argument; ignored"
        }
    }
}

/// The one parser for module arguments (`key=value` words), the config file (`key = value` lines)
/// and the CLI's global options.
public enum OptionParser {
    /// Applies module-argument words such as `policy=biometrics` or `debug` to `options`.
    public static func apply(arguments words: [String], to options: inout Options) -> [OptionDiagnostic] {
        var diagnostics: [OptionDiagnostic] = []
        for (index, word) in words.enumerated() {
            let (key, value) = split(word, separator: "=")
            if let d = apply(key: key, value: value, to: &options, location: "argument \(index + 1)") {
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
            let (key, value) = split(word, separator: "=")
            if key == "config", let d = Options.key(named: "config"), d.apply(&options, value) {
                found = options.configPath
            }
        }
        return found
    }

    /// Applies the text of a config file. `config` may not point to yet another file.
    public static func apply(configText text: String, path: String, to options: inout Options) -> [OptionDiagnostic] {
        var diagnostics: [OptionDiagnostic] = []
        var lineNumber = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            let line = trim(rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "")
            if line.isEmpty { continue }
            let location = "\(path):\(lineNumber)"
            let (rawKey, rawValue) = split(line, separator: "=")
            let key = trim(rawKey)
            let value = rawValue.map(trim)
            if key.isEmpty || key.contains(" ") || value == "" {
                diagnostics.append(OptionDiagnostic(kind: .malformedLine, location: location))
                continue
            }
            if key == "config" {
                diagnostics.append(OptionDiagnostic(kind: .notAllowedInConfigFile(key), location: location))
                continue
            }
            if let d = apply(key: key, value: value, to: &options, location: location) {
                diagnostics.append(d)
            }
        }
        return diagnostics
    }

    static func apply(key: String, value: String?, to options: inout Options, location: String) -> OptionDiagnostic? {
        guard let known = Options.key(named: key) else {
            return OptionDiagnostic(kind: .unknownKey(sanitizedForLog(key)), location: location)
        }
        if let value, value.utf8.count > maximumOptionValueLength {
            return OptionDiagnostic(kind: .invalidValue(key: key, accepts: known.accepts), location: location)
        }
        return known.apply(&options, value) ? nil : OptionDiagnostic(kind: .invalidValue(key: key, accepts: known.accepts), location: location)
    }

    static func split(_ word: String, separator: Character) -> (String, String?) {
        guard let index = word.firstIndex(of: separator) else { return (word, nil) }
        return (String(word[..<index]), String(word[word.index(after: index)...]))
    }

    static func trim(_ s: String) -> String {
        var scalars = Substring(s)
        while let c = scalars.first, c == " " || c == "\t" || c == "\r" { scalars.removeFirst() }
        while let c = scalars.last, c == " " || c == "\t" || c == "\r" { scalars.removeLast() }
        return String(scalars)
    }
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
