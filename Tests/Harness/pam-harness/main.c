/*
 * pam-harness: runs one real PAM transaction through libpam with pam_start_confdir, so tests
 * load the built pam_biounlock.so exactly as sudo would, without touching /etc/pam.d.
 *
 *   pam-harness --confdir DIR --service NAME --user USER [--answer TEXT]... [--answer-prompt PROMPT=TEXT]...
 *               [--silent] [--acct-mgmt] [--setcred]
 *               [--rhost HOST] [--tty TTY] [--ruser USER] [--setcred-user USER] [--env NAME=VALUE]...
 *               [--syslog] [--count-argon2] [--close-std] [--fail-messages]
 *               [--host-check] [--cycles N] [--auth-count N] [--no-auth] [--fork] [--time]
 *               [--setlocale]
 *
 * Conversation: every message is printed as "INFO: ...", "ERROR: ...", "PROMPT_OFF: ..." or
 * "PROMPT_ON: ..."; prompts take the next --answer in order, except a prompt whose text is exactly
 * PROMPT of an --answer-prompt (up to the first "="; pam_unix's "Password: " in a stack that has it), which takes that
 * TEXT every time it comes, whether or not an earlier module asked first. Special answers:
 *   @NULL    a response whose text is NULL
 *   @NORESP  PAM_SUCCESS with a NULL response array
 *   @FAIL    the conversation returns PAM_CONV_ERR
 *   @BIG     1 MiB of 'a'
 *   @NUL:AB  the bytes A, NUL, B (what a caller that reads binary input passes on)
 *   @HEX:..  the bytes given in hex (e.g. @HEX:c328ff for invalid UTF-8)
 * When the answers run out, prompts get a NULL text (like libpamtest). With --fail-messages the
 * conversation also fails every informational and error message. --user @NONE starts without a
 * user, so that pam_get_user asks for one (the first answer).
 * An info message "@PROBE" (a `pam_echo.so @PROBE` line after the module) is answered by
 * "PROBE: user=<PAM_USER> authtok=set|unset", read inside the module stack, where libpam lets
 * PAM_AUTHTOK be read. "@PROBETOKEN" is answered by "PROBE: authtok=<the text>|(unset)" (issue 32:
 * which password a module handed on; the tests' own fixture passwords only).
 * The last line is "RESULT <code> <NAME>"; with --acct-mgmt also "ACCT <code> <NAME>" (pam_acct_mgmt
 * after authenticating, whatever its result, as polkit's agent helper calls it -- without
 * pam_setcred), with --setcred also "SETCRED <code> <NAME>".
 * --session CMD: after a successful pam_authenticate (and --setcred), pam_open_session, then CMD
 * run by /bin/sh with the PAM environment added, then pam_close_session ("SESSION ...",
 * "SESSION-COMMAND exit N", "SESSION-CLOSE ..."): a login's session modules (pam_gnome_keyring).
 * --ruser sets PAM_RUSER before authenticating; --setcred-user sets PAM_USER before pam_setcred
 * (sudo authenticates the invoking user, then makes PAM_USER the target user).
 *
 * --setlocale calls setlocale(LC_ALL, "") before pam_start, as sudo, su, login and sshd do: the
 * module's messages are then in the language of LANG / LC_ALL / LANGUAGE (without it the harness
 * stays in the C locale, and every message is English whatever the environment says).
 *
 * Test options:
 *   --syslog        print what the module logs (pam_syslog) as "SYSLOG: <text>" instead of
 *                   sending it to syslog (the harness defines syslog's entry points itself)
 *   --count-argon2  print "ARGON2: hash m=KIB t=PASSES" / "ARGON2: verify m=KIB t=PASSES" for
 *                   each Argon2id computation the module asks libsodium for
 *   --close-std     run the transaction with descriptors 0, 1 and 2 closed (output goes to a
 *                   copy of stdout kept at a high descriptor)
 *   --host-check    give the process distinctive host state (signal handlers, signal mask, umask,
 *                   cwd, rlimits), then after every pam_authenticate and after pam_end print
 *                   "HOST: unchanged after X" or "HOST: X changed <what>" (also threads, open
 *                   descriptors and their close-on-exec flags, the environment, the locale and
 *                   the default gettext domain)
 *   --cycles N      run the whole transaction N times in this process; conversation output is
 *                   not printed; prints "RSS: warm=KB end=KB" and "RESULTS: NAME=COUNT ..."
 *   --auth-count N  call pam_authenticate N times on one handle
 *   --no-auth       pam_start and pam_end only
 *   --fork          after authenticating, fork: the child runs pam_setcred and pam_end
 *                   (PAM_DATA_SILENT) and exits; prints "FORK: child exit STATUS"
 *   --time          print "TIME: MS" for each pam_authenticate (monotonic clock, milliseconds),
 *                   and "PROMPT_AT: MS" when each hidden prompt comes (since pam_authenticate began)
 *   --check-host    after pam_end, print "HOST signals=unchanged|changed:N mask=unchanged|changed
 *                   children=none|running|zombie" (signal dispositions and mask compared with before
 *                   pam_start; children the module left behind) -- the libfprint helper's checks
 *   --maps          before pam_end, print "MAPS NAME..." for the libraries of interest mapped into
 *                   this process (libfprint, GLib/GIO, libdbus, libsystemd), or "MAPS none": the
 *                   host must never load what the helper process loads
 *   --sigchld reap  act like hosts that reap every child in a SIGCHLD handler (waitpid(-1))
 *   --sigchld ignore  act like hosts that ignore SIGCHLD (children are reaped by the kernel)
 *   --subreaper     act like hosts that adopt their descendants' orphans (PR_SET_CHILD_SUBREAPER):
 *                   a helper that detached from the module would become this process's child
 */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <libintl.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static FILE *out;
