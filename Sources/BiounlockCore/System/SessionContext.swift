import BiounlockSystem

/// Facts about the session that decide whether the finger is asked for at all.
public struct SessionFacts: Equatable, Sendable {
    /// Why the session looks remote (for the log), or nil when it looks local.
    public var remote: String?
    public var lidClosed: Bool
    public init(remote: String? = nil, lidClosed: Bool = false) { self.remote = remote; self.lidClosed = lidClosed }
}

/// Reads the session facts. Everything the caller controls (environment, PAM_RHOST) can only make
/// biounlock *skip* the finger, never grant anything: a forged value fails towards the password.
public enum SessionProbe {
    /// Names that mean "this machine" in PAM_RHOST. sudo sets PAM_RHOST to the local host name.
    /// Loopback *addresses* (127.0.0.1, ::1) are not among them: only network services put an
    /// address there, and a connection to the loopback address can come from anywhere through a
    /// tunnel (`ssh -R`), which is why pam_fprintd treats them as remote too.
    /// (An array, not a Set: a fresh sudo built Set<String>'s type at run time for four
    /// comparisons, about 0.07 ms.)
    static let localNames: [String] = ["localhost", "localhost.localdomain", "localhost6", "ip6-localhost"]

    /// - Parameters:
    ///   - tty: PAM_TTY; sshd sets "ssh" before authentication.
    ///   - environment: looks a variable up in the PAM environment, then the process environment.
    public static func facts(rhost: String, tty: String = "", environment: (String) -> String?, options: Options,
                             hostname: String? = SessionProbe.hostname()) -> SessionFacts {
        SessionFacts(remote: remoteReason(rhost: rhost, tty: tty, environment: environment, logindPath: options.logindPath, hostname: hostname),
                     lidClosed: lidClosed(at: options.lidPath))
    }

    public static func remoteReason(rhost: String, tty: String = "", environment: (String) -> String?, logindPath: String,
                                    hostname: String?) -> String? {
        if !rhost.isEmpty && !isLocal(rhost, hostname: hostname) { return "PAM_RHOST=\(sanitizedForLog(rhost))" }
        // sshd (auth-pam.c) sets PAM_TTY to "ssh" for every authentication, whatever the client's address.
        if tty == "ssh" { return "PAM_TTY=ssh" }
        for name in ["SSH_CONNECTION", "SSH_CLIENT"] {
            if let value = environment(name), !value.isEmpty { return name }
        }
        if let id = sessionID(environment: environment), logindSaysRemote(sessionID: id, logindPath: logindPath) {
            return "logind session \(id) is remote"
        }
        return nil
    }

    /// Host names compare without regard to ASCII case (as DNS does; a name that differs in
    /// another script's case is not this machine: the finger is skipped, the safe side).
    static func isLocal(_ rhost: String, hostname: String?) -> Bool {
        let host = asciiLowercased(rhost)
        if localNames.contains(host) { return true }
        if let hostname, !hostname.isEmpty {
            let own = asciiLowercased(hostname)
            if host == own || host.hasPrefix(own + ".") { return true }
        }
        return false
    }

    /// The logind session id: XDG_SESSION_ID, else the audit session id. Only short alphanumeric
    /// ids are used (the value comes from the caller and becomes part of a path).
    static func sessionID(environment: (String) -> String?) -> String? {
        func valid(_ s: String) -> Bool {
            !s.isEmpty && s.utf8.count <= 32 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) }
        }
        if let id = environment("XDG_SESSION_ID"), valid(id) { return id }
        if case .success(let text) = readSmallFile("/proc/self/sessionid") {
            let id = OptionParser.trim(withoutNewlines(text))
            if valid(id) && id != "4294967295" { return id }
        }
        return nil
    }

    static func logindSaysRemote(sessionID: String, logindPath: String) -> Bool {
        guard case .success(let text) = readSmallFile(logindPath + "/" + sessionID) else { return false }
        return text.split(whereSeparator: \.isNewline).contains("REMOTE=1")
    }

    /// Whether any lid under `path` (e.g. /proc/acpi/button/lid/LID0/state) reads "closed".
    public static func lidClosed(at path: String) -> Bool {
        var seen = 0
        var closed = false
        Directory.forEachEntry(in: path) { name in
            seen += 1
            if name.hasPrefix(".") { return seen < 16 }
            if case .success(let state) = readSmallFile(path + "/" + name + "/state"), contains(state, "closed") {
                closed = true
                return false
            }
            return seen < 16
        }
        return closed
    }

    static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether `text` holds `word`, byte for byte. (`String.contains(String)` comes from
    /// _StringProcessing, whose generic search cost more than reading the file.)
    static func contains(_ text: String, _ word: String) -> Bool {
        let haystack = Array(text.utf8), needle = Array(word.utf8)
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return true
        }
        return false
    }

    public static func hostname() -> String? { Host.name() }

    /// This boot's id, read once per process: a process does not outlive its boot (the chain's
    /// rules and the store's WAL-index mark read it in the same sudo).
    public static let currentBootID: String? = bootID()

    /// The kernel's id for this boot (changes at every boot).
    public static func bootID(path: String = "/proc/sys/kernel/random/boot_id") -> String? {
        guard case .success(let text) = readSmallFile(path) else { return nil }
        let id = OptionParser.trim(withoutNewlines(text))
        return id.isEmpty ? nil : id
    }
}

/// `text` without its "\n" bytes (a byte filter: the Character one breaks graphemes).
func withoutNewlines(_ text: String) -> String {
    String(decoding: text.utf8.filter { $0 != 0x0a }, as: UTF8.self)
}

/// Reads at most 4 KiB of a kernel or runtime file (no trust checks: these only ever make
/// biounlock skip the finger).
func readSmallFile(_ path: String) -> Result<String, FileTrustProblem> {
    do throws(Errno) {
        let file = try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .noControllingTerminal])
        guard try file.descriptor.status().kind == .regular else { return .failure(.notRegularFile(path)) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = try file.descriptor.read(into: &buffer)
        return .success(String(decoding: buffer.prefix(n), as: UTF8.self))
    } catch {
        return .failure(.unreadable(path, error))
    }
}
