// One PAM transaction as a client (an application, not a module): biounlockd's re-authentication
// worker checks a typed secret against the PAM service /etc/pam.d/biounlock-reauth.
#ifndef BIOUNLOCK_PAM_CLIENT_H
#define BIOUNLOCK_PAM_CLIENT_H
#include <stddef.h>

/// What biounlock_pam_check reports: the codes of pam_authenticate and pam_acct_mgmt (Linux-PAM's
/// values; -1 when the step did not run), and how many hidden prompts the stack showed.
struct biounlock_pam_result {
    int start;
    int authenticate;
    int account;
    int prompts;
};

/// Runs pam_start (pam_start_confdir when `confdir` is not NULL) for `service` and `user`, then
/// pam_authenticate(PAM_SILENT | PAM_DISALLOW_NULL_AUTHTOK) and, if that succeeded,
/// pam_acct_mgmt(PAM_SILENT), and pam_end. The conversation answers every hidden prompt
/// (PAM_PROMPT_ECHO_OFF), at most 4 of them, with a copy of `secret` (`length` bytes, no NUL
/// inside); a visible prompt (PAM_PROMPT_ECHO_ON: "login:") or a fifth hidden one fails the
/// conversation; messages are read and dropped. PAM_RUSER is set to `user` (the caller proves
/// who they are, for themselves). pam_setcred is never called: nothing is established.
/// Returns 0 when both steps returned PAM_SUCCESS, 1 otherwise.
int biounlock_pam_check(const char *service, const char *user, const char *confdir,
                        const unsigned char *secret, size_t length, struct biounlock_pam_result *result);

/// PAM_SUCCESS (0 in Linux-PAM), for the Swift side.
int biounlock_pam_success(void);
#endif
