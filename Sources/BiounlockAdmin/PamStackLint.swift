import BiounlockCore

/// Reads pam.d service files and finds the mistakes that lock people out or make biounlock
/// useless: the logic behind `biounlock doctor`. Pure: it is given file contents.
public enum PamStackLint {
    public struct Finding: Equatable, Sendable {
        public enum Severity: String, Sendable { case problem, warning }
        public let severity: Severity
        public let file: String
        public let line: Int
        public let message: String
        public let fix: String
    }

    /// One auth line, with `@include`d files expanded.
    struct AuthLine: Equatable {
        let file: String
        let line: Int
        let control: String
        let module: String
        let arguments: [String]

        var moduleName: String {
            String(module.split(separator: "/").last ?? Substring(module))
        }
    }

    public static let recommendedControl = "[success=done ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die]"
    /// The control for a greeter's fingerprint-only stack (gdm-fingerprint, kde-fingerprint): the
    /// finger alone decides, and anything but a match fails this stack (the password stack beside
    /// it is the way in then). `ignore` must not be ignored there: with nothing after the module
    /// that asks for a password, an optional module's success would become the stack's.
    public static let fingerprintOnlyControl = "[success=ok default=die]"

    /// Greeters run these beside the password stack and offer them only for a finger: GDM's
    /// `gdm-fingerprint`, KDE's lock screen `kde-fingerprint` (any `*-fingerprint`).
    public static func isFingerprintOnly(service: String) -> Bool {
        service.hasSuffix("-fingerprint")
    }
    /// What enables biounlock the supported way on Debian: the package's pam-auth-update profile
    /// writes the recommended line into common-auth (with try_first_pass on pam_unix).
    public static let enableCommand = "pam-auth-update --enable biounlock"

    /// The fix for a mistake in a line of `file` of a stack pam-auth-update can reach: the
    /// profile first, a hand edit after. A line in a file pam-auth-update writes (common-*) is
    /// fixed by it alone (a hand edit there is undone by its next run); a service that
    /// includes common-auth gets the profile's line through it (the service's own line goes);
    /// a stack that does not include it is out of the profile's reach: the hand edit alone.
    static func preferringProfile(_ handFix: String, file: String, stack: [AuthLine]) -> String {
        if file.hasPrefix("common-") {
            // TRANSLATORS: `biounlock doctor`'s fix; {command} is "pam-auth-update --enable biounlock", {file} a pam.d file such as common-auth.
            return L("run {command} (with --force if it reports local changes): it writes the recommended lines into {file}, where hand edits are lost at its next run",
                     ["command": enableCommand, "file": file])
        }
        guard stack.contains(where: { $0.file == "common-auth" }) else { return handFix }
        // TRANSLATORS: `biounlock doctor`'s fix; {command} is "pam-auth-update --enable biounlock", {file} the service's pam.d file, {fix} the hand edit.
        return L("run {command} and remove biounlock from {file}: every service that includes common-auth then gets the recommended line; or, by hand in {file}: {fix}",
                 ["command": enableCommand, "file": file, "fix": handFix])
    }

    static let passwordModules: Set<String> = ["pam_unix.so", "pam_sss.so", "pam_ldap.so", "pam_krb5.so", "pam_winbind.so", "pam_systemd_home.so"]

    /// Lints every service in `files` (name -> contents) that uses pam_biounlock.so in its auth stack;
    /// `fingerprintServices` is the configuration's `fingerprint_services` (there the module is
    /// the reader alone by itself: no policy or touch_first is wanted on the line).
    public static func lint(files: [String: String], fingerprintServices: [String] = Options.defaultFingerprintServices) -> [Finding] {
        var findings: [Finding] = []
        for name in files.keys.sorted() {
            let stack = authLines(of: name, files: files, depth: 0)
            // The keep_password line (issue 32) is not the module's line: it decides nothing
            // (always PAM_IGNORE) and belongs after the password module.
            guard let index = stack.firstIndex(where: { $0.moduleName == "pam_biounlock.so" && !$0.arguments.contains("keep_password") }) else { continue }
            // An included file (common-auth) is linted where it is used, not on its own.
            findings += lint(service: name, stack: stack, biounlockIndex: index,
                             readerAlone: fingerprintServices.contains { $0.utf8.elementsEqual(name.utf8) })
        }
        var seen = Set<String>()
        return findings.filter { seen.insert("\($0.file):\($0.line):\($0.message)").inserted }
    }

