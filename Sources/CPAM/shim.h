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
#include <stdlib.h>
#include <string.h>

/// pam_prompt(pamh, style, response, "%s", text): one conversation message.
/// `response` may be NULL for PAM_TEXT_INFO / PAM_ERROR_MSG.
static inline int biounlock_pam_prompt(pam_handle_t *pamh, int style, char **response, const char *text) {
    return pam_prompt(pamh, style, response, "%s", text);
}

/// Wipes a conversation's answer (explicit_bzero: not optimised away) and frees it, as the
/// application allocated it for us; NULL is ignored.
static inline void biounlock_pam_drop_response(char *response) {
    if (response == NULL) return;
    explicit_bzero(response, strlen(response));
    free(response);
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

/* Remembers, for pam_sm_setcred, that biounlock handed this user on to the password.
 * The user name is copied; libpam frees it with pam_end (or when it is replaced). */
#define BIOUNLOCK_PENDING_KEY "biounlock-password-pending"

static void biounlock_free_data(pam_handle_t *pamh, void *data, int status) {
    (void)pamh; (void)status;
    free(data);
}

static inline int biounlock_pam_set_pending_user(pam_handle_t *pamh, const char *user) {
    char *copy = user ? strdup(user) : NULL;
    int rc = pam_set_data(pamh, BIOUNLOCK_PENDING_KEY, copy, biounlock_free_data);
    if (rc != PAM_SUCCESS) free(copy);
    return rc;
}

/// The pending user name, or NULL. Valid until the data is replaced or pam_end.
static inline const char *biounlock_pam_get_pending_user(const pam_handle_t *pamh) {
    const void *data = NULL;
    if (pam_get_data(pamh, BIOUNLOCK_PENDING_KEY, &data) != PAM_SUCCESS) return NULL;
    return (const char *)data;
}

static inline void biounlock_pam_clear_pending_user(pam_handle_t *pamh) {
    (void)pam_set_data(pamh, BIOUNLOCK_PENDING_KEY, NULL, NULL);
}

#endif
