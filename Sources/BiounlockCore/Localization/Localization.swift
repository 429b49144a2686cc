import BiounlockSystem
import Synchronization

// Every text biounlock shows a person goes through L(): the module's prompts and messages
// (Policy/Messages.swift) and the CLI's help, reports and errors. Log lines, JSON and config
// words never do. scripts/po extracts the L() calls into po/biounlock.pot; docs/CONTRIBUTING.md
// ("Adding a message", "Translating") says how to add a message and its translations.

/// `msgid` in the user's language (gettext domain `biounlock`), with each `{name}` replaced by
/// its value: `L("PIN or password for {service}: ", ["service": service])`.
///
/// The text must be a literal (StaticString: no interpolation), so that scripts/po finds it;
/// values are never searched for placeholders again. A translation is used only if it is valid
/// UTF-8 and has exactly the placeholders of `msgid`; otherwise (and whenever gettext has none)
/// the English text is.
public func L(_ msgid: StaticString, _ values: KeyValuePairs<String, String> = [:]) -> String {
    Localization.text(msgid, plural: nil, count: 1, values: values)
}

/// The plural form for `count` (dngettext: each language's plural rule), with `{count}` and
/// each `{name}` replaced: `L("1 try left.", plural: "{count} tries left.", count: n)`.
public func L(_ singular: StaticString, plural: StaticString, count: Int,
              _ values: KeyValuePairs<String, String> = [:]) -> String {
    Localization.text(singular, plural: plural, count: count, values: values)
}

/// Where translations come from and whether they may be used now.
///
/// The module never calls setlocale or textdomain: the host set its locale (sudo, su, login and
/// sshd do), and gettext reads it. biounlock only binds its own domain, once per process (again
/// only if `locale_dir=` names another directory), with UTF-8 translations. It speaks English
/// when messages are in the C locale, when the host's character set is not UTF-8 (biounlock's
/// texts are UTF-8; it does not convert them), when LANGUAGE or the locale's name holds a '/', and
/// when any catalog under the directory fails MessageCatalog's checks (glibc would crash or hang
/// on it).
public enum Localization {
    public static let domain = "biounlock"
    public static let defaultDirectory = "/usr/share/locale"
    /// Longer translations are not used (every biounlock text is far shorter).
    static let maximumLength = 2048

    struct State {
        var directory = Localization.defaultDirectory
        /// Per directory: nil when its catalogs passed, or what is wrong with them. (A list, not
        /// a [String: String?]: a process has one directory or two, and the dictionary's type
        /// was built at run time in every fresh sudo with a UTF-8 locale.)
        var verdicts: [(directory: String, problem: String?)] = []
        /// Problems not yet handed to a logger (takeProblem).
        var unreported: [String] = []
    }
    static let state = Mutex(State())

    /// Sets the directory catalogs are read from (`locale_dir=`). Cheap: nothing is read or bound
    /// until a text is translated.
    public static func use(directory: String) {
        state.withLock { $0.directory = directory }
    }

    /// What was found wrong with a catalog directory since the last call, for the caller's log
    /// (the module's syslog); each problem is reported once per process.
    public static func takeProblems() -> [String] {
        state.withLock { s in
            defer { s.unreported = [] }
            return s.unreported
        }
    }

    /// Whether translations may be used now, binding the domain first if needed. Checks the
    /// caller's locale on each call (cheap), the catalogs once per directory and process.
    static func translating() -> Bool {
        guard let name = Gettext.messagesLocaleName(),
              name != "C", name != "POSIX", !name.isEmpty, !name.contains("/"),
              let codeset = Gettext.codeset(), codeset == "UTF-8"
        else { return false }
        if let language = Environment.value("LANGUAGE"), language.contains(UInt8(ascii: "/")) { return false }
        return state.withLock { s in
            let directory = s.directory
            let verdict: String?
            if let known = s.verdicts.first(where: { $0.directory == directory }) {
                verdict = known.problem
            } else {
                verdict = CatalogDirectory.problem(directory, domain: domain)
                s.verdicts.append((directory, verdict))
                if let verdict { s.unreported.append("translations disabled, English only: \(verdict)") }
            }
            return verdict == nil && Gettext.bind(domain: domain, directory: directory)
        }
    }

