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
/// Which inputs are read, and why each is safe, is one table in docs/SECURITY.md ("What the
/// caller's environment can do").
public enum SessionProbe {
    /// Names that mean "this machine" in PAM_RHOST. sudo sets PAM_RHOST to the local host name.
    /// Loopback *addresses* (127.0.0.1, ::1) are not among them: only network services put an
    /// address there, and a connection to the loopback address can come from anywhere through a
    /// tunnel (`ssh -R`), which is why pam_fprintd treats them as remote too.
    /// (An array, not a Set: a fresh sudo built Set<String>'s type at run time for four
    /// comparisons, a cost bench/RESULTS.md's history of the not-enabled case records.)
    static let localNames: [String] = ["localhost", "localhost.localdomain", "localhost6", "ip6-localhost"]

    /// - Parameters:
    ///   - tty: PAM_TTY; sshd sets "ssh" before authentication.
    ///   - environment: looks a variable up in the PAM environment, then the process environment.
    public static func facts(rhost: String, tty: String = "", environment: (String) -> String?, options: Options,
                             hostname: String? = SessionProbe.hostname()) -> SessionFacts {
        SessionFacts(remote: remoteReason(rhost: rhost, tty: tty, environment: environment, logindPath: options.logindPath, hostname: hostname,
                                          procPath: options.procPath),
                     lidClosed: lidClosed(at: options.lidPath)
                        && externalReader(usbPath: options.lidUSBPath, readerIDsPath: options.lidReaderIDsPath) == nil)
    }

    public static func remoteReason(rhost: String, tty: String = "", environment: (String) -> String?, logindPath: String,
                                    hostname: String?, hostsPath: String = "/etc/hosts", sessionIDPath: String = "/proc/self/sessionid",
                                    procPath: String = "/nonexistent") -> String? {
        if !rhost.isEmpty && !isLocal(rhost, hostname: hostname, hostsPath: hostsPath) { return "PAM_RHOST=\(sanitizedForLog(rhost))" }
        // sshd (auth-pam.c) sets PAM_TTY to "ssh" for every authentication, whatever the client's address.
        if tty == "ssh" { return "PAM_TTY=ssh" }
        // Set by sshd; a user may set them too, which only makes the finger be skipped.
        for name in ["SSH_CONNECTION", "SSH_CLIENT"] {
            if let value = environment(name), !value.isEmpty { return name }
        }
        let id = sessionID(path: sessionIDPath)
        if let id, let remote = logindSaysRemote(sessionID: id, logindPath: logindPath) {
            // logind's word, when it has one, decides: a session it registered as local began at
            // this machine (the audit session id is logind's session id, and nobody can change it).
            return remote ? "logind session \(id) is remote" : nil
        }
        return sshdReason(sessionID: id, procPath: procPath)
    }

    /// When logind knows nothing of the session -- no logind (a container, a distribution without
    /// systemd), or an SSH login whose stack lacks pam_systemd -- sudo's `env_reset` hides
    /// SSH_CONNECTION from the module, and a user typing `sudo` over SSH would get the PIN prompt.
    /// Then the processes say it: an sshd (OpenSSH 9.8 on: sshd-session) among this process's
    /// ancestors, or, for a login that has an audit session (pam_loginuid, in Debian's
    /// /etc/pam.d/sshd), an sshd process in that same session -- which also covers a tmux or
    /// screen server started from that login (its parent is init by then) while the login lasts.
    ///
    /// Security choice: this can only make a session remote, never local, and it is read only
    /// from the kernel's /proc: a process's name there is the name of what it executed, which a
    /// user can change for their own processes only, to look *more* remote; the audit session
    /// id is inherited and only CAP_AUDIT_CONTROL changes it. A user who leaves the ancestry
    /// (setsid and a double fork) and has no audit session escapes it, as they would escape
    /// logind's view without pam_systemd: this is the fallback, logind is the rule.
    static func sshdReason(sessionID id: String?, procPath: String) -> String? {
        if let pid = sshdAncestor(procPath: procPath) { return "an ancestor process is sshd (pid \(pid))" }
        if let id, let pid = sshdInSession(id, procPath: procPath) { return "sshd (pid \(pid)) holds audit session \(id)" }
        return nil
    }

    /// The first process from this one up to init whose name is sshd's; at most 64 levels.
    static func sshdAncestor(procPath: String) -> Int? {
        var pid = "self"
        for _ in 0..<64 {
            guard case .success(let text) = readSmallFile(procPath + "/" + pid + "/stat"), let stat = ProcessStat(text) else { return nil }
            if isSSHD(stat.name) { return stat.pid }
            guard stat.parent > 1 else { return nil }
            pid = String(stat.parent)
        }
        return nil
    }

