import CIntl

/// glibc's gettext and the locale queries it depends on (the CIntl shim), for Core's
/// Localization. Nothing here changes the process's locale or text domain: only the binding of a
/// domain, when it differs from what is asked for.
public enum Gettext {
    /// The name of the locale messages are in (LC_MESSAGES of the calling thread's locale, as
    /// gettext reads it): "C", "zh_CN.UTF-8", ...
    public static func messagesLocaleName() -> String? {
        biounlock_intl_messages_locale().map { String(cString: $0) }
    }

    /// The character set of the calling thread's LC_CTYPE: "UTF-8", "ANSI_X3.4-1968", ...
    public static func codeset() -> String? {
        biounlock_intl_codeset().map { String(cString: $0) }
    }

    /// bindtextdomain and bind_textdomain_codeset(UTF-8), each only if not so already; false
    /// when glibc refused (out of memory).
    public static func bind(domain: String, directory: String) -> Bool {
        biounlock_intl_bind(domain, directory) == 0
    }

    /// dgettext: the translation of `msgid`, or nil when there is none (gettext then returns
    /// the msgid itself), when it is longer than `maximumLength` bytes or not valid UTF-8.
    public static func translation(domain: String, _ msgid: String, maximumLength: Int) -> String? {
        msgid.withCString { one -> String? in
            guard let answer = biounlock_intl_dgettext(domain, one), answer != one else { return nil }
            return checked(answer, maximumLength: maximumLength)
        }
    }

    /// dngettext: the form for `count` in the catalog's plural rule, or nil when there is no
    /// translation (gettext then returns `singular` or `plural` themselves), when it is longer
    /// than `maximumLength` bytes or not valid UTF-8.
    public static func translation(domain: String, _ singular: String, plural: String, count: UInt,
                                   maximumLength: Int) -> String? {
        singular.withCString { one -> String? in
            plural.withCString { other -> String? in
                guard let answer = biounlock_intl_dngettext(domain, one, other, count), answer != one, answer != other else {
                    return nil
                }
                return checked(answer, maximumLength: maximumLength)
            }
        }
    }

    static func checked(_ answer: UnsafePointer<CChar>, maximumLength: Int) -> String? {
        CString.text(answer, maximumLength: maximumLength)
    }
}
