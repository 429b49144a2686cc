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

/* Remembers, for pam_sm_acct_mgmt and pam_sm_setcred, that biounlock handed this user on to the
 * password, and which verdict of pam_unix the handle held at that moment (see below). The user
 * name is copied; libpam frees the note with pam_end (or when it is replaced). */
#define BIOUNLOCK_PENDING_KEY "biounlock-password-pending"

/* The name under which pam_unix's pam_sm_authenticate leaves its own verdict on the handle for
 * its pam_sm_setcred: a malloc'ed int holding the code it returned (Linux-PAM, pam_unix_auth.c,
 * every return path since it allocates the int first), replaced with each of its
 * authentications. Only read here, never written. */
#define BIOUNLOCK_UNIX_VERDICT_KEY "unix_setcred_return"

struct biounlock_pending {
    /* pam_unix's verdict as the handle held it when biounlock handed on (NULL: none). */
    const void *unix_verdict_before;
    char user[];
};

static void biounlock_free_data(pam_handle_t *pamh, void *data, int status) {
    (void)pamh; (void)status;
    free(data);
}

static inline const void *biounlock_pam_unix_verdict(const pam_handle_t *pamh) {
    const void *data = NULL;
    if (pam_get_data(pamh, BIOUNLOCK_UNIX_VERDICT_KEY, &data) != PAM_SUCCESS) return NULL;
    return data;
}

static inline int biounlock_pam_set_pending_user(pam_handle_t *pamh, const char *user) {
    if (user == NULL) return PAM_BUF_ERR;
    size_t length = strlen(user);
    struct biounlock_pending *note = malloc(sizeof *note + length + 1);
    if (note == NULL) return PAM_BUF_ERR;
    note->unix_verdict_before = biounlock_pam_unix_verdict(pamh);
    memcpy(note->user, user, length + 1);
    int rc = pam_set_data(pamh, BIOUNLOCK_PENDING_KEY, note, biounlock_free_data);
    if (rc != PAM_SUCCESS) free(note);
    return rc;
}

static inline const struct biounlock_pending *biounlock_pam_pending(const pam_handle_t *pamh) {
    const void *data = NULL;
    if (pam_get_data(pamh, BIOUNLOCK_PENDING_KEY, &data) != PAM_SUCCESS) return NULL;
    return (const struct biounlock_pending *)data;
}

/// The pending user name, or NULL. Valid until the data is replaced or pam_end.
static inline const char *biounlock_pam_get_pending_user(const pam_handle_t *pamh) {
    const struct biounlock_pending *note = biounlock_pam_pending(pamh);
    return note ? note->user : NULL;
}

/* 1 when pam_unix authenticated on this handle after biounlock handed on, and said PAM_SUCCESS:
 * its verdict is there, and it is not the one the handle held at the hand-off (pam_unix
 * allocates each verdict while the one before is still held, so a new verdict never has the old
 * one's address). 0 otherwise: no note, no verdict, the old verdict, or a failure. */
static inline int biounlock_pam_unix_succeeded_since_pending(const pam_handle_t *pamh) {
    const struct biounlock_pending *note = biounlock_pam_pending(pamh);
    if (note == NULL) return 0;
    const void *verdict = biounlock_pam_unix_verdict(pamh);
    if (verdict == NULL || verdict == note->unix_verdict_before) return 0;
    return *(const int *)verdict == PAM_SUCCESS;
}

static inline void biounlock_pam_clear_pending_user(pam_handle_t *pamh) {
    (void)pam_set_data(pamh, BIOUNLOCK_PENDING_KEY, NULL, NULL);
}

#endif
