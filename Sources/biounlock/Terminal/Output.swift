import Glibc

/// Where the CLI writes. Errors go to stderr with the program name; results to stdout.
enum Output {
    static func line(_ text: String) {
        print(text)
        fflush(stdout)
    }

    static func error(_ text: String) {
        errorLine(paint("biounlock:", red: true) + " " + text)
    }

    /// Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).
    static let colour: Bool = isatty(STDERR_FILENO) != 0 && getenv("NO_COLOR") == nil

    static func paint(_ text: String, red: Bool) -> String {
        colour ? "\u{1b}[1;31m" + text + "\u{1b}[0m" : text
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