static int quiet = 0;
static int capture_syslog = 0;
static int fail_messages = 0;
static int count_argon2 = 0;
static pam_handle_t *current = NULL;

static const char *answers[64];
static int answer_count = 0;
static int next_answer = 0;
static const char *prompt_texts[16];
static const char *prompt_answers[16];
static int prompt_answer_count = 0;

/* The --answer-prompt answer for this exact prompt text, or NULL. */
static const char *answer_for_prompt(const char *text) {
    for (int i = 0; i < prompt_answer_count; i++)
        if (strcmp(prompt_texts[i], text) == 0) return prompt_answers[i];
    return NULL;
}

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

static void say(const char *fmt, ...) {
    if (quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fflush(out);
}

/* ---- syslog: the module logs through pam_syslog, which calls these ---- */

static void log_line(int priority, const char *fmt, va_list ap) {
    if (!capture_syslog) {
        void (*real)(int, const char *, va_list) = (void (*)(int, const char *, va_list))dlsym(RTLD_NEXT, "vsyslog");
        if (real) real(priority, fmt, ap);
        return;
    }
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) return;
    say("SYSLOG: %s\n", text);
    free(text);
}

void syslog(int priority, const char *fmt, ...) { va_list ap; va_start(ap, fmt); log_line(priority, fmt, ap); va_end(ap); }
void vsyslog(int priority, const char *fmt, va_list ap) { log_line(priority, fmt, ap); }
void __syslog_chk(int priority, int flag, const char *fmt, ...) { (void)flag; va_list ap; va_start(ap, fmt); log_line(priority, fmt, ap); va_end(ap); }
void __vsyslog_chk(int priority, int flag, const char *fmt, va_list ap) { (void)flag; log_line(priority, fmt, ap); }

/* ---- Argon2id: count the work the module asks libsodium for ---- */

static void *sodium(const char *name) {
    void *lib = dlopen("libsodium.so.23", RTLD_NOW | RTLD_NOLOAD);
    void *f = lib ? dlsym(lib, name) : NULL;
    if (!f) { fprintf(stderr, "pam-harness: cannot find %s in libsodium\n", name); abort(); }
    return f;
}

int crypto_pwhash_str_alg(char *out_hash, const char *passwd, unsigned long long len,
                          unsigned long long opslimit, size_t memlimit, int alg) {
    if (count_argon2) say("ARGON2: hash m=%zu t=%llu\n", memlimit / 1024, opslimit);
    int (*real)(char *, const char *, unsigned long long, unsigned long long, size_t, int) =
        (int (*)(char *, const char *, unsigned long long, unsigned long long, size_t, int))sodium("crypto_pwhash_str_alg");
    return real(out_hash, passwd, len, opslimit, memlimit, alg);
}

