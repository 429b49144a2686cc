/*
 * pam-harness: runs one real PAM transaction through libpam with pam_start_confdir, so tests
 * load the built pam_biounlock.so exactly as sudo would, without touching /etc/pam.d.
 *
 *   pam-harness --confdir DIR --service NAME --user USER [--answer TEXT]... [--silent] [--setcred]
 *               [--rhost HOST] [--tty TTY] [--env NAME=VALUE]...
 *
 * Conversation: every message is printed as "INFO: ...", "ERROR: ...", "PROMPT_OFF: ..." or
 * "PROMPT_ON: ..."; prompts take the next --answer in order. Special answers:
 *   @NULL    a response whose text is NULL
 *   @NORESP  PAM_SUCCESS with a NULL response array
 *   @FAIL    the conversation returns PAM_CONV_ERR
 *   @BIG     1 MiB of 'a'
 * When the answers run out, prompts get a NULL text (like libpamtest).
 * The last line is "RESULT <code> <NAME>"; with --setcred also "SETCRED <code> <NAME>".
 *
 * Host checks (a PAM module must leave its host as it found it):
 *   --check-host        after pam_end, print "HOST signals=unchanged|changed:N mask=unchanged|changed
 *                       children=none|running|zombie" (signal dispositions and mask compared with
 *                       before pam_start; children the module left behind)
 *   --sigchld reap      act like hosts that reap every child in a SIGCHLD handler (waitpid(-1))
 *   --sigchld ignore    act like hosts that ignore SIGCHLD (children are reaped by the kernel)
 */
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

static const char *answers[64];
static int answer_count = 0;
static int next_answer = 0;

static const char *code_name(int code) {
    switch (code) {
    case PAM_SUCCESS: return "PAM_SUCCESS";
    case PAM_IGNORE: return "PAM_IGNORE";
    case PAM_AUTHINFO_UNAVAIL: return "PAM_AUTHINFO_UNAVAIL";
    case PAM_MAXTRIES: return "PAM_MAXTRIES";
    case PAM_AUTH_ERR: return "PAM_AUTH_ERR";
    case PAM_USER_UNKNOWN: return "PAM_USER_UNKNOWN";
    case PAM_CONV_ERR: return "PAM_CONV_ERR";
    case PAM_SERVICE_ERR: return "PAM_SERVICE_ERR";
    case PAM_SYSTEM_ERR: return "PAM_SYSTEM_ERR";
    case PAM_PERM_DENIED: return "PAM_PERM_DENIED";
    case PAM_MODULE_UNKNOWN: return "PAM_MODULE_UNKNOWN";
    case PAM_ABORT: return "PAM_ABORT";
    case PAM_INCOMPLETE: return "PAM_INCOMPLETE";
    case PAM_CRED_ERR: return "PAM_CRED_ERR";
    case PAM_TRY_AGAIN: return "PAM_TRY_AGAIN";
    default: return "OTHER";
    }
}

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    (void)data;
    struct pam_response *out = calloc((size_t)n, sizeof *out);
    if (!out) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        const char *text = msg[i]->msg ? msg[i]->msg : "(null)";
        switch (msg[i]->msg_style) {
        case PAM_TEXT_INFO: printf("INFO: %s\n", text); break;
        case PAM_ERROR_MSG: printf("ERROR: %s\n", text); break;
        case PAM_PROMPT_ECHO_OFF:
        case PAM_PROMPT_ECHO_ON: {
            printf("%s: %s\n", msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ? "PROMPT_OFF" : "PROMPT_ON", text);
            const char *answer = next_answer < answer_count ? answers[next_answer++] : NULL;
            if (answer && strcmp(answer, "@FAIL") == 0) { free(out); fflush(stdout); return PAM_CONV_ERR; }
            if (answer && strcmp(answer, "@NORESP") == 0) { free(out); *resp = NULL; fflush(stdout); return PAM_SUCCESS; }
            if (answer && strcmp(answer, "@BIG") == 0) {
                size_t size = 1 << 20;
                out[i].resp = malloc(size + 1);
                if (out[i].resp) { memset(out[i].resp, 'a', size); out[i].resp[size] = 0; }
            } else if (answer && strcmp(answer, "@NULL") != 0) {
                out[i].resp = strdup(answer);
            }
            break;
        }
        default: printf("OTHER: %s\n", text); break;
        }
    }
    fflush(stdout);
    *resp = out;
    return PAM_SUCCESS;
}

static struct sigaction dispositions[NSIG];

static void snapshot(struct sigaction *out) {
    for (int s = 1; s < NSIG; s++) {
        memset(&out[s], 0, sizeof out[s]);
        sigaction(s, NULL, &out[s]);
    }
}

