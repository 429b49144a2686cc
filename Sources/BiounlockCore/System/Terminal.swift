import Glibc

/// What a type-or-touch terminal has read so far.
public enum TerminalInput {
    /// Some keys, no Enter yet.
    case pending
    /// Enter after a non-empty line.
    case line(Secret)
    /// Enter (or Ctrl-D) on an empty line: the user wants the password.
    case empty
    /// Enter after more than `Secret.maximumLength` bytes (refused before any hashing).
    case tooLong
    /// Ctrl-C.
    case cancelled
    /// The terminal went away.
    case closed
}

/// A terminal the policy chain reads itself while the reader waits ("type or touch").
public protocol TypeOrTouchTerminal: AnyObject {
    /// Readable when a key has been pressed.
    var fd: Int32 { get }
    /// Turns echo and line editing off and shows `prompt`.
    func start(prompt: String)
    /// Consumes the keys typed so far, one at a time, stopping at Enter.
    func readAvailable() -> TerminalInput
    /// Shows a message on its own line, then the prompt again.
    func message(_ text: String)
    /// Replaces the prompt shown after later messages (once the reader is done: "PIN or password…").
    func changePrompt(_ prompt: String)
    /// Waits until a key can be read, at most until `deadline`; false when none came.
    func waitForKey(until deadline: Deadline) -> Bool
    /// Restores the terminal exactly as it was (with `cancelled`, after echoing "^C").
    func finish(cancelled: Bool)
    /// Delivers the SIGINT that Ctrl-C would have sent, as the caller's own password prompt
    /// would. The chain calls it last, once the attempt's audit row is written.
    func deliverInterrupt()
}

/// The controlling terminal, used for type-or-touch only when the caller's conversation is that
/// same terminal in the foreground: standard input is the controlling terminal and this process
/// group owns it. sudo, su and login on a terminal qualify; `sudo -S` (a pipe),
/// graphical greeters, polkit agents, screen lockers, sshd and cron do not, and get the
/// sequential prompts through the PAM conversation.
///
/// Host safety: the terminal is changed with TCSANOW only while the prompt is up and restored
/// with the exact saved settings on every path (no TCSAFLUSH: keys typed after a touch belong to
/// the next program). ISIG is off while reading so Ctrl-C arrives as a byte and the terminal is
/// restored before the signal is delivered. No signal handler is installed, no thread started.
public final class ControllingTerminal: TypeOrTouchTerminal {
    public let fd: Int32
    private var saved: termios
    private var prompt = ""
    private var buffer: [UInt8] = []
    private var overflow = false
    private var active = false
    /// Whether the cursor is at the start of a line (after Enter), so finish knows to end the prompt line.
    private var lineEnded = false

    private init(fd: Int32, saved: termios) {
        self.fd = fd
        self.saved = saved
        buffer.reserveCapacity(Secret.maximumLength + 1)
    }

    deinit {
        if active { finish(cancelled: false) }
        wipe(&buffer)
        close(fd)
    }

    /// The terminal, when the caller's conversation is the foreground terminal; nil otherwise.
    /// - Parameter pamTTY: PAM_TTY; an X display (":0") means a graphical caller.
    public static func forConversation(pamTTY: String) -> ControllingTerminal? {
        if pamTTY.hasPrefix(":") { return nil }
        guard isatty(STDIN_FILENO) != 0 else { return nil }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        // tcgetpgrp on standard input succeeds only when it is our controlling terminal -- the
        // one /dev/tty opens (fstat cannot tell: /dev/tty is a device of its own) -- and equals
        // our process group only when we are in the foreground. We read through our own open of
        // /dev/tty so O_NONBLOCK never touches the caller's file description.
        var settings = termios()
        let pgrp = getpgrp()
        guard tcgetpgrp(STDIN_FILENO) == pgrp, tcgetpgrp(fd) == pgrp, tcgetattr(fd, &settings) == 0 else {
            close(fd)
            return nil
        }
        return ControllingTerminal(fd: fd, saved: settings)
    }

    public func start(prompt: String) {
        self.prompt = prompt
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        active = tcsetattr(fd, TCSANOW, &quiet) == 0
        write(prompt)
    }

    public func readAvailable() -> TerminalInput {
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .pending }
            if n <= 0 { return .closed }
            switch byte {
            case 0x0a, 0x0d: // Enter: stop here, the next key belongs to whoever reads next
                write(newline)
                lineEnded = true
                defer { wipe(&buffer); overflow = false }
                if overflow { return .tooLong }
                if buffer.isEmpty { return .empty }
                return Secret(bytes: buffer).map(TerminalInput.line) ?? .tooLong
            case 0x03:
                return .cancelled
            case 0x04 where buffer.isEmpty:
                write(newline)
                lineEnded = true
                return .empty
            case 0x7f, 0x08:
                // Erase one character (all bytes of a UTF-8 sequence).
                while let last = buffer.popLast(), last & 0xC0 == 0x80 {}
            case 0x15:
                wipe(&buffer)
                buffer.removeAll(keepingCapacity: true)
                overflow = false
            case 0x00..<0x20:
                break
            default:
                if buffer.count < Secret.maximumLength { buffer.append(byte) } else { overflow = true }
            }
            byte = 0
        }
    }

    public func changePrompt(_ prompt: String) { self.prompt = prompt }

    public func message(_ text: String) {
        write(newline + text + newline + prompt)
    }

    public func finish(cancelled: Bool) {
        guard active else { return }
        active = false
        // Keys already typed at our prompt were ours (a passcode half typed when the finger
        // matched): drain them so they never reach the next program.
        var byte: UInt8 = 0
        while Glibc.read(fd, &byte, 1) == 1 {}
        byte = 0
        wipe(&buffer)
        _ = tcsetattr(fd, TCSANOW, &saved)
        if cancelled {
            write("^C" + newline)
        } else if !lineEnded {
            write("\n") // after a touch: the caller's next line starts on a line of its own
        }
    }

    public func deliverInterrupt() {
        kill(getpid(), SIGINT)
    }

    public func waitForKey(until deadline: Deadline) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let rc = poll(&pfd, 1, deadline.remaining())
            if rc > 0 { return true }
            if rc == 0 || errno != EINTR { return false }
        }
    }

    /// "\n" when the terminal maps it to CR LF itself (OPOST|ONLCR, the usual case), else "\r\n".
    private var newline: String {
        (saved.c_oflag & tcflag_t(OPOST)) != 0 && (saved.c_oflag & tcflag_t(ONLCR)) != 0 ? "\n" : "\r\n"
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return Glibc.write(fd, base + offset, raw.count - offset)
            }
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&pfd, 1, 1000) > 0 { continue }
            }
            break
        }
        bytes.removeAll()
    }
}
