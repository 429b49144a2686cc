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

    /// tcsetattr(3) with TCSANOW (no TCSAFLUSH: keys typed meanwhile belong to whoever reads next).
    public func setTerminalAttributes(_ attributes: TerminalAttributes) throws(Errno) {
        var settings = attributes.settings
        _ = try system(.tcsetattr) { tcsetattr(rawValue, TCSANOW, &settings) }.get()
    }

    /// tcgetpgrp(3): the terminal's foreground process group. Succeeds only on the caller's
    /// controlling terminal.
    public func terminalForegroundProcessGroup() throws(Errno) -> Int32 {
        try system(.tcgetpgrp) { tcgetpgrp(rawValue) }.get()
    }
}