    static func lint(service: String, stack: [AuthLine], biounlockIndex index: Int, readerAlone: Bool = false) -> [Finding] {
        var findings: [Finding] = []
        let line = stack[index]
        func finding(_ severity: Finding.Severity, _ message: String, _ fix: String) {
            findings.append(Finding(severity: severity, file: line.file, line: line.line, message: "\(service): \(message)",
                                    fix: preferringProfile(fix, file: line.file, stack: stack)))
        }
        if isFingerprintOnly(service: service) {
            return lintFingerprintOnly(service: service, stack: stack, line: line, readerAlone: readerAlone)
        }
        // TRANSLATORS: `biounlock doctor` on a pam.d file; control values (required, success=done,
        // authinfo_unavail=ignore...), module names and the lines to add are PAM's words: keep them.
        let useRecommended = L("use: {line}", ["line": "auth \(recommendedControl) pam_biounlock.so"])
        let control = parseControl(line.control)
        switch control {
        case .simple("required"), .simple("requisite"):
            finding(.problem, L("pam_biounlock.so is '{control}': when the reader is missing, the store is unavailable or the user presses Enter, the whole stack fails and nobody can fall back to the password",
                                ["control": line.control]), useRecommended)
        case .simple("sufficient"):
            finding(.warning, L("pam_biounlock.so is 'sufficient': a wrong biounlock passcode falls through to the password instead of failing, so the passcode lockout can be bypassed by pressing on"),
                    useRecommended)
        case .simple("optional"):
            finding(.problem, L("pam_biounlock.so is 'optional': its success does not end authentication, so users are asked for the password anyway"),
                    useRecommended)
        case .simple(let other):
            finding(.problem, L("unknown control '{control}' for pam_biounlock.so", ["control": other]), useRecommended)
        case .bracket(let actions):
            if actions["success"] == nil || actions["success"] == "ignore" {
                finding(.problem, L("a biounlock success does not end authentication (no success=done/end/N)"), useRecommended)
            }
            for code in ["authinfo_unavail", "ignore"] {
                let action = actions[code] ?? actions["default"] ?? "bad"
                if action == "die" || action == "bad" {
                    let v: KeyValuePairs = ["setting": "\(code)=\(action)"]
                    finding(.problem, code == "ignore"
                                ? L("{setting}: users who have not enabled biometric unlock would fail the whole stack instead of falling back to the password", v)
                                : L("{setting}: no reader, nothing enrolled, a timeout or Enter alone would fail the whole stack instead of falling back to the password", v),
                            L("add {setting} (recommended: {control})", ["setting": "\(code)=ignore", "control": recommendedControl]))
                }
            }
            let unknownUser = actions["user_unknown"] ?? actions["default"] ?? "bad"
            if unknownUser == "die" || unknownUser == "bad" {
                finding(.warning, L("{setting}: a name that is not a user gets no password prompt, so a login prompt tells which names exist",
                                    ["setting": "user_unknown=\(unknownUser)"]),
                        L("add {setting}", ["setting": "user_unknown=ignore"]))
            }
            let unknown = actions["module_unknown"] ?? actions["default"] ?? "bad"
            if unknown == "die" || unknown == "bad" {
                finding(.warning, L("{setting}: if pam_biounlock.so goes missing (a bad upgrade), everyone is locked out", ["setting": "module_unknown=\(unknown)"]),
                        L("add {setting}", ["setting": "module_unknown=ignore"]))
            }
        }

        let later = stack[(index + 1)...]
        let earlier = stack[..<index]
        if let unix = earlier.first(where: { passwordModules.contains($0.moduleName) }) {
            findings.append(Finding(severity: .problem, file: line.file, line: line.line,
                                    message: "\(service): " + L("pam_biounlock.so comes after {module} ({place}): the password is asked first",
                                                                 ["module": unix.moduleName, "place": "\(unix.file):\(unix.line)"]),
                                    fix: preferringProfile(L("move the pam_biounlock.so line before {module} (or before @include common-auth)", ["module": unix.moduleName]),
                                                           file: line.file, stack: stack)))
        } else if let password = later.first(where: { passwordModules.contains($0.moduleName) }) {
            // Text typed at biounlock's prompt that is not the passcode is handed on as
            // PAM_AUTHTOK; without try_first_pass/use_first_pass the password module ignores it and
            // asks again, and people type their password twice.
            if !password.arguments.contains(where: { $0 == "try_first_pass" || $0 == "use_first_pass" }) {
                findings.append(Finding(severity: .problem, file: password.file, line: password.line,
                                        message: "\(service): " + L("{module} after pam_biounlock.so has no try_first_pass: the Unix password typed at biounlock's prompt is asked for again",
                                                                     ["module": password.moduleName]),
                                        fix: preferringProfile(L("add try_first_pass to that {module} line", ["module": password.moduleName]),
                                                               file: password.file, stack: stack)))
            }
        } else {
            finding(.problem, L("no password module after pam_biounlock.so: when the finger and passcode cannot be used, nobody can log in"),
                    L("add '{line}' after the pam_biounlock.so line", ["line": "auth [success=1 default=ignore] pam_unix.so nullok try_first_pass"]))
        }
        if let fprintd = stack.first(where: { $0.moduleName == "pam_fprintd.so" }) {
            findings.append(Finding(severity: .warning, file: fprintd.file, line: fprintd.line,
                                    message: "\(service): " + L("pam_fprintd.so is also in the auth stack: the finger is asked for twice, and fprintd holds the reader"),
                                    fix: L("remove pam_fprintd.so from this stack ({command})", ["command": "pam-auth-update --disable fprintd"])))
        }
        return findings
    }

