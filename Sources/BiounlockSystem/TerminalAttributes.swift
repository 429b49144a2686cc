import CSystem
import Glibc

/// A terminal's settings (termios), as tcgetattr reads them.
public struct TerminalAttributes {
    var settings: termios

    /// These settings with echo, line editing, signal keys and extensions off (ECHO, ICANON,
    /// ISIG, IEXTEN) and reads returning each key (VMIN 1, VTIME 0): a prompt read key by key,
    /// where Ctrl-C arrives as a byte.
    public func keyByKey() -> TerminalAttributes {
        var quiet = settings
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        return TerminalAttributes(settings: quiet)
    }

    /// These settings with echo off but the newline still echoed (ECHO off, ECHONL on): a
    /// passcode typed on a line of its own.
    public func withoutEcho() -> TerminalAttributes {
        var quiet = settings
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        return TerminalAttributes(settings: quiet)
    }

    /// Whether output maps "\n" to CR LF itself (OPOST and ONLCR, the usual case).
    public var mapsNewlineToCRLF: Bool {
        (settings.c_oflag & tcflag_t(OPOST)) != 0 && (settings.c_oflag & tcflag_t(ONLCR)) != 0
    }
}

extension FileDescriptor {
    /// tcgetattr(3).
    public func terminalAttributes() throws(Errno) -> TerminalAttributes {
        var settings = termios()
        _ = try system(.tcgetattr) { tcgetattr(rawValue, &settings) }.get()
        return TerminalAttributes(settings: settings)
    }

    /// tcsetattr(3) with TCSANOW (no TCSAFLUSH: keys typed meanwhile belong to whoever reads
    /// next), or TCSAFLUSH with `discardingInput` (the CLI's own prompt: keys typed before it
    /// are dropped).
    public func setTerminalAttributes(_ attributes: TerminalAttributes, discardingInput: Bool = false) throws(Errno) {
        var settings = attributes.settings
        let when = discardingInput ? TCSAFLUSH : TCSANOW
        _ = try system(.tcsetattr) { tcsetattr(rawValue, when, &settings) }.get()
    }

    /// ttyname_r(3): the terminal's device path, nil when this is no terminal.
    public var terminalName: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = buffer.count
        guard case .success = systemReturningError(.ttyname, { ttyname_r(rawValue, &buffer, count - 1) }) else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// tcgetpgrp(3): the terminal's foreground process group. Succeeds only on the caller's
    /// controlling terminal.
    public func terminalForegroundProcessGroup() throws(Errno) -> Int32 {
        try system(.tcgetpgrp) { tcgetpgrp(rawValue) }.get()
    }
}

/// Puts a terminal back when the user presses Ctrl-C while a CLI prompt has echo off: SIGINT
/// restores the settings (a C handler: async-signal-safe), then ends the process as SIGINT would.
/// For the CLI only; the module never touches its host's signals.
public enum InterruptRestore {
    public static func arm(_ descriptor: FileDescriptor, _ attributes: TerminalAttributes) {
        var settings = attributes.settings
        biounlock_arm_terminal_restore(descriptor.rawValue, &settings)
    }

    public static func disarm() {
        biounlock_disarm_terminal_restore()
    }
}
