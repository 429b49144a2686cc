import BiounlockSystem

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
    private let terminal: OwnedDescriptor
    public var fd: Int32 { terminal.rawValue }
    private let saved: TerminalAttributes
    private var prompt = ""
    private var buffer: [UInt8] = []
    private var overflow = false
    private var active = false
    /// Whether the cursor is at the start of a line (after Enter), so finish knows to end the prompt line.
    private var lineEnded = false

    private init(terminal: consuming OwnedDescriptor, saved: TerminalAttributes) {
        self.terminal = terminal
        self.saved = saved
        buffer.reserveCapacity(Secret.maximumLength + 1)
    }

    deinit {
        if active { finish(cancelled: false) }
        wipe(&buffer)
    }

    /// The terminal, when the caller's conversation is the foreground terminal; nil otherwise.
    /// - Parameter pamTTY: PAM_TTY; an X display (":0") means a graphical caller.
    public static func forConversation(pamTTY: String) -> ControllingTerminal? {
        if pamTTY.hasPrefix(":") { return nil }
        guard FileDescriptor.standardInput.isTerminal else { return nil }
        guard let tty = try? FileDescriptor.open("/dev/tty", .readWrite, options: [.noControllingTerminal, .nonBlocking]) else {
            return nil
        }
        // tcgetpgrp on standard input succeeds only when it is our controlling terminal -- the
        // one /dev/tty opens (fstat cannot tell: /dev/tty is a device of its own) -- and equals
        // our process group only when we are in the foreground. We read through our own open of
        // /dev/tty so O_NONBLOCK never touches the caller's file description.
        let pgrp = ProcessIdentity.processGroup
        guard (try? FileDescriptor.standardInput.terminalForegroundProcessGroup()) == pgrp,
              (try? tty.descriptor.terminalForegroundProcessGroup()) == pgrp,
              let settings = try? tty.descriptor.terminalAttributes() else { return nil }
        return ControllingTerminal(terminal: tty, saved: settings)
    }

    public func start(prompt: String) {
        self.prompt = prompt
        active = (try? terminal.descriptor.setTerminalAttributes(saved.keyByKey())) != nil
        write(prompt)
    }

    public func readAvailable() -> TerminalInput {
        while true {
            let read: UInt8?
            do throws(Errno) {
                read = try terminal.descriptor.readByte()
            } catch {
                return error.code == .wouldBlock ? .pending : .closed
            }
            guard var byte = read else { return .closed }
            defer { byte = 0 }
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
        // matched): drain them so they never reach the next program (the descriptor is
        // nonblocking: EAGAIN ends it).
        while (try? terminal.descriptor.readByte()) != nil {}
        wipe(&buffer)
        _ = try? terminal.descriptor.setTerminalAttributes(saved)
        if cancelled {
            write("^C" + newline)
        } else if !lineEnded {
            write("\n") // after a touch: the caller's next line starts on a line of its own
        }
    }

    public func deliverInterrupt() {
        try? Signal.interrupt.send(to: ProcessIdentity.processID)
    }

    public func waitForKey(until deadline: Deadline) -> Bool {
        (try? Poll.wait(terminal.descriptor, for: .readable, until: deadline)) != nil
    }

    /// "\n" when the terminal maps it to CR LF itself (OPOST|ONLCR, the usual case), else "\r\n".
    private var newline: String { saved.mapsNewlineToCRLF ? "\n" : "\r\n" }

    /// Writes `text`, waiting up to a second for room when the terminal is full (its descriptor
    /// is nonblocking); what does not fit then is dropped.
    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            do throws(Errno) {
                let n = try terminal.descriptor.write(bytes, from: offset)
                guard n > 0 else { break }
                offset += n
            } catch {
                guard error.code == .wouldBlock,
                      (try? Poll.wait(terminal.descriptor, for: .writable, until: .after(milliseconds: 1000))) != nil
                else { break }
            }
        }
    }
}