    /// An sshd process whose audit session is `id`: one pass over `procPath`, at most 32768
    /// processes; read only when logind has no record of the session.
    static func sshdInSession(_ id: String, procPath: String) -> Int? {
        var found: Int?
        var seen = 0
        Directory.forEachEntry(in: procPath) { name in
            seen += 1
            guard seen <= 32768 else { return false }
            guard !name.isEmpty, name.utf8.count <= 10, name.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  case .success(let session) = readSmallFile(procPath + "/" + name + "/sessionid"),
                  OptionParser.trim(withoutNewlines(session)) == id,
                  case .success(let text) = readSmallFile(procPath + "/" + name + "/stat"), let stat = ProcessStat(text),
                  isSSHD(stat.name) else { return true }
            found = stat.pid
            return false
        }
        return found
    }

    /// OpenSSH's daemon: `sshd`, and since 9.8 its per-connection `sshd-session` (and `sshd-auth`).
    static func isSSHD(_ name: Substring) -> Bool {
        name == "sshd" || name.hasPrefix("sshd-")
    }

    /// The fields of /proc/PID/stat this reads: the pid, the name (between the first "(" and the
    /// last ")": a name may hold either), and the parent's pid (the second field after it).
    struct ProcessStat {
        let pid: Int
        let name: Substring
        let parent: Int

        init?(_ text: String) {
            guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close,
                  let pid = Int(OptionParser.trim(text[..<open])) else { return nil }
            let rest = text[text.index(after: close)...].split(separator: " ", maxSplits: 3)
            guard rest.count >= 2, let parent = Int(rest[1]) else { return nil }
            self.pid = pid
            self.name = text[text.index(after: open)..<close]
            self.parent = parent
        }
    }

    /// Whether PAM_RHOST names this machine: one of `localNames`, exactly the host name, or a name
    /// that root's /etc/hosts gives to a loopback address (Debian's installer writes
    /// `127.0.1.1 vm.example.org vm`: the name sudo's `fqdn` option puts in PAM_RHOST). Names
    /// compare byte for byte after folding ASCII case only (as DNS does; a name that differs in
    /// another script's case is not this machine: the finger is skipped, the safe side).
    ///
    /// Security choice: never a prefix. With the host name `vm`, `vm.attacker.example` is another
    /// machine; taking every name that starts with `vm.` as local let it reach the PIN prompt and
    /// count its wrong PINs (docs/SECURITY.md, finding 28.3). /etc/hosts is read only when the name
    /// is none of the others, and only when root owns it and nobody else may write it.
    static func isLocal(_ rhost: String, hostname: String?, hostsPath: String = "/etc/hosts") -> Bool {
        let host = asciiLowercased(rhost)
        if localNames.contains(where: { $0.utf8.elementsEqual(host.utf8) }) { return true }
        if let hostname, !hostname.isEmpty, asciiLowercased(hostname).utf8.elementsEqual(host.utf8) { return true }
        return isLoopbackName(host, hostsPath: hostsPath)
    }

