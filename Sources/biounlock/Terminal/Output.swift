import BiounlockCore
import BiounlockSystem

/// Where the CLI writes. Errors go to stderr with the program name; results to stdout.
enum Output {
    static func line(_ text: String) {
        print(text)
        StandardOutput.flush()
    }

    static func error(_ text: String) {
        errorLine(paint("biounlock:", red: true) + " " + text)
    }

    /// Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).
    static let colour: Bool = FileDescriptor.standardError.isTerminal && Environment.value("NO_COLOR") == nil

    static func paint(_ text: String, red: Bool) -> String {
        colour ? "\u{1b}[1;31m" + text + "\u{1b}[0m" : text
    }

    /// "warning: ..." on stderr (the text after it comes from the libraries, in English).
    static func warning(_ text: String) {
        error(L("warning: {message}", ["message": text]))
    }

    static func errorLine(_ text: String) {
        try? FileDescriptor.standardError.writeAll(Array((text + "\n").utf8))
    }

    /// Progress lines that should appear at once (enrolment touches).
    static func progress(_ text: String) {
        print(text)
        StandardOutput.flush()
    }
}

/// The libraries' log lines, for an admin at a terminal: warnings and errors on stderr.
final class StderrLogger: Logger {
    /// Also notices and info lines (`verify` shows why a step was skipped).
    let verbose: Bool
    init(verbose: Bool = false) { self.verbose = verbose }

    func log(_ level: LogLevel, _ message: String) {
        switch level {
        case .error, .warning: Output.warning(message)
        case .notice, .info: if verbose { Output.errorLine("  [\(level)] \(message)") }
        case .debug: break
        }
    }
}
