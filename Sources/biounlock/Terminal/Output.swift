import Glibc
import BiounlockCore

/// Where the CLI writes. Errors go to stderr with the program name; results to stdout.
enum Output {
    static func line(_ text: String) {
        print(text)
        fflush(stdout)
    }

    static func error(_ text: String) {
        errorLine("biounlock: \(text)")
    }

    static func errorLine(_ text: String) {
        fputs(text + "\n", stderr)
    }

    /// Progress lines that should appear at once (enrolment touches).
    static func progress(_ text: String) {
        print(text)
        fflush(stdout)
    }
}

/// The libraries' log lines, for an admin at a terminal: warnings and errors on stderr.
final class StderrLogger: Logger {
    func log(_ level: LogLevel, _ message: String) {
        switch level {
        case .error, .warning: Output.error("warning: \(message)")
        case .notice, .info, .debug: break
        }
    }
}
