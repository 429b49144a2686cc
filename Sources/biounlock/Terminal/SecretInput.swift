import Glibc
import BiounlockCore

/// Reads passcodes into zeroing `Secret`s: from a terminal without echo, or one line from stdin.
enum SecretInput {
    /// Reads one line from `fd` byte by byte (so nothing after the newline is consumed), at most
    /// `Secret.maximumLength + 1` bytes; the transient buffer is wiped.
    static func readLine(fd: Int32) throws(CommandFailure) -> Secret {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Secret.maximumLength + 2)
        defer { wipe(&bytes) }
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == UInt8(ascii: "\n") { break }
            if bytes.count > Secret.maximumLength { continue } // keep draining the line, keep nothing more
            bytes.append(byte)
        }
        byte = 0
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard let secret = Secret(bytes: bytes) else {
            throw CommandFailure("the passcode is longer than \(Secret.maximumLength) bytes")
        }
        return secret
    }

    /// Prompts on the terminal with echo turned off, restoring the terminal afterwards.
    static func prompt(_ text: String) throws(CommandFailure) -> Secret {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw CommandFailure("no terminal to ask for the passcode; use --stdin") }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { throw CommandFailure("cannot read terminal settings; use --stdin") }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        TerminalRestore.arm(fd: fd, settings: saved)
        // Echo off before the prompt appears: whatever is typed once it is visible is neither
        // echoed nor discarded by TCSAFLUSH.
        _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        _ = text.withCString { write(fd, $0, strlen($0)) }
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &saved)
            TerminalRestore.disarm()
        }
        return try readLine(fd: fd)
    }
}

/// Lines shown on the controlling terminal only -- never on standard output, which scripts and
/// provisioning logs keep -- and erased again where the terminal allows (the drawing of a
/// pattern while it is confirmed).
final class TerminalNotes {
    private let fd: Int32
    /// Whether the terminal understands cursor-up and erase-below (VT100 and every terminal
    /// emulator since; not TERM=dumb).
    private let canErase: Bool

    init?() {
        let fd = open("/dev/tty", O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        self.fd = fd
        let term = getenv("TERM").map { String(cString: $0) } ?? ""
        canErase = !term.isEmpty && term != "dumb"
    }

    deinit { close(fd) }

    /// Writes `text` (which ends with a newline) and returns how many lines it took.
    @discardableResult
    func show(_ text: String) -> Int {
        _ = text.withCString { write(fd, $0, strlen($0)) }
        return text.utf8.filter { $0 == UInt8(ascii: "\n") }.count
    }

    /// Erases the last `lines` lines above the cursor.
    func erase(lines: Int) {
        guard canErase, lines > 0 else { return }
        show("\u{1b}[\(lines)A\r\u{1b}[J")
    }
}

/// Puts the terminal back if the user presses Ctrl-C while echo is off.
enum TerminalRestore {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var settings = termios()

    static func arm(fd: Int32, settings: termios) {
        TerminalRestore.settings = settings
        TerminalRestore.fd = fd
        signal(SIGINT) { sig in
            if TerminalRestore.fd >= 0 { _ = tcsetattr(TerminalRestore.fd, TCSANOW, &TerminalRestore.settings) }
            signal(sig, SIG_DFL)
            raise(sig)
        }
    }

    static func disarm() {
        fd = -1
        signal(SIGINT, SIG_DFL)
    }
}
