import BiounlockCore
import BiounlockSystem

/// Reads passcodes into zeroing `Secret`s: from a terminal without echo, or one line from stdin.
enum SecretInput {
    /// Reads one line from `fd` byte by byte (so nothing after the newline is consumed), at most
    /// `Secret.maximumLength + 1` bytes; the transient buffer is wiped.
    static func readLine(fd: FileDescriptor = .standardInput) throws(CommandFailure) -> Secret {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Secret.maximumLength + 2)
        defer { wipe(&bytes) }
        while true {
            guard var byte = try? fd.readByte() else { break }
            defer { byte = 0 }
            if byte == UInt8(ascii: "\n") { break }
            if bytes.count > Secret.maximumLength { continue } // keep draining the line, keep nothing more
            bytes.append(byte)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard let secret = Secret(bytes: bytes) else {
            throw CommandFailure(L("the passcode is longer than {count} bytes", ["count": String(Secret.maximumLength)]))
        }
        return secret
    }

    /// Prompts on the terminal with echo turned off, restoring the terminal afterwards.
    static func prompt(_ text: String) throws(CommandFailure) -> Secret {
        guard let tty = try? FileDescriptor.open("/dev/tty", .readWrite, options: [.noControllingTerminal]) else {
            throw CommandFailure(L("no terminal to ask for the passcode; use --stdin"))
        }
        guard let saved = try? tty.descriptor.terminalAttributes() else {
            throw CommandFailure(L("cannot read terminal settings; use --stdin"))
        }
        InterruptRestore.arm(tty.descriptor, saved)
        // Echo off before the prompt appears: whatever is typed once it is visible is neither
        // echoed nor discarded by TCSAFLUSH.
        _ = try? tty.descriptor.setTerminalAttributes(saved.withoutEcho(), discardingInput: true)
        _ = try? tty.descriptor.writeAll(Array(text.utf8))
        defer {
            _ = try? tty.descriptor.setTerminalAttributes(saved, discardingInput: true)
            InterruptRestore.disarm()
        }
        return try readLine(fd: tty.descriptor)
    }
}

/// Lines shown on the controlling terminal only -- never on standard output, which scripts and
/// provisioning logs keep -- and erased again where the terminal allows (the drawing of a
/// pattern while it is confirmed).
final class TerminalNotes {
    private let tty: OwnedDescriptor
    /// Whether the terminal understands cursor-up and erase-below (VT100 and every terminal
    /// emulator since; not TERM=dumb).
    private let canErase: Bool

    init?() {
        guard let tty = try? FileDescriptor.open("/dev/tty", .writeOnly, options: [.noControllingTerminal]) else { return nil }
        self.tty = tty
        let term = Environment.value("TERM").map { String(decoding: $0, as: UTF8.self) } ?? ""
        canErase = !term.isEmpty && term != "dumb"
    }

    /// Writes `text` (which ends with a newline) and returns how many lines it took.
    @discardableResult
    func show(_ text: String) -> Int {
        _ = try? tty.descriptor.writeAll(Array(text.utf8))
        return text.utf8.filter { $0 == UInt8(ascii: "\n") }.count
    }

    /// Erases the last `lines` lines above the cursor.
    func erase(lines: Int) {
        guard canErase, lines > 0 else { return }
        show("\u{1b}[\(lines)A\r\u{1b}[J")
    }
}