    /// Whether the hosts file gives `host` (ASCII-lowercased) to a loopback address (127.0.0.0/8
    /// or ::1). A file that is not root's, is writable by others, or is larger than 64 KiB gives
    /// no name (the finger is skipped: the safe side).
    static func isLoopbackName(_ host: String, hostsPath: String) -> Bool {
        guard !host.isEmpty, case .success(let text) = TrustedFiles.readText(hostsPath) else { return false }
        let wanted = Array(host.utf8)
        for line in text.utf8.split(separator: 0x0a) {
            let content = line.prefix { $0 != UInt8(ascii: "#") }
            let fields = content.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0d })
            guard let address = fields.first, isLoopbackAddress(address) else { continue }
            for name in fields.dropFirst() where name.count == wanted.count {
                if zip(name, wanted).allSatisfy({ ($0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0) == $1 }) { return true }
            }
        }
        return false
    }

    /// 127.x.y.z (four decimal parts) or ::1, as written in a hosts file.
    static func isLoopbackAddress(_ address: Substring.UTF8View) -> Bool {
        if address.elementsEqual("::1".utf8) { return true }
        let parts = address.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].elementsEqual("127".utf8) else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
    }

    /// The logind session of this process: its audit session id (/proc/self/sessionid), which
    /// logind uses as the session's id where the kernel has audit sessions, and which pam_loginuid
    /// set when the session began (sshd, login, the greeters). It is inherited by every process of
    /// the session and only a process with CAP_AUDIT_CONTROL can change it: nothing the invoking
    /// user sets can name another session.
    ///
    /// Security choice: never XDG_SESSION_ID. su keeps the caller's environment, so a user logged
    /// in over SSH could name a local session there (`XDG_SESSION_ID=2 su bob`) and get bob's PIN
    /// prompt -- a PIN oracle, and bob's counters -- although logind marks their own session remote
    /// (docs/SECURITY.md, finding 28.1). Without an audit session (4294967295: a container, a
    /// kernel without audit) no logind session is read; the other signs (PAM_RHOST, PAM_TTY,
    /// SSH_*) still apply. Only short alphanumeric ids are used (the id becomes part of a path).
    static func sessionID(path: String = "/proc/self/sessionid") -> String? {
        guard case .success(let text) = readSmallFile(path) else { return nil }
        let id = OptionParser.trim(withoutNewlines(text))
        guard !id.isEmpty, id.utf8.count <= 32, id != "4294967295",
              id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) }) else { return nil }
        return id
    }

    /// What logind's file for the session says: remote (REMOTE=1), local, or nil when there is
    /// no such file (no logind, or a session it did not register).
    static func logindSaysRemote(sessionID: String, logindPath: String) -> Bool? {
        guard case .success(let text) = readSmallFile(logindPath + "/" + sessionID) else { return nil }
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

    /// The USB device name (e.g. "3-1.2") of a fingerprint reader plugged into a removable port
    /// -- not a built-in one, so not under the lid -- or nil. Read only when a lid reads closed.
    ///
    /// A reader is a USB device under `usbPath` whose idVendor:idProduct libfprint's udev hwdb
    /// (`readerIDsPath`) lists as supported; it is external when its `removable` attribute, or
    /// that of a hub above it (a dock), reads "removable". That word is the firmware's (ACPI
    /// _UPC/_PLD): ports it does not describe read "unknown", and a reader there counts as
    /// built-in, as before -- the lid then skips it, and `lid=ignore` is the way out. Readers on
    /// SPI or I2C are built in. Whatever these files say only decides whether the finger is
    /// asked for while the lid is closed; nothing is granted by them. Bounded: at most 256
    /// entries, a 64 KiB id list, and hubs 7 deep.
    public static func externalReader(usbPath: String, readerIDsPath: String) -> String? {
        // The USB devices first: a machine with none (no USB bus in sysfs, as in a VM) reads no
        // id list at all -- this runs in every transaction while a lid reads closed.
        var devices: [String] = []
        var seen = 0
        Directory.forEachEntry(in: usbPath) { name in
            seen += 1
            if isUSBDeviceName(name) { devices.append(name) }
            return seen < 256
        }
        guard !devices.isEmpty, let bytes = FileSystem.readRegularFile(readerIDsPath, limit: 64 * 1024) else { return nil }
        let ids = Set(readerIDs(hwdb: String(decoding: bytes, as: UTF8.self)))
        return devices.first { name in
            guard let id = usbID(usbPath + "/" + name), ids.contains(id) else { return false }
            return onRemovablePort(name, usbPath: usbPath)
        }
    }

    /// "vvvv:pppp" (lower-case hex) of each `usb:vVVVVpPPPP*` line in the sections of a libfprint
    /// hwdb headed "# Supported by libfprint driver ..." (not those after "# Known unsupported").
    static func readerIDs(hwdb: String) -> [String] {
        var ids: [String] = []
        var supported = false
        for line in hwdb.split(separator: "\n", omittingEmptySubsequences: true) {
            let bytes = Array(line.utf8)
            if bytes.first == 0x23 {   // "#"
                if line.hasPrefix("# Supported by libfprint driver") { supported = true }
                else if line.hasPrefix("# Known unsupported") { supported = false }
                continue
            }
            // usb:v08FFp1600*
            guard supported, bytes.count >= 15, line.hasPrefix("usb:v"), bytes[9] == 0x70 /* p */ else { continue }
            let vendor = bytes[5..<9], product = bytes[10..<14]
            guard vendor.allSatisfy(isHexDigit), product.allSatisfy(isHexDigit) else { continue }
            ids.append(asciiLowercased(String(decoding: vendor, as: UTF8.self) + ":" + String(decoding: product, as: UTF8.self)))
            if ids.count >= 4096 { break }
        }
        return ids
    }

    /// A USB device's name in sysfs: BUS-PORT[.PORT...] ("3-1", "3-1.2"); not a root hub
    /// ("usb3") nor an interface ("3-1:1.0").
    static func isUSBDeviceName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count <= 32, let dash = bytes.firstIndex(of: 0x2d), dash > 0, dash < bytes.count - 1 else { return false }
        return bytes[..<dash].allSatisfy(isDigit)
            && bytes[(dash + 1)...].allSatisfy { isDigit($0) || $0 == 0x2e }
            && bytes.last.map(isDigit) == true
    }

    /// "vvvv:pppp" from a USB device directory's idVendor and idProduct, or nil.
    static func usbID(_ directory: String) -> String? {
        guard case .success(let vendor) = readSmallFile(directory + "/idVendor"),
              case .success(let product) = readSmallFile(directory + "/idProduct") else { return nil }
        let v = OptionParser.trim(withoutNewlines(vendor)), p = OptionParser.trim(withoutNewlines(product))
        guard v.utf8.count == 4, p.utf8.count == 4, v.utf8.allSatisfy(isHexDigit), p.utf8.allSatisfy(isHexDigit) else { return nil }
        return asciiLowercased(v + ":" + p)
    }

    /// Whether the device `name` or a hub above it ("3-1.2" -> "3-1") sits on a port the
    /// firmware calls removable.
    static func onRemovablePort(_ name: String, usbPath: String) -> Bool {
        var current = Substring(name)
        for _ in 0..<7 {
            if case .success(let text) = readSmallFile(usbPath + "/" + current + "/removable"),
               OptionParser.trim(withoutNewlines(text)) == "removable" { return true }
            guard let dot = current.lastIndex(of: ".") else { return false }
            current = current[..<dot]
        }
        return false
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
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