    /// The caller's language, for biounlock-check (which runs with a cleared environment in the C
    /// locale and speaks for the module in a screen locker that runs PAM as the user): the name of
    /// the locale messages are in and LANGUAGE, as translating() reads them, or empty strings when
    /// the module itself would speak English (C/POSIX, a character set other than UTF-8, a name or
    /// LANGUAGE that is not plain). Only read, never set.
    public static func callerLanguage() -> (locale: String, language: String) {
        guard let name = Gettext.messagesLocaleName(),
              name != "C", name != "POSIX", isPlainLocaleName(name),
              let codeset = Gettext.codeset(), codeset == "UTF-8"
        else { return ("", "") }
        guard let value = Environment.value("LANGUAGE") else { return (name, "") }
        let language = String(decoding: value, as: UTF8.self)
        if language.contains("/") { return ("", "") }   // translating() speaks English then
        return (name, isPlainLanguageList(language) ? language : "")
    }

    /// A locale name as glibc takes it and nothing more: `zh_CN.UTF-8`, `de_DE`, `sr_RS@latin`,
    /// `C.UTF-8` -- ASCII letters, digits and `_ . @ -`, starting with a letter, at most 64 bytes.
    /// Never a path (no '/', no leading '.'), so a name relayed by a caller can only choose a
    /// language, never a file.
    public static func isPlainLocaleName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 64, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_")
            || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "-") }
    }

    /// LANGUAGE as gettext reads it: plain locale names separated by ':' (`zh_TW:zh:en`; empty
    /// ones, which gettext skips, allowed), at most 16 entries and 256 bytes.
    public static func isPlainLanguageList(_ list: String) -> Bool {
        let names = list.split(separator: ":", omittingEmptySubsequences: false)
        return !list.isEmpty && list.utf8.count <= 256 && names.count <= 16
            && names.allSatisfy { $0.isEmpty || isPlainLocaleName(String($0)) }
    }

    static func isLetter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }

    static func text(_ singular: StaticString, plural: StaticString?, count: Int, values: KeyValuePairs<String, String>) -> String {
        let one = string(singular)
        let other = plural.map(string)
        let english = other.map { count == 1 ? one : $0 } ?? one
        var all = Array(values.map { ($0.key, $0.value) })
        if other != nil { all.append(("count", String(count))) }
        if let translated = translation(singular, plural, count: count),
           let usable = checked(translated, english: one, plural: other) {
            return substitute(usable, all)
        }
        return substitute(english, all)
    }

    /// gettext's answer, or nil when it has none (it then returns the msgid itself).
    static func translation(_ singular: StaticString, _ plural: StaticString?, count: Int) -> String? {
        guard translating() else { return nil }
        if let plural {
            return Gettext.translation(domain: domain, string(singular), plural: string(plural),
                                       count: UInt(clamping: max(count, 0)), maximumLength: maximumLength)
        }
        return Gettext.translation(domain: domain, string(singular), maximumLength: maximumLength)
    }

    /// `translated`, if it has the placeholders of the English text: none that the English lacks,
    /// and every one both English forms have ({count} may be left out: "one try left").
    static func checked(_ translated: String, english: String, plural: String?) -> String? {
        let known = Set(placeholders(english) + (plural.map(placeholders) ?? []))
        let required = plural.map { Set(placeholders(english)).intersection(placeholders($0)) } ?? known
        let used = placeholders(translated)
        guard !translated.isEmpty, used.allSatisfy(known.contains), required.isSubset(of: used) else { return nil }
        return translated
    }

    /// The `{name}` placeholders of a text, in order (name: lowercase letters and '_').
    public static func placeholders(_ text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            let name = after.prefix { ($0 >= "a" && $0 <= "z") || $0 == "_" }
            if !name.isEmpty, name.endIndex < after.endIndex, after[name.endIndex] == "}" {
                out.append(String(name))
                rest = after[after.index(after: name.endIndex)...]
            } else {
                rest = after
            }
        }
        return out
    }

    /// Replaces each `{name}` that has a value, in one pass (values are not searched again).
    static func substitute(_ template: String, _ values: [(String, String)]) -> String {
        guard !values.isEmpty, template.contains("{") else { return template }
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            let after = rest[rest.index(after: open)...]
            let name = after.prefix { ($0 >= "a" && $0 <= "z") || $0 == "_" }
            if !name.isEmpty, name.endIndex < after.endIndex, after[name.endIndex] == "}",
               let value = values.first(where: { $0.0 == name })?.1 {
                out += value
                rest = after[after.index(after: name.endIndex)...]
            } else {
                out += "{"
                rest = after
            }
        }
        return out + rest
    }

    static func string(_ s: StaticString) -> String {
        s.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }
}
