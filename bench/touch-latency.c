/*
 * touch-latency: what a touch costs through a real fingerprint path -- scripts/bench's section 6
 * (bench/touch-bench runs it). A benchmark, not a test: it asserts no time.
 *
 *   touch-latency run --case LABEL:SERVICE:SOCKET:ID [--case ...] --confdir DIR --user U
 *                 [--n N] [--warmup W] [--delay-ms MS] [--monitor FILE]
 *                 [--restart-every K --restart-cmd CMD --fprintd-socket VD] [--bus PATH]
 *       N rounds (after W unmeasured ones); each round runs one transaction of every case, each in
 *       a new process (`touch-latency one`, as sudo is one), the cases' order rotating from round
 *       to round. Every K transactions that reach fprintd (their touch goes to VD, fprintd's
 *       virtual_device), CMD (sh -c) restarts fprintd, so that
 *       libfprint's thermal model for virtual_device (which disables a device after about three
 *       minutes of verifying) never sees more than a few seconds. Prints one line per case:
 *         case=LABEL n= errors= ready_median_us= ready_p90_us= prompt_median_us= verifying_median_us=
 *         touch_median_us= touch_p90_us= work_median_us= before_median_us= total_median_us=
 *         caller_rss_median_kib= caller_rss_max_kib= helper_rss_median_kib= helper_rss_max_kib= first_error=
 *
 *   touch-latency one --confdir DIR --service S --user U --socket VD --id ID [--delay-ms MS] [--bus PATH]
 *       One PAM transaction (pam_start_confdir + pam_authenticate + pam_end) in this process; prints
 *       its times (CLOCK_MONOTONIC, microseconds) and peak RSS as one line for `run`.
 *
 *   touch-latency reap-one ARGS...
 *       `one` with ARGS, run below this process, which adopts its orphans
 *       (PR_SET_CHILD_SUBREAPER): the part of a helper that detached from the module once fprintd
 *       verified (biounlock-fprintd --detach) is collected here once it ends, and its peak RSS
 *       printed ("orphans rss=KIB").
 *       `run` runs each transaction this way; the transaction's process itself adopts nothing.
 *
 *   touch-latency helper-start --run LABEL PATH [--run-detached LABEL PATH] [--run ...] [--n N]
 *       A helper's start alone: posix_spawn with a clean environment and a socketpair on fd 3, as
 *       the module spawns it (--run-detached: with `--detach 60` too, as the module spawns
 *       biounlock-fprintd, which forks only once fprintd verifies), until its first frame (`hello`) is
 *       read; interleaved.
 *
 * Times, for each transaction, from pam_start (the module loaded, as in a fresh sudo):
 *   prompt     the touch request shown (a PAM_TEXT_INFO or PAM_ERROR_MSG naming the finger or the
 *              reader);
 *   verifying  fprintd's answer to VerifyStart delivered (from bench/bus-monitor's log: the
 *              fprintd paths only);
 *   ready      the later of the two -- when a touch is taken (the libfprint path: the prompt);
 *   before     the module's work before its helper (the first posix_spawn) or, for pam_fprintd,
 *              before its connection to the bus (the first connect to --bus);
 *   touch      from the touch (the SCAN command written to the device's socket) to
 *              pam_authenticate returning: the device's, fprintd's and the client's work;
 *   match      from fprintd's VerifyStatus("verify-match") seen on the bus (bus-monitor's log) to
 *              pam_authenticate returning (the fprintd paths: the client's part alone);
 *   work       the transaction without the 100 ms the finger waits: pam_start to pam_authenticate's
 *              return, less (touch taken - prompt);
 *   total      pam_start to pam_authenticate's return.
 * Peak RSS: the transaction's process (getrusage RUSAGE_SELF) and its reaped children -- the
 * helper (RUSAGE_CHILDREN), or, for a helper that detached, the orphan `reap-one` collected
 * (the larger of the two). A result other than PAM_SUCCESS, or no touch request, is an error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <security/pam_appl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *values, long n, double p) {
    if (n == 0) return -1;
    double *t = malloc((size_t)n * sizeof *t);
    memcpy(t, values, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp);
    long rank = (long)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    double v = t[rank - 1];
    free(t);
    return v;
}

static double maximum(const double *t, long n) {
    double m = -1;
    for (long i = 0; i < n; i++) if (t[i] > m) m = t[i];
    return m;
}

/* ---------------------------------------------------------------- one transaction */