int crypto_pwhash_str_verify(const char *hash, const char *passwd, unsigned long long len) {
    if (count_argon2) {
        unsigned long m = 0, t = 0;
        const char *params = strstr(hash, "$m=");
        if (params) sscanf(params, "$m=%lu,t=%lu", &m, &t);
        say("ARGON2: verify m=%lu t=%lu\n", m, t);
    }
    int (*real)(const char *, const char *, unsigned long long) =
        (int (*)(const char *, const char *, unsigned long long))sodium("crypto_pwhash_str_verify");
    return real(hash, passwd, len);
}

/* ---- the conversation ---- */

static char *decode_answer(const char *answer) {
    if (strcmp(answer, "@BIG") == 0) {
        size_t size = 1 << 20;
        char *r = malloc(size + 1);
        if (r) { memset(r, 'a', size); r[size] = 0; }
        return r;
    }
    if (strncmp(answer, "@NUL:", 5) == 0) {
        /* A C string cannot carry the NUL past itself: the module sees what comes before it. */
        size_t n = strlen(answer + 5);
        char *r = calloc(n + 2, 1);
        if (r && n > 0) { r[0] = answer[5]; memcpy(r + 2, answer + 6, n - 1); }
        return r;
    }
    if (strncmp(answer, "@HEX:", 5) == 0) {
        size_t n = strlen(answer + 5) / 2;
        char *r = calloc(n + 1, 1);
        for (size_t i = 0; r && i < n; i++) {
            unsigned v = 0;
            sscanf(answer + 5 + 2 * i, "%2x", &v);
            r[i] = (char)v;
        }
        return r;
    }
    return strdup(answer);
}

static int timed = 0;
static struct timespec auth_started;

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    (void)data;
    struct pam_response *r = calloc((size_t)n, sizeof *r);
    if (!r) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        const char *text = msg[i]->msg ? msg[i]->msg : "(null)";
        if (fail_messages && (msg[i]->msg_style == PAM_TEXT_INFO || msg[i]->msg_style == PAM_ERROR_MSG)) {
            say("FAILED: %s\n", text);
            for (int j = 0; j < i; j++) free(r[j].resp);
            free(r);
            return PAM_CONV_ERR;
        }
        switch (msg[i]->msg_style) {
        case PAM_TEXT_INFO:
            if (strcmp(text, "@PROBETOKEN") == 0 && current) {
                const void *token = NULL;
                int rc = pam_get_item(current, PAM_AUTHTOK, &token);
                say("PROBE: authtok=%s\n", rc == PAM_SUCCESS && token ? (const char *)token : "(unset)");
            } else if (strcmp(text, "@PROBE") == 0 && current) {
                const void *user = NULL, *token = NULL;
                pam_get_item(current, PAM_USER, &user);
                int rc = pam_get_item(current, PAM_AUTHTOK, &token);
                say("PROBE: user=%s authtok=%s\n", user ? (const char *)user : "(null)",
                    rc == PAM_SUCCESS && token ? "set" : "unset");
            } else {
                say("INFO: %s\n", text);
            }
            break;
        case PAM_ERROR_MSG: say("ERROR: %s\n", text); break;
        case PAM_PROMPT_ECHO_OFF:
        case PAM_PROMPT_ECHO_ON: {
            if (timed) {
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                say("PROMPT_AT: %.3f\n", (now.tv_sec - auth_started.tv_sec) * 1e3 + (now.tv_nsec - auth_started.tv_nsec) / 1e6);
            }
            say("%s: %s\n", msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ? "PROMPT_OFF" : "PROMPT_ON", text);
            const char *answer = answer_for_prompt(text);
            if (!answer) answer = next_answer < answer_count ? answers[next_answer++] : NULL;
            if (answer && strcmp(answer, "@FAIL") == 0) { for (int j = 0; j < i; j++) free(r[j].resp); free(r); return PAM_CONV_ERR; }
            if (answer && strcmp(answer, "@NORESP") == 0) { for (int j = 0; j < i; j++) free(r[j].resp); free(r); *resp = NULL; return PAM_SUCCESS; }
            if (answer && strcmp(answer, "@NULL") != 0) r[i].resp = decode_answer(answer);
            break;
        }
        default: say("OTHER: %s\n", text); break;
        }
    }
    *resp = r;
    return PAM_SUCCESS;
}

/* ---- host state: what a module must leave as it found it ---- */

