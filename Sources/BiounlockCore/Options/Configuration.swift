import BiounlockSystem

/// Loads the effective options: defaults, then the config file, then module arguments
/// (which win). Shared by the module and the CLI so both read the same settings.
public enum Configuration {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The config file exists but is not trusted (symlink, FIFO, not root's, writable by others).
        case untrustedConfig(FileTrustProblem)
        public var description: String {
            switch self {
            case .untrustedConfig(let problem): return "config refused: \(problem)"
            }
        }
    }

    public struct Loaded {
        public var options: Options
        public var diagnostics: [OptionDiagnostic]
        /// Informational notes (e.g. an explicitly named config file that does not exist).
        public var notes: [String]

        public init(options: Options, diagnostics: [OptionDiagnostic] = [], notes: [String] = []) {
            self.options = options; self.diagnostics = diagnostics; self.notes = notes
        }

        /// What loading found, to the log of the process that runs on these options (the module,
        /// the checker, biounlockd): each diagnostic a warning, each note a notice. (The CLI
        /// prints its diagnostics to the admin instead.)
        public func report(to logger: Logger) {
            for diagnostic in diagnostics { logger.log(.warning, diagnostic.description) }
            for note in notes { logger.log(.notice, note) }
        }
    }

    /// - Parameters:
    ///   - arguments: module arguments (`key=value` words); for the CLI, its global options as words.
    ///   - readFile: reads a trusted file (TrustedFiles.readText in production).
    ///   - fprintdService: the installed fprintd D-Bus service file, which `sensor=auto` looks for.
    public static func load(arguments: [String],
                            readFile: (String) -> Result<String, FileTrustProblem> = { TrustedFiles.readText($0) },
                            fprintdService: () -> String? = { SensorSelection.installedFprintdService() }) -> Result<Loaded, Failure> {
        var options = Options()
        var origins = OptionOrigins()
        var diagnostics: [OptionDiagnostic] = []
        var notes: [String] = []
        let explicitPath = OptionParser.configPath(in: arguments)
        let path = explicitPath ?? Options.defaultConfigPath
        switch readFile(path) {
        case .success(let text):
            diagnostics += OptionParser.apply(configText: text, path: path, to: &options, origins: &origins)
        case .failure(.missing):
            // No config file is a normal installation; a named one that is missing is worth a note.
            if explicitPath != nil { notes.append("config file \(path) does not exist; using defaults") }
        case .failure(let problem):
            // A config file we cannot trust could point db= at a store an attacker wrote.
            return .failure(.untrustedConfig(problem))
        }
        diagnostics += OptionParser.apply(arguments: arguments, to: &options, origins: &origins)
        options.configPath = path
        options = SensorSelection.resolve(options, fprintdService: fprintdService)
        return .success(Loaded(options: options, diagnostics: diagnostics, notes: notes))
    }
}