static const char *sock_path, *scan_id, *bus_path;
static long delay_ms = 100;
static double first_spawn, first_bus_connect;

/* The module's posix_spawn (its helper) and sd-bus's connect (pam_fprintd's bus) come here first:
 * this program exports both (-rdynamic), and the modules' calls bind to the first definition. */
int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
                char *const argv[], char *const envp[]) {
    if (first_spawn == 0) first_spawn = now_us();
    static int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const[], char *const[]);
    if (!real) real = dlsym(RTLD_NEXT, "posix_spawn");
    return real(pid, path, actions, attr, argv, envp);
}

int connect(int fd, const struct sockaddr *address, socklen_t length) {
    if (first_bus_connect == 0 && bus_path && address && address->sa_family == AF_UNIX
        && !strcmp(((const struct sockaddr_un *)address)->sun_path, bus_path)) first_bus_connect = now_us();
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = dlsym(RTLD_NEXT, "connect");
    return real(fd, address, length);
}

struct round {
    double prompt, touched;
    int prompted;
    pthread_t finger;
    int finger_started;
};
static struct round current;

static void *finger(void *arg) {
    (void)arg;
    usleep((useconds_t)delay_ms * 1000);
    char command[256];
    snprintf(command, sizeof command, "SCAN %s", scan_id);
    for (int attempt = 0; attempt < 500; attempt++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        strncpy(a.sun_path, sock_path, sizeof a.sun_path - 1);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            double before = now_us();
            if (write(fd, command, strlen(command)) == (ssize_t)strlen(command)) {
                current.touched = before;
                shutdown(fd, SHUT_WR);
                char b[64];
                while (read(fd, b, sizeof b) > 0) {}
            }
            close(fd);
            return NULL;
        }
        if (fd >= 0) close(fd);
        usleep(2000);
    }
    return NULL;
}

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    (void)data;
    struct pam_response *r = calloc((size_t)n, sizeof *r);
    if (!r) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        const char *text = msg[i]->msg ? msg[i]->msg : "";
        if ((msg[i]->msg_style == PAM_TEXT_INFO || msg[i]->msg_style == PAM_ERROR_MSG) && !current.prompted
            && (strstr(text, "finger") || strstr(text, "reader"))) {
            current.prompted = 1;
            current.prompt = now_us();
            current.finger_started = pthread_create(&current.finger, NULL, finger, NULL) == 0;
        }
        if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF || msg[i]->msg_style == PAM_PROMPT_ECHO_ON) r[i].resp = strdup("");
    }
    *resp = r;
    return PAM_SUCCESS;
}

static int one(const char *confdir, const char *service, const char *user) {
    struct pam_conv conv = { conversation, NULL };
    pam_handle_t *pamh = NULL;
    double start = now_us();
    int rc = pam_start_confdir(service, user, &conv, confdir, &pamh);
    if (rc == PAM_SUCCESS) rc = pam_authenticate(pamh, 0);
    double end = now_us();
    if (pamh) pam_end(pamh, rc);
    if (current.finger_started) pthread_join(current.finger, NULL);
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    printf("one rc=%d prompted=%d start=%.1f prompt=%.1f touched=%.1f end=%.1f spawn=%.1f connect=%.1f rss=%ld child_rss=%ld\n",
           rc, current.prompted, start, current.prompt, current.touched, end, first_spawn, first_bus_connect,
           self.ru_maxrss, children.ru_maxrss);
    return 0;
}

/* ---------------------------------------------------------------- the rounds */

struct kase {
    const char *label, *service, *socket, *id;
    double *ready, *prompt, *verifying, *touch, *match, *work, *before, *total, *rss, *child_rss;
    long kept, errors, verifying_kept, before_kept, match_kept;
    char first_error[64];
};

/* The monitor's log (bench/bus-monitor): "verifystart-return T DESTINATION" lines. The latest
 * VerifyStart answer inside [from, to], or 0. */
