// Thin C shims for the parts of libpam that Swift cannot call directly:
// variadic functions (pam_prompt, pam_syslog) and `const void **` out-parameters.
// Nothing here makes a decision; the Swift module owns all policy.
#ifndef BIOUNLOCK_CPAM_SHIM_H
#define BIOUNLOCK_CPAM_SHIM_H

#define PAM_SM_AUTH
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <security/pam_ext.h>
#include <syslog.h>
#include <stddef.h>

/// pam_prompt(pamh, style, response, "%s", text): one conversation message.
/// `response` may be NULL for PAM_TEXT_INFO / PAM_ERROR_MSG.
static inline int biounlock_pam_prompt(pam_handle_t *pamh, int style, char **response, const char *text) {
    return pam_prompt(pamh, style, response, "%s", text);
}

/// pam_syslog(pamh, priority, "%s", text): never passes caller data as a format string.
static inline void biounlock_pam_syslog(const pam_handle_t *pamh, int priority, const char *text) {
    pam_syslog(pamh, priority, "%s", text);
}

/// pam_get_item for the string items (PAM_SERVICE, PAM_TTY, PAM_RHOST, PAM_RUSER).
/// Returns NULL when the item is unset or the call fails.
static inline const char *biounlock_pam_get_string_item(const pam_handle_t *pamh, int item) {
    const void *value = NULL;
    if (pam_get_item(pamh, item, &value) != PAM_SUCCESS) return NULL;
    return (const char *)value;
}

/// pam_get_user without a custom prompt. Returns NULL on failure.
static inline const char *biounlock_pam_get_user(pam_handle_t *pamh, int *status) {
    const char *user = NULL;
    *status = pam_get_user(pamh, &user, NULL);
    return *status == PAM_SUCCESS ? user : NULL;
}

#endif