static int changed_dispositions(void) {
    struct sigaction now[NSIG];
    snapshot(now);
    int changed = 0;
    for (int s = 1; s < NSIG; s++) {
        int masks_differ = 0;
        /* Only the kernel's 64 signals: glibc leaves the rest of sa_mask uninitialised. */
        for (int m = 1; m < NSIG; m++)
            if (sigismember(&now[s].sa_mask, m) != sigismember(&dispositions[s].sa_mask, m)) masks_differ = 1;
        if (now[s].sa_handler != dispositions[s].sa_handler || now[s].sa_flags != dispositions[s].sa_flags || masks_differ) changed++;
    }
    return changed;
}

static void reap_every_child(int sig) {
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
    errno = saved;
}

int main(int argc, char **argv) {
    const char *confdir = NULL, *service = NULL, *user = NULL, *rhost = NULL, *tty = NULL;
    const char *env[16];
    int env_count = 0;
    int flags = 0, setcred = 0, check_host = 0;
    const char *sigchld = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--confdir") == 0 && i + 1 < argc) confdir = argv[++i];
        else if (strcmp(argv[i], "--service") == 0 && i + 1 < argc) service = argv[++i];
        else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) user = argv[++i];
        else if (strcmp(argv[i], "--answer") == 0 && i + 1 < argc && answer_count < 64) answers[answer_count++] = argv[++i];
        else if (strcmp(argv[i], "--silent") == 0) flags |= PAM_SILENT;
        else if (strcmp(argv[i], "--setcred") == 0) setcred = 1;
        else if (strcmp(argv[i], "--rhost") == 0 && i + 1 < argc) rhost = argv[++i];
        else if (strcmp(argv[i], "--tty") == 0 && i + 1 < argc) tty = argv[++i];
        else if (strcmp(argv[i], "--env") == 0 && i + 1 < argc && env_count < 16) env[env_count++] = argv[++i];
        else if (strcmp(argv[i], "--check-host") == 0) check_host = 1;
        else if (strcmp(argv[i], "--sigchld") == 0 && i + 1 < argc) sigchld = argv[++i];
        else { fprintf(stderr, "pam-harness: unknown or incomplete argument %s\n", argv[i]); return 64; }
    }
    if (!confdir || !service || !user) {
        fprintf(stderr, "usage: pam-harness --confdir DIR --service NAME --user USER [--answer TEXT]... [--silent] [--setcred]\n");
        return 64;
    }
    if (sigchld) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (strcmp(sigchld, "reap") == 0) sa.sa_handler = reap_every_child;
        else if (strcmp(sigchld, "ignore") == 0) sa.sa_handler = SIG_IGN;
        else { fprintf(stderr, "pam-harness: --sigchld takes reap or ignore\n"); return 64; }
        sigaction(SIGCHLD, &sa, NULL);
    }
    sigset_t mask_before, mask_after;
    sigprocmask(SIG_BLOCK, NULL, &mask_before);
    snapshot(dispositions);
    struct pam_conv conv = { conversation, NULL };
    pam_handle_t *pamh = NULL;
    int rc = pam_start_confdir(service, user, &conv, confdir, &pamh);
    if (rc != PAM_SUCCESS) { printf("START %d %s\n", rc, code_name(rc)); return 2; }
    if (rhost) pam_set_item(pamh, PAM_RHOST, rhost);
    if (tty) pam_set_item(pamh, PAM_TTY, tty);
    for (int i = 0; i < env_count; i++) pam_putenv(pamh, env[i]);
    rc = pam_authenticate(pamh, flags);
    printf("RESULT %d %s\n", rc, code_name(rc));
    if (setcred) {
        int cr = pam_setcred(pamh, PAM_ESTABLISH_CRED);
        printf("SETCRED %d %s\n", cr, code_name(cr));
    }
    pam_end(pamh, rc);
    if (check_host) {
        int changed = changed_dispositions();
        sigprocmask(SIG_BLOCK, NULL, &mask_after);
        int status = 0;
        pid_t child = waitpid(-1, &status, WNOHANG);
        const char *children = child == 0 ? "running" : child > 0 ? "zombie" : errno == ECHILD ? "none" : "error";
        if (changed) printf("HOST signals=changed:%d", changed); else printf("HOST signals=unchanged");
        int mask_changed = 0;
        for (int m = 1; m < NSIG; m++)
            if (sigismember(&mask_before, m) != sigismember(&mask_after, m)) mask_changed = 1;
        printf(" mask=%s children=%s\n", mask_changed ? "changed" : "unchanged", children);
    }
    return 0;
}
