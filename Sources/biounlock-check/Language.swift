import BiounlockCore
import BiounlockSystem

/// The caller's language for the checker's process (CheckerService.useLanguage).
///
/// The checker starts in the C locale with an empty environment (Hardening): that is what keeps
/// the caller's LANG, LC_*, LOCPATH and LANGUAGE out of a setuid-root process. The one thing taken
/// back is the language the module relays, after CheckerService found both names plain (never a
/// path): LC_MESSAGES is set to the caller's locale name and LANGUAGE to its list, as the locker
/// itself has them, so gettext chooses the catalog a root caller's module would. Characters are
/// C.UTF-8 whatever the name says: the module relays a name only when the locker's character set
/// is UTF-8, and biounlock's catalogs are UTF-8. glibc reads the locale from its own directories
/// (LOCPATH is gone, and ignored for setuid programs anyway); a name the system lacks is English.
/// Only this single-threaded program's own state changes, never the module's or the locker's.
enum CheckerLanguage {
    static func use(locale: String, language: String) -> Bool {
        guard Localization.isPlainLocaleName(locale),
              language.isEmpty || Localization.isPlainLanguageList(language) else { return false }
        guard LocaleSetting.set(.characterType, to: "C.UTF-8") || LocaleSetting.set(.characterType, to: locale) else { return false }
        guard LocaleSetting.set(.messages, to: locale) else {
            LocaleSetting.set(.characterType, to: "C")
            return false
        }
        if !language.isEmpty { Environment.set("LANGUAGE", to: language) }
        return true
    }
}