    /// A fingerprint-only greeter stack: no password module is wanted after the module, and
    /// every result but success must fail the stack. In `fingerprint_services` (`readerAlone`)
    /// the module asks for nothing typed by itself, so the line needs no policy or touch_first.
    static func lintFingerprintOnly(service: String, stack: [AuthLine], line: AuthLine, readerAlone: Bool) -> [Finding] {
        var findings: [Finding] = []
        func finding(_ severity: Finding.Severity, _ message: String, _ fix: String) {
            findings.append(Finding(severity: severity, file: line.file, line: line.line, message: "\(service): \(message)", fix: fix))
        }
        // TRANSLATORS: `biounlock doctor` on a greeter's fingerprint-only pam.d file (gdm-fingerprint,
        // kde-fingerprint): the finger alone unlocks, the greeter's password stack is beside it.
        // Control values, module names, options and the lines to add are PAM's words: keep them.
        let fix = L("use: {line}", ["line": "auth \(fingerprintOnlyControl) pam_biounlock.so sensor=fprintd" + (readerAlone ? "" : " policy=biometrics touch_first=120")])
        switch parseControl(line.control) {
        case .simple("requisite"):
            break
        case .simple(let other):
            finding(.problem, L("pam_biounlock.so is '{control}' in a fingerprint-only stack: a user who has not enabled biometric unlock (PAM_IGNORE) leaves the result to the other modules, and an optional module's success can then unlock without a finger",
                                ["control": other]), fix)
        case .bracket(let actions):
            if actions["success"] == nil || actions["success"] == "ignore" || actions["success"] == "die" || actions["success"] == "bad" {
                finding(.problem, L("a biounlock success does not count in this fingerprint-only stack"), fix)
            }
            for code in ["ignore", "authinfo_unavail", "maxtries", "user_unknown", "module_unknown", "auth_err"] {
                let action = actions[code] ?? actions["default"] ?? "ignore"
                if action != "die" && action != "bad" {
                    finding(.problem, L("{setting} in a fingerprint-only stack: without a finger the result is left to the other modules (pam_permit, an optional module) instead of failing",
                                        ["setting": "\(code)=\(action)"]),
                            L("set {setting}, or {default} ({fix})", ["setting": "\(code)=die", "default": "default=die", "fix": fix]))
                }
            }
        }
        let words = Set(line.arguments)
        if !readerAlone && !words.contains("policy=biometrics") {
            finding(.warning, L("no {option}: in a fingerprint-only stack the biounlock passcode prompt has no place (the password stack beside it asks for the password)",
                                ["option": "policy=biometrics"]),
                    L("add {option} to the pam_biounlock.so line", ["option": "policy=biometrics"]))
        }
        // Without a terminal the module asks for the password after touch_first seconds while the
        // reader waits; in this stack the greeter's password stack beside it is the place for that.
        let value = { (key: String) -> Int? in
            line.arguments.last { $0.hasPrefix(key + "=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
        }
        if !readerAlone && (value("touch_first") ?? 2) < (value("timeout") ?? 10) {
            finding(.warning, L("touch_first is shorter than the timeout: while the reader still waits, the module asks for the password in this fingerprint-only stack, where no module takes it"),
                    L("add {option} to the pam_biounlock.so line (the reader alone until the timeout)", ["option": "touch_first=120"]))
        }
        if words.contains("sensor=libfprint") || words.contains("sensor=simulated") {
            finding(.warning, L("the greeter offers this stack only when fprintd reports prints, and fprintd holds the reader: use the same prints"),
                    L("use {option} (or {other}) on the pam_biounlock.so line", ["option": "sensor=fprintd", "other": "auto"]))
        }
        if let fprintd = stack.first(where: { $0.moduleName == "pam_fprintd.so" }) {
            findings.append(Finding(severity: .warning, file: fprintd.file, line: fprintd.line,
                                    message: "\(service): " + L("pam_fprintd.so and pam_biounlock.so are both in this stack: the finger is asked for twice"),
                                    fix: L("remove the pam_fprintd.so line (biounlock with sensor=fprintd uses the same prints)")))
        }
        return findings
    }

    enum Control: Equatable {
        case simple(String)
        case bracket([String: String])
    }

    static func parseControl(_ text: String) -> Control {
        guard text.hasPrefix("[") else { return .simple(text) }
        var actions: [String: String] = [:]
        for word in text.dropFirst().dropLast().split(separator: " ") {
            let kv = word.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { actions[String(kv[0]).lowercased()] = String(kv[1]).lowercased() }
        }
        return .bracket(actions)
    }

    /// The auth lines of a service, `@include` and `auth include|substack` expanded (bounded depth).
    static func authLines(of name: String, files: [String: String], depth: Int) -> [AuthLine] {
        guard depth < 8, let text = files[name] else { return [] }
        var out: [AuthLine] = []
        for (number, raw) in logicalLines(text) {
            let words = tokens(raw)
            guard let first = words.first else { continue }
            if first == "@include", words.count > 1 {
                out += authLines(of: words[1], files: files, depth: depth + 1)
                continue
            }
            let type = first.hasPrefix("-") ? String(first.dropFirst()) : first
            guard type == "auth", words.count >= 3 else { continue }
            if words[1] == "include" || words[1] == "substack" {
                out += authLines(of: words[2], files: files, depth: depth + 1)
                continue
            }
            out.append(AuthLine(file: name, line: number, control: words[1], module: words[2], arguments: Array(words.dropFirst(3))))
        }
        return out
    }

    /// Lines without comments, with backslash continuations joined, numbered from 1.
    static func logicalLines(_ text: String) -> [(Int, String)] {
        var out: [(Int, String)] = []
        var pending = ""
        var start = 0
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if pending.isEmpty { start = index + 1 }
            var body = String(line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            if body.hasSuffix("\\") {
                body.removeLast()
                pending += body + " "
                continue
            }
            out.append((start, pending + body))
            pending = ""
        }
        return out
    }

    /// Whitespace-separated words, a `[...]` control (which may contain spaces) kept whole.
    static func tokens(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var depth = 0
        for c in line {
            if c == "[" { depth += 1 }
            if c == "]" { depth = max(0, depth - 1) }
            if (c == " " || c == "\t") && depth == 0 {
                if !current.isEmpty { words.append(current); current = "" }
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }
}