struct host_state {
    struct sigaction actions[NSIG];
    sigset_t mask;
    struct rlimit limits[RLIM_NLIMITS];
    mode_t umask;
    char cwd[4096];
    int threads;
    char fds[1024];      /* 0 closed, 1 open, 2 open with FD_CLOEXEC */
    unsigned long env;   /* a hash of the environment */
    char locale[512];    /* setlocale(LC_ALL, NULL): the host's locale, which a module never sets */
    char domain[128];    /* textdomain(NULL): the host's default gettext domain */
};

static void snapshot(struct host_state *s) {
    memset(s, 0, sizeof *s);
    for (int sig = 1; sig < NSIG; sig++) sigaction(sig, NULL, &s->actions[sig]);
    sigprocmask(SIG_BLOCK, NULL, &s->mask);
    for (int r = 0; r < RLIM_NLIMITS; r++) getrlimit(r, &s->limits[r]);
    s->umask = umask(0);
    umask(s->umask);
    if (!getcwd(s->cwd, sizeof s->cwd)) strcpy(s->cwd, "?");
    FILE *status = fopen("/proc/self/status", "re");
    char line[256];
    while (status && fgets(line, sizeof line, status)) sscanf(line, "Threads: %d", &s->threads);
    if (status) fclose(status);
    for (int fd = 0; fd < 1024; fd++) {
        int flags = fcntl(fd, F_GETFD);
        s->fds[fd] = flags < 0 ? 0 : (flags & FD_CLOEXEC) ? 2 : 1;
    }
    extern char **environ;
    unsigned long h = 5381;
    for (char **e = environ; e && *e; e++) for (const char *c = *e; *c; c++) h = h * 33 + (unsigned char)*c;
    s->env = h;
    const char *l = setlocale(LC_ALL, NULL);
    snprintf(s->locale, sizeof s->locale, "%s", l ? l : "(null)");
    const char *d = textdomain(NULL);
    snprintf(s->domain, sizeof s->domain, "%s", d ? d : "(null)");
}

static void compare(const struct host_state *a, const char *when) {
    struct host_state b;
    snapshot(&b);
    int changed = 0;
    for (int sig = 1; sig < NSIG; sig++) {
        const struct sigaction *x = &a->actions[sig], *y = &b.actions[sig];
        /* sa_mask is compared signal by signal: glibc copies only the kernel's part of it. */
        int same_mask = 1;
        for (int m = 1; m < NSIG; m++) same_mask &= sigismember(&x->sa_mask, m) == sigismember(&y->sa_mask, m);
        if (x->sa_handler != y->sa_handler || x->sa_flags != y->sa_flags || !same_mask) {
            say("HOST: %s changed the action of signal %d (%s)\n", when, sig, strsignal(sig));
            changed = 1;
        }
    }
    for (int sig = 1; sig < NSIG; sig++) {
        if (sigismember(&a->mask, sig) != sigismember(&b.mask, sig)) {
            say("HOST: %s changed the signal mask (signal %d)\n", when, sig);
            changed = 1;
        }
    }
    for (int r = 0; r < RLIM_NLIMITS; r++) {
        if (a->limits[r].rlim_cur != b.limits[r].rlim_cur || a->limits[r].rlim_max != b.limits[r].rlim_max) {
            say("HOST: %s changed resource limit %d\n", when, r);
            changed = 1;
        }
    }
    if (a->umask != b.umask) { say("HOST: %s changed the umask %03o -> %03o\n", when, a->umask, b.umask); changed = 1; }
    if (strcmp(a->cwd, b.cwd) != 0) { say("HOST: %s changed the cwd %s -> %s\n", when, a->cwd, b.cwd); changed = 1; }
    if (a->threads != b.threads) { say("HOST: %s changed the thread count %d -> %d\n", when, a->threads, b.threads); changed = 1; }
    for (int fd = 0; fd < 1024; fd++) {
        if (a->fds[fd] == b.fds[fd]) continue;
        char link[64], target[512] = "?";
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n >= 0) target[n] = 0;
        say("HOST: %s changed descriptor %d (%s -> %s) %s\n", when, fd,
            a->fds[fd] == 0 ? "closed" : a->fds[fd] == 2 ? "cloexec" : "open",
            b.fds[fd] == 0 ? "closed" : b.fds[fd] == 2 ? "cloexec" : "open", b.fds[fd] ? target : "");
        changed = 1;
    }
    if (a->env != b.env) { say("HOST: %s changed the environment\n", when); changed = 1; }
    if (strcmp(a->locale, b.locale) != 0) { say("HOST: %s changed the locale %s -> %s\n", when, a->locale, b.locale); changed = 1; }
    if (strcmp(a->domain, b.domain) != 0) { say("HOST: %s changed the text domain %s -> %s\n", when, a->domain, b.domain); changed = 1; }
    if (!changed) say("HOST: unchanged after %s\n", when);
}

