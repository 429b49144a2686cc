import BiounlockCore
import BiounlockSystem

/// The CLI's language: the locale of its environment (main calls setlocale), catalogs from
/// `locale_dir` of the config file (default /usr/share/locale), English with --json.
enum CLILocale {
    /// `locale_dir` from the config file the command line names (--config), read before the
    /// command line is parsed so that parsing errors are translated too. Any problem with the
    /// file is left to the command, which reports it; here it only means the default directory.
    static func directory(arguments: [String]) -> String {
        var words: [String] = []
        var index = 0
        while index < arguments.count {
            let arg = arguments[index]
            if arg == "--config", index + 1 < arguments.count {
                words.append("config=" + arguments[index + 1])
                index += 1
            } else if arg.hasPrefix("--config=") {
                words.append("config=" + arg.dropFirst("--config=".count))
            }
            index += 1
        }
        guard case .success(let loaded) = Configuration.load(arguments: words) else { return Localization.defaultDirectory }
        return loaded.options.localeDir
    }

    /// --json: everything printed from here on is English (JSON values, warnings and errors
    /// alike), whatever the environment's language. The CLI's own locale, not a host's.
    static func english() {
        LocaleSetting.set(.messages, to: "C")
    }
}