static double monitored(const char *monitor, const char *format, double from, double to) {
    if (!monitor) return 0;
    FILE *f = fopen(monitor, "r");
    if (!f) return 0;
    char line[512];
    double found = 0;
    while (fgets(line, sizeof line, f)) {
        double t;
        if (sscanf(line, format, &t) == 1 && t >= from && t <= to) found = t;
    }
    fclose(f);
    return found;
}

static int run_one(const char *self, const char *confdir, const char *user, struct kase *k, const char *bus, char *out, size_t size) {
    int pipefd[2];
    if (pipe(pipefd)) return -1;
    char delay[32];
    snprintf(delay, sizeof delay, "%ld", delay_ms);
    char *argv[] = { (char *)self, "reap-one", "--confdir", (char *)confdir, "--service", (char *)k->service, "--user", (char *)user,
                     "--socket", (char *)k->socket, "--id", (char *)k->id, "--delay-ms", delay, "--bus", (char *)(bus ? bus : ""), NULL };
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
    posix_spawn_file_actions_addclose(&actions, pipefd[0]);
    pid_t pid;
    static int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const[], char *const[]);
    if (!real) real = dlsym(RTLD_NEXT, "posix_spawn");
    int rc = real(&pid, self, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipefd[1]);
    if (rc) { close(pipefd[0]); return -1; }
    size_t got = 0;
    ssize_t n;
    while (got + 1 < size && (n = read(pipefd[0], out + got, size - 1 - got)) > 0) got += (size_t)n;
    out[got] = 0;
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int rounds(int argc, char **argv) {
    const char *confdir = NULL, *user = NULL, *monitor = NULL, *restart_cmd = NULL, *bus = NULL, *fprintd_socket = NULL;
    long n = 20, warmup = 2, restart_every = 0;
    struct kase cases[8];
    int ncases = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--confdir")) confdir = argv[i + 1];
        else if (!strcmp(argv[i], "--user")) user = argv[i + 1];
        else if (!strcmp(argv[i], "--monitor")) monitor = argv[i + 1];
        else if (!strcmp(argv[i], "--bus")) bus = argv[i + 1];
        else if (!strcmp(argv[i], "--restart-cmd")) restart_cmd = argv[i + 1];
        else if (!strcmp(argv[i], "--fprintd-socket")) fprintd_socket = argv[i + 1];
        else if (!strcmp(argv[i], "--restart-every")) restart_every = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--n")) n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--delay-ms")) delay_ms = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--case") && ncases < 8) {
            struct kase *k = &cases[ncases++];
            memset(k, 0, sizeof *k);
            char *spec = strdup(argv[i + 1]);
            k->label = strtok(spec, ":"); k->service = strtok(NULL, ":"); k->socket = strtok(NULL, ":"); k->id = strtok(NULL, ":");
            if (!k->id) { fprintf(stderr, "touch-latency: --case LABEL:SERVICE:SOCKET:ID\n"); return 64; }
            double **arrays[] = { &k->ready, &k->prompt, &k->verifying, &k->touch, &k->match, &k->work, &k->before, &k->total, &k->rss, &k->child_rss };
            for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++) *arrays[a] = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
            strcpy(k->first_error, "-");
        } else { fprintf(stderr, "touch-latency: unknown argument %s\n", argv[i]); return 64; }
    }
    if (!confdir || !user || ncases == 0 || n < 1) { fprintf(stderr, "touch-latency run: --confdir, --user and a --case are needed\n"); return 64; }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return 1;
    self[len] = 0;
    long since_restart = 0, restarts = 0;
    for (long round = 0; round < warmup + n; round++) {
        for (int j = 0; j < ncases; j++) {
            struct kase *k = &cases[(round + j) % ncases];
            int through_fprintd = fprintd_socket && !strcmp(k->socket, fprintd_socket);
            if (restart_cmd && restart_every > 0 && through_fprintd && since_restart >= restart_every) {
                if (system(restart_cmd) != 0) { fprintf(stderr, "touch-latency: the restart command failed\n"); return 1; }
                since_restart = 0;
                restarts++;
            }
            if (through_fprintd) since_restart++;
            char out[1024];
            int ok = run_one(self, confdir, user, k, bus, out, sizeof out) == 0;
            int rc = -1, prompted = 0;
            double start = 0, prompt = 0, touched = 0, end = 0, spawn = 0, conn = 0;
            long rss = 0, child_rss = 0;
            if (ok) ok = sscanf(out, "one rc=%d prompted=%d start=%lf prompt=%lf touched=%lf end=%lf spawn=%lf connect=%lf rss=%ld child_rss=%ld",
                                &rc, &prompted, &start, &prompt, &touched, &end, &spawn, &conn, &rss, &child_rss) == 10;
            long orphan_rss = 0;
            const char *orphans = strstr(out, "orphans rss=");
            if (ok && orphans && sscanf(orphans, "orphans rss=%ld", &orphan_rss) == 1 && orphan_rss > child_rss) child_rss = orphan_rss;
            if (round < warmup) continue;
            if (!ok || rc != PAM_SUCCESS || !prompted || touched == 0) {
                k->errors++;
                if (!strcmp(k->first_error, "-"))
                    snprintf(k->first_error, sizeof k->first_error, "%s", !ok ? "no-result" : rc != PAM_SUCCESS ? "pam-error" : "no-touch-request");
                if (ok && rc != PAM_SUCCESS) snprintf(k->first_error, sizeof k->first_error, "pam-%d", rc);
                continue;
            }
            double verifying = monitored(monitor, "verifystart-return %lf", start, end);
            double matched = monitored(monitor, "verifystatus %lf verify-match", start, end);
            long i = k->kept++;
            k->prompt[i] = prompt - start;
            if (verifying > 0) k->verifying[k->verifying_kept++] = verifying - start;
            k->ready[i] = (verifying > prompt ? verifying : prompt) - start;
            k->touch[i] = end - touched;
            if (matched > 0) k->match[k->match_kept++] = end - matched;
            k->total[i] = end - start;
            k->work[i] = (end - start) - (touched - prompt);
            double first = spawn > 0 ? spawn : conn;
            if (first > 0) k->before[k->before_kept++] = first - start;
            k->rss[i] = (double)rss;
            k->child_rss[i] = (double)child_rss;
        }
    }
    for (int j = 0; j < ncases; j++) {
        struct kase *k = &cases[j];
        printf("case=%s n=%ld errors=%ld ready_median_us=%.1f ready_p90_us=%.1f prompt_median_us=%.1f verifying_median_us=%.1f "
               "touch_median_us=%.1f touch_p90_us=%.1f match_median_us=%.1f match_p90_us=%.1f work_median_us=%.1f work_p90_us=%.1f before_median_us=%.1f total_median_us=%.1f "
               "caller_rss_median_kib=%.0f caller_rss_max_kib=%.0f helper_rss_median_kib=%.0f helper_rss_max_kib=%.0f first_error=%s\n",
               k->label, k->kept, k->errors, pct(k->ready, k->kept, 50), pct(k->ready, k->kept, 90), pct(k->prompt, k->kept, 50),
               pct(k->verifying, k->verifying_kept, 50), pct(k->touch, k->kept, 50), pct(k->touch, k->kept, 90),
               pct(k->match, k->match_kept, 50), pct(k->match, k->match_kept, 90),
               pct(k->work, k->kept, 50), pct(k->work, k->kept, 90), pct(k->before, k->before_kept, 50), pct(k->total, k->kept, 50),
               pct(k->rss, k->kept, 50), maximum(k->rss, k->kept), pct(k->child_rss, k->kept, 50), maximum(k->child_rss, k->kept),
               k->first_error);
    }
    printf("fact fprintd_restarts=%ld restart_every=%ld\n", restarts, restart_every);
    return 0;
}