static void host_handler(int sig) { (void)sig; }

/* State no module should touch, distinct from every default, so a module that "resets"
   something is caught as surely as one that changes it. */
static void make_host_distinctive(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = host_handler;
    sa.sa_flags = SA_RESTART;
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGXFSZ, &sa, NULL);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, NULL);
    umask(0027);
    if (chdir("/") != 0) perror("chdir");
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    if (nofile.rlim_max >= 1000) { nofile.rlim_cur = 1000; setrlimit(RLIMIT_NOFILE, &nofile); }
    struct rlimit core = { 0, 0 };
    getrlimit(RLIMIT_CORE, &core);
    core.rlim_cur = 0;
    setrlimit(RLIMIT_CORE, &core);
}

static long rss_kb(void) {
    FILE *status = fopen("/proc/self/status", "re");
    char line[256];
    long kb = -1;
    while (status && fgets(line, sizeof line, status)) sscanf(line, "VmRSS: %ld", &kb);
    if (status) fclose(status);
    return kb;
}

/* ---- --check-host / --sigchld: children and signals around a transaction ---- */

static void reap_every_child(int sig) {
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
    errno = saved;
}

static void report_host(const struct host_state *before) {
    struct host_state now;
    snapshot(&now);
    int changed = 0, mask_changed = 0;
    for (int sig = 1; sig < NSIG; sig++) {
        const struct sigaction *x = &before->actions[sig], *y = &now.actions[sig];
        int same_mask = 1;
        for (int m = 1; m < NSIG; m++) same_mask &= sigismember(&x->sa_mask, m) == sigismember(&y->sa_mask, m);
        if (x->sa_handler != y->sa_handler || x->sa_flags != y->sa_flags || !same_mask) changed++;
        if (sigismember(&before->mask, sig) != sigismember(&now.mask, sig)) mask_changed = 1;
    }
    int status;
    pid_t child = waitpid(-1, &status, WNOHANG);
    const char *children = child > 0 ? "zombie" : child == 0 ? "running" : "none";
    if (changed) say("HOST signals=changed:%d", changed); else say("HOST signals=unchanged");
    say(" mask=%s children=%s\n", mask_changed ? "changed" : "unchanged", children);
}

/* --maps: which of the helper's libraries this process has mapped. */
static void report_maps(void) {
    static const char *names[] = {"libfprint", "libglib", "libgio", "libgobject", "libdbus", "libsystemd", "libgusb"};
    int found[sizeof names / sizeof names[0]] = {0};
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (strstr(line, names[i])) found[i] = 1;
        }
    }
    if (f) fclose(f);
    int any = 0;
    say("MAPS");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (found[i]) { say(" %s", names[i]); any = 1; }
    }
    say(any ? "\n" : " none\n");
}

/* --remote-audit-session DIR: this process gets an audit session of its own (writing its
   loginuid makes the kernel give it a new session id, as pam_loginuid does at a login; needs
   root), and DIR/<that id> says REMOTE=1, as logind's session file of an SSH login does. The
   module must find it through /proc/self/sessionid whatever XDG_SESSION_ID says. */
static int new_remote_audit_session(const char *dir) {
    int fd = open("/proc/self/loginuid", O_WRONLY);
    if (fd < 0 || write(fd, "0", 1) != 1) { perror("pam-harness: /proc/self/loginuid"); return -1; }
    close(fd);
    char id[32] = {0};
    FILE *f = fopen("/proc/self/sessionid", "r");
    if (!f || !fgets(id, sizeof id, f)) { perror("pam-harness: /proc/self/sessionid"); return -1; }
    fclose(f);
    id[strcspn(id, "\n")] = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, id);
    FILE *session = fopen(path, "w");
    if (!session || fputs("UID=0\nREMOTE=1\n", session) < 0 || fclose(session) != 0) { perror(path); return -1; }
    return 0;
}

