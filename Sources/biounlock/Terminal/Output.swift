import Glibc

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