/* `one` below a process that adopts its orphans: a detached helper's end and peak RSS. */
static int reap_one(int argc, char **argv) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return 70;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return 70;
    self[len] = 0;
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) return 70;
    args[0] = self;
    args[1] = "one";
    for (int i = 2; i < argc; i++) args[i] = argv[i];
    static int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const[], char *const[]);
    if (!real) real = dlsym(RTLD_NEXT, "posix_spawn");
    pid_t pid;
    if (real(&pid, self, NULL, NULL, args, environ) != 0) return 70;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    fflush(stdout);
    /* The orphans: every child left is one (this process started only `one`); bounded. */
    long rss = 0;
    double until = now_us() + 5e6;
    for (;;) {
        struct rusage ru;
        int st;
        pid_t got = wait4(-1, &st, WNOHANG, &ru);
        if (got > 0) { if (ru.ru_maxrss > rss) rss = ru.ru_maxrss; continue; }
        if (got < 0 || now_us() > until) break;
        usleep(500);
    }
    printf("orphans rss=%ld\n", rss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* ---------------------------------------------------------------- a helper's start */

static int helper_start(int argc, char **argv) {
    const char *labels[8], *paths[8];
    int detached[8] = {0};
    int nh = 0;
    long n = 200;
    for (int i = 2; i < argc; i++) {
        if ((!strcmp(argv[i], "--run") || !strcmp(argv[i], "--run-detached")) && i + 2 < argc && nh < 8) {
            detached[nh] = !strcmp(argv[i], "--run-detached");
            labels[nh] = argv[i + 1]; paths[nh] = argv[i + 2]; nh++; i += 2;
        }
        else if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atol(argv[++i]);
        else { fprintf(stderr, "touch-latency: unknown argument %s\n", argv[i]); return 64; }
    }
    double *t[8];
    long errors[8] = {0}, kept[8] = {0};
    for (int h = 0; h < nh; h++) t[h] = calloc((size_t)n, sizeof(double));
    char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
    static int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const[], char *const[]);
    if (!real) real = dlsym(RTLD_NEXT, "posix_spawn");
    for (long round = 0; round < n + 5; round++) {
        for (int j = 0; j < nh; j++) {
            int h = (int)((round + j) % nh);
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return 1;
            int theirs = fcntl(sv[1], F_DUPFD, 10);
            posix_spawn_file_actions_t actions;
            posix_spawn_file_actions_init(&actions);
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
            posix_spawn_file_actions_adddup2(&actions, theirs, 3);
            char *args[] = { (char *)paths[h], "--serve", "--syslog", detached[h] ? "--detach" : NULL, "60", NULL };
            double start = now_us();
            pid_t pid;
            int rc = real(&pid, paths[h], &actions, NULL, args, env);
            posix_spawn_file_actions_destroy(&actions);
            close(theirs);
            close(sv[1]);
            unsigned char frame[64];
            size_t got = 0;
            struct pollfd p = { sv[0], POLLIN, 0 };
            while (rc == 0 && got < 6 && poll(&p, 1, 5000) == 1) {
                ssize_t r = read(sv[0], frame + got, sizeof frame - got);
                if (r <= 0) break;
                got += (size_t)r;
            }
            double end = now_us();
            close(sv[0]);   /* EOF: the helper exits */
            if (rc == 0) { int status; while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {} }
            if (round < 5) continue;
            if (rc != 0 || got < 6) { errors[h]++; continue; }
            t[h][kept[h]++] = end - start;
        }
    }
    for (int h = 0; h < nh; h++)
        printf("helper case=%s n=%ld errors=%ld median_us=%.1f p90_us=%.1f\n", labels[h], kept[h], errors[h],
               pct(t[h], kept[h], 50), pct(t[h], kept[h], 90));
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "run")) return rounds(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "helper-start")) return helper_start(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "reap-one")) return reap_one(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "one")) {
        const char *confdir = NULL, *service = NULL, *user = NULL;
        for (int i = 2; i + 1 < argc; i += 2) {
            if (!strcmp(argv[i], "--confdir")) confdir = argv[i + 1];
            else if (!strcmp(argv[i], "--service")) service = argv[i + 1];
            else if (!strcmp(argv[i], "--user")) user = argv[i + 1];
            else if (!strcmp(argv[i], "--socket")) sock_path = argv[i + 1];
            else if (!strcmp(argv[i], "--id")) scan_id = argv[i + 1];
            else if (!strcmp(argv[i], "--delay-ms")) delay_ms = atol(argv[i + 1]);
            else if (!strcmp(argv[i], "--bus")) bus_path = *argv[i + 1] ? argv[i + 1] : NULL;
            else { fprintf(stderr, "touch-latency: unknown argument %s\n", argv[i]); return 64; }
        }
        if (!confdir || !service || !user || !sock_path || !scan_id) { fprintf(stderr, "touch-latency one: missing arguments\n"); return 64; }
        return one(confdir, service, user);
    }
    fprintf(stderr, "usage: touch-latency run|one|reap-one|helper-start ... (see the comment at the top of bench/touch-latency.c)\n");
    return 64;
}