int main(int argc, char **argv) {
    const char *session_command = NULL;
    const char *confdir = NULL, *service = NULL, *user = NULL, *rhost = NULL, *tty = NULL, *ruser = NULL, *setcred_user = NULL;
    const char *env[16];
    int env_count = 0;
    int flags = 0, setcred = 0, acct_mgmt = 0, host_check = 0, cycles = 1, auth_count = 1, do_fork = 0, close_std = 0;
    int check_host = 0, use_locale = 0, subreaper = 0;
    int maps = 0;
    const char *sigchld = NULL;
    const char *remote_session_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--confdir") == 0 && i + 1 < argc) confdir = argv[++i];
        else if (strcmp(argv[i], "--service") == 0 && i + 1 < argc) service = argv[++i];
        else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) user = argv[++i];
        else if (strcmp(argv[i], "--answer") == 0 && i + 1 < argc && answer_count < 64) answers[answer_count++] = argv[++i];
        else if (strcmp(argv[i], "--answer-prompt") == 0 && i + 1 < argc && prompt_answer_count < 16 && strchr(argv[i + 1], '=')) {
            char *pair = argv[++i];
            char *eq = strchr(pair, '=');
            *eq = 0;
            prompt_texts[prompt_answer_count] = pair;
            prompt_answers[prompt_answer_count++] = eq + 1;
        }
        else if (strcmp(argv[i], "--silent") == 0) flags |= PAM_SILENT;
        else if (strcmp(argv[i], "--setcred") == 0) setcred = 1;
        else if (strcmp(argv[i], "--acct-mgmt") == 0) acct_mgmt = 1;
        else if (strcmp(argv[i], "--session") == 0 && i + 1 < argc) session_command = argv[++i];
        else if (strcmp(argv[i], "--rhost") == 0 && i + 1 < argc) rhost = argv[++i];
        else if (strcmp(argv[i], "--ruser") == 0 && i + 1 < argc) ruser = argv[++i];
        else if (strcmp(argv[i], "--setcred-user") == 0 && i + 1 < argc) setcred_user = argv[++i];
        else if (strcmp(argv[i], "--tty") == 0 && i + 1 < argc) tty = argv[++i];
        else if (strcmp(argv[i], "--env") == 0 && i + 1 < argc && env_count < 16) env[env_count++] = argv[++i];
        else if (strcmp(argv[i], "--syslog") == 0) capture_syslog = 1;
        else if (strcmp(argv[i], "--count-argon2") == 0) count_argon2 = 1;
        else if (strcmp(argv[i], "--fail-messages") == 0) fail_messages = 1;
        else if (strcmp(argv[i], "--close-std") == 0) close_std = 1;
        else if (strcmp(argv[i], "--host-check") == 0) host_check = 1;
        else if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) cycles = atoi(argv[++i]);
        else if (strcmp(argv[i], "--auth-count") == 0 && i + 1 < argc) auth_count = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-auth") == 0) auth_count = 0;
        else if (strcmp(argv[i], "--fork") == 0) do_fork = 1;
        else if (strcmp(argv[i], "--time") == 0) timed = 1;
        else if (strcmp(argv[i], "--setlocale") == 0) use_locale = 1;
        else if (strcmp(argv[i], "--check-host") == 0) check_host = 1;
        else if (strcmp(argv[i], "--subreaper") == 0) subreaper = 1;
        else if (strcmp(argv[i], "--maps") == 0) maps = 1;
        else if (strcmp(argv[i], "--sigchld") == 0 && i + 1 < argc) sigchld = argv[++i];
        else if (strcmp(argv[i], "--remote-audit-session") == 0 && i + 1 < argc) remote_session_dir = argv[++i];
        else { fprintf(stderr, "pam-harness: unknown or incomplete argument %s\n", argv[i]); return 64; }
    }
    if (!confdir || !service || !user || cycles < 1 || auth_count < 0) {
        fprintf(stderr, "usage: pam-harness --confdir DIR --service NAME --user USER [--answer TEXT]... [--silent] [--setcred]\n");
        return 64;
    }
    if (strcmp(user, "@NONE") == 0) user = NULL;
    if (remote_session_dir && new_remote_audit_session(remote_session_dir) != 0) return 70;
    if (use_locale && setlocale(LC_ALL, "") == NULL) fprintf(stderr, "pam-harness: setlocale(LC_ALL, \"\") failed: the C locale stays\n");
    out = stdout;
    if (close_std) {
        int keep = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 100);
        out = keep >= 0 ? fdopen(keep, "w") : NULL;
        if (!out) return 70;
        close(0); close(1); close(2);
    }
    if (subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        fprintf(stderr, "pam-harness: PR_SET_CHILD_SUBREAPER failed\n");
        return 70;
    }
    if (sigchld && strcmp(sigchld, "reap") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = reap_every_child;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGCHLD, &sa, NULL);
    } else if (sigchld && strcmp(sigchld, "ignore") == 0) {
        signal(SIGCHLD, SIG_IGN);
    } else if (sigchld) {
        fprintf(stderr, "pam-harness: --sigchld takes reap or ignore\n");
        return 64;
    }
    struct host_state before;
    if (host_check) make_host_distinctive();
    if (host_check || check_host) snapshot(&before);

    int counts[64] = { 0 };
    long warm_rss = -1;
    int warmup = cycles >= 10 ? cycles / 10 : 0;
    int rc = PAM_SUCCESS;
    for (int cycle = 0; cycle < cycles; cycle++) {
        quiet = cycles > 1 && cycle < cycles - 1;
        next_answer = 0;
        struct pam_conv conv = { conversation, NULL };
        pam_handle_t *pamh = NULL;
        rc = pam_start_confdir(service, user, &conv, confdir, &pamh);
        if (rc != PAM_SUCCESS) { fprintf(out, "START %d %s\n", rc, code_name(rc)); return 2; }
        current = pamh;
        if (rhost) pam_set_item(pamh, PAM_RHOST, rhost);
        if (tty) pam_set_item(pamh, PAM_TTY, tty);
        if (ruser) pam_set_item(pamh, PAM_RUSER, ruser);
        for (int i = 0; i < env_count; i++) pam_putenv(pamh, env[i]);
        rc = PAM_ABORT;
        for (int a = 0; a < auth_count; a++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            auth_started = t0;
            rc = pam_authenticate(pamh, flags);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (timed) say("TIME: %.3f\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
            say("RESULT %d %s\n", rc, code_name(rc));
            if (host_check) { char when[64]; snprintf(when, sizeof when, "pam_authenticate %d", a + 1); compare(&before, when); }
        }
        if (auth_count > 0) counts[rc & 63]++;
        if (acct_mgmt) {
            int ar = pam_acct_mgmt(pamh, 0);
            say("ACCT %d %s\n", ar, code_name(ar));
        }
        if (setcred) {
            if (setcred_user) pam_set_item(pamh, PAM_USER, setcred_user);
            int cr = pam_setcred(pamh, PAM_ESTABLISH_CRED);
            say("SETCRED %d %s\n", cr, code_name(cr));
        }
        if (session_command && rc == PAM_SUCCESS) {
            /* --session CMD: pam_open_session, CMD through /bin/sh with the PAM environment
             * (pam_getenvlist) added to the harness's own, pam_close_session. */
            int so = pam_open_session(pamh, 0);
            say("SESSION %d %s\n", so, code_name(so));
            if (so == PAM_SUCCESS) {
                fflush(out);
                char **pam_env = pam_getenvlist(pamh);
                pid_t child = fork();
                if (child == 0) {
                    for (char **e = pam_env; e && *e; e++) putenv(*e);
                    execl("/bin/sh", "sh", "-c", session_command, (char *)NULL);
                    _exit(127);
                }
                int status = -1;
                if (child > 0) waitpid(child, &status, 0);
                say("SESSION-COMMAND exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
                int sc = pam_close_session(pamh, 0);
                say("SESSION-CLOSE %d %s\n", sc, code_name(sc));
            }
        }
        if (do_fork) {
            fflush(out);
            pid_t child = fork();
            if (child == 0) {
                pam_setcred(pamh, PAM_ESTABLISH_CRED);
                _exit(pam_end(pamh, rc | PAM_DATA_SILENT) == PAM_SUCCESS ? 0 : 1);
            }
            int status = -1;
            waitpid(child, &status, 0);
            say("FORK: child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        }
        if (maps) report_maps();
        current = NULL;
        pam_end(pamh, rc);
        if (host_check) compare(&before, "pam_end");
        if (check_host) report_host(&before);
        if (cycle + 1 == warmup) warm_rss = rss_kb();
    }
    if (cycles > 1) {
        quiet = 0;
        say("RSS: warm=%ld end=%ld\n", warm_rss, rss_kb());
        say("RESULTS:");
        for (int c = 0; c < 64; c++) if (counts[c]) say(" %s=%d", code_name(c), counts[c]);
        say("\n");
    }
    return 0;
}
