// glibc's libintl (gettext) and the locale queries it depends on, for BiounlockCore's
// Localization. Nothing here changes the process's locale: no setlocale, no textdomain.
// The only state touched is the binding of biounlock's own domain (bindtextdomain,
// bind_textdomain_codeset), and only when it differs from what is asked for.
#ifndef BIOUNLOCK_CINTL_SHIM_H
#define BIOUNLOCK_CINTL_SHIM_H
#define _GNU_SOURCE 1
#include <libintl.h>
#include <langinfo.h>
#include <locale.h>
#include <string.h>

/// Binds `domain` to `directory` with UTF-8 translations, each only if it is not so already
/// (bindtextdomain(domain, NULL) and bind_textdomain_codeset(domain, NULL) only read), so that a
/// process binds once however many transactions it runs. 0, or -1 when glibc refused (out of memory).
static inline int biounlock_intl_bind(const char *domain, const char *directory) {
    const char *bound = bindtextdomain(domain, NULL);
    if (bound == NULL || strcmp(bound, directory) != 0) {
        if (bindtextdomain(domain, directory) == NULL) return -1;
    }
    const char *codeset = bind_textdomain_codeset(domain, NULL);
    if (codeset == NULL || strcmp(codeset, "UTF-8") != 0) {
        if (bind_textdomain_codeset(domain, "UTF-8") == NULL) return -1;
    }
    return 0;
}

/// The name of the locale that messages are in (LC_MESSAGES of the calling thread's locale,
/// as gettext itself reads it): "C", "zh_CN.UTF-8", ...
static inline const char *biounlock_intl_messages_locale(void) {
    return nl_langinfo(_NL_LOCALE_NAME(LC_MESSAGES));
}

/// The character set of the calling thread's LC_CTYPE: "UTF-8", "ANSI_X3.4-1968", "ISO-8859-1", ...
static inline const char *biounlock_intl_codeset(void) {
    return nl_langinfo(CODESET);
}

/// dgettext(domain, msgid): the translation, or `msgid` itself (the same pointer) when there is none.
static inline const char *biounlock_intl_dgettext(const char *domain, const char *msgid) {
    return dgettext(domain, msgid);
}

/// dngettext(domain, singular, plural, n): the form for `n` in the catalog's plural rule, or
/// `singular`/`plural` themselves (n == 1 / otherwise) when there is no translation.
static inline const char *biounlock_intl_dngettext(const char *domain, const char *singular, const char *plural,
                                                   unsigned long n) {
    return dngettext(domain, singular, plural, n);
}
#endif
