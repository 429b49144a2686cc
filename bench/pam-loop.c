/*
 * pam-loop: the measuring program behind scripts/bench. A benchmark, not a test: it asserts no
 * time, it only counts results that differ from the expected one.
 *
 *   pam-loop loop  --confdir DIR [--n N] [--warmup W] [--block B] [--maps TEXT] [--quiet] CASE...
 *       N transactions of every CASE in this process (after W warm-up ones), in rounds: each round
 *       runs B consecutive transactions of each case (default 1), so that the cases share whatever
 *       the machine is doing at the time (the machine is shared) while each block keeps the
 *       caches its case left warm, as a loop of one case would.
 *   pam-loop parallel --confdir DIR --procs P [--n N] CASE
 *       P forked processes released together, N transactions each.
 *   pam-loop spawn [--n N] [--warmup W] --run LABEL CMD ARGS... \; [--run LABEL CMD ARGS... \;]...
 *       N rounds; each round runs every command once as a new process (posix_spawn + waitpid,
 *       its standard output sent to /dev/null). An exit status other than 0 counts as an error.
 *   pam-loop dlopen [--n N] LIB...
 *       N rounds; each round forks a process that dlopens the LIBs in order (RTLD_NOW, as libpam
 *       loads modules) and times each dlopen: what loading a library costs a host the first time.
 *   pam-loop argon2-hash OPSLIMIT MEMLIMIT_BYTES PASSWORD
 *       prints an Argon2id hash of PASSWORD at that cost (libsodium's crypto_pwhash_str_alg).
 *   pam-loop fsync [--n N] DIR
 *       N times: write 4 KiB into a file in DIR and fdatasync it; the cost of one durable write there.
 *
 * CASE is one of
 *   --case LABEL SERVICE USER EXPECT [--answer TEXT]
 *       one PAM transaction: pam_start_confdir(SERVICE, USER) + pam_authenticate + pam_end,
 *       which is what a host such as sudo does per authentication: libpam parses the service file
 *       and dlopens its modules in pam_start and dlcloses them in pam_end (a module linked with
 *       -z nodelete, like pam_biounlock.so, stays mapped after its first load; the others are
 *       unmapped and mapped again every time). The conversation answers every prompt with TEXT
 *       (empty when none) and drops messages. EXPECT is the result that counts as correct
 *       (PAM_SUCCESS, PAM_PERM_DENIED, ... or a number).
 *   --argon2 LABEL HASH PASSWORD
 *       libsodium's crypto_pwhash_str_verify(HASH, PASSWORD) alone, with nothing around it: the
 *       cost of Argon2id by itself. libsodium is dlopened only when such a case is given.
 *
 * Output (times in microseconds, memory in KiB), one line per case:
 *   case=LABEL n=N errors=E median_us= p90_us= p99_us= mean_us= min_us= max_us= cpu_median_us= first_error=
 * The times are wall-clock; cpu_median_us is the median CPU time (user + system) the transaction
 * used (CLOCK_THREAD_CPUTIME_ID, or the child's rusage for spawn), which leaves out time spent
 * waiting for a core or for the disk. Rounds rotate which case goes first, so each case follows
 * each other case equally often.
 * then, for loop, one line about the process:
 *   process maxrss_start_kib= maxrss_kib= rss_warm_kib= rss_end_kib= rss_anon_end_kib= rss_file_end_kib= maps_match=
 * maxrss_start_kib is the peak RSS before the first transaction and maxrss_kib the peak after the
 * last (getrusage ru_maxrss); rss_warm_kib and rss_end_kib are VmRSS after the warm-up rounds and
 * after the last round (growth between them is memory kept per transaction), split at the end
 * into anonymous (private) and file-backed pages (code and data of the mapped libraries, shared
 * with every other process that maps them); maps_match counts
 * the lines of /proc/self/maps containing --maps (default "libfprint") at the end.
 * With --quiet, loop prints nothing and exits 0 when every result was the expected one, else 3:
 * the form scripts/bench spawns as one whole process per transaction.
 * parallel prints: procs= total= errors= abnormal_exits= wall_s= throughput_per_s= and the
 * latency percentiles over all transactions.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <security/pam_appl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum kind { PAM_CASE, ARGON2_CASE };

struct bench_case {
    enum kind kind;
    const char *label, *service, *user, *answer; /* PAM */
    const char *hash, *password;                 /* Argon2 */
    char **argv;                                 /* spawn */
    int expect;
    double *t, *cpu;
    long errors;
    int first_error;
};

#define MAX_CASES 16
static struct bench_case cases[MAX_CASES];
static int ncases = 0;
static const char *confdir, *maps_pattern = "libfprint";
static long n = 1000, warmup = 20, procs = 1, block = 1;
static int quiet = 0;

static int (*sodium_init_fn)(void);
static int (*pwhash_verify_fn)(const char *, const char *, unsigned long long);
static int (*pwhash_str_alg_fn)(char *, const char *, unsigned long long, unsigned long long, size_t, int);

static const struct { const char *name; int code; } codes[] = {
    {"PAM_SUCCESS", PAM_SUCCESS}, {"PAM_IGNORE", PAM_IGNORE}, {"PAM_AUTHINFO_UNAVAIL", PAM_AUTHINFO_UNAVAIL},
    {"PAM_MAXTRIES", PAM_MAXTRIES}, {"PAM_AUTH_ERR", PAM_AUTH_ERR}, {"PAM_USER_UNKNOWN", PAM_USER_UNKNOWN},
    {"PAM_CONV_ERR", PAM_CONV_ERR}, {"PAM_SERVICE_ERR", PAM_SERVICE_ERR}, {"PAM_SYSTEM_ERR", PAM_SYSTEM_ERR},
    {"PAM_PERM_DENIED", PAM_PERM_DENIED}, {"PAM_MODULE_UNKNOWN", PAM_MODULE_UNKNOWN}, {"PAM_ABORT", PAM_ABORT},
    {"PAM_INCOMPLETE", PAM_INCOMPLETE}, {"PAM_CRED_ERR", PAM_CRED_ERR}, {"PAM_TRY_AGAIN", PAM_TRY_AGAIN},
    {"PAM_CRED_INSUFFICIENT", PAM_CRED_INSUFFICIENT}, {"PAM_OPEN_ERR", PAM_OPEN_ERR},
    {"PAM_BUF_ERR", PAM_BUF_ERR}, {"PAM_NEW_AUTHTOK_REQD", PAM_NEW_AUTHTOK_REQD}, {"PAM_ACCT_EXPIRED", PAM_ACCT_EXPIRED},
};

static const char *code_name(int code) {
    static char buf[32];
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].code == code) return codes[i].name;
    snprintf(buf, sizeof buf, "%d", code);
    return buf;
}

static void usage(void) {
    fprintf(stderr,
            "usage: pam-loop loop --confdir DIR [--n N] [--warmup W] [--block B] [--maps TEXT] [--quiet] CASE...\n"
            "       pam-loop parallel --confdir DIR --procs P [--n N] CASE\n"
            "       pam-loop spawn [--n N] [--warmup W] --run LABEL CMD ARGS... ';' ...\n"
            "       pam-loop dlopen [--n N] LIB...\n"
            "       pam-loop argon2-hash OPSLIMIT MEMLIMIT_BYTES PASSWORD\n"
            "       pam-loop fsync [--n N] DIR\n"
            "CASE: --case LABEL SERVICE USER EXPECT [--answer TEXT] | --argon2 LABEL HASH PASSWORD\n");
    exit(64);
}

static int parse_code(const char *text) {
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (strcmp(codes[i].name, text) == 0) return codes[i].code;
    char *end;
    long v = strtol(text, &end, 10);
    if (*text && !*end) return (int)v;
    fprintf(stderr, "pam-loop: unknown result code %s\n", text);
    exit(64);
}

static long parse_count(const char *text, long min) {
    char *end;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < min) usage();
    return v;
}

static int conversation(int count, const struct pam_message **msg, struct pam_response **resp, void *data) {
    const char *answer = data ? data : "";
    struct pam_response *out = calloc((size_t)count, sizeof *out);
    if (!out) return PAM_BUF_ERR;
    for (int i = 0; i < count; i++) {
        if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF || msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
            out[i].resp = strdup(answer);
            if (!out[i].resp) {
                for (int j = 0; j < i; j++) free(out[j].resp);
                free(out);
                return PAM_BUF_ERR;
            }
        }
    }
    *resp = out;
    return PAM_SUCCESS;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Runs one case once; returns its result (PAM code; for Argon2: 0 verified, else 1). */
static int run_case(const struct bench_case *c) {
    if (c->kind == ARGON2_CASE) return pwhash_verify_fn(c->hash, c->password, strlen(c->password)) == 0 ? 0 : 1;
    struct pam_conv conv = {conversation, (void *)c->answer};
    pam_handle_t *pamh = NULL;
    int rc = pam_start_confdir(c->service, c->user, &conv, confdir, &pamh);
    if (rc != PAM_SUCCESS) return rc;
    rc = pam_authenticate(pamh, PAM_SILENT);
    pam_end(pamh, rc);
    return rc;
}

static void record(struct bench_case *c, long i, double elapsed, double cpu, int rc) {
    if (i >= 0) {
        c->t[i] = elapsed;
        c->cpu[i] = cpu;
    }
    if (rc != c->expect) {
        c->errors++;
        if (c->first_error == -1) c->first_error = rc;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static double percentile(const double *sorted, long count, double p) {
    long rank = (long)(p / 100.0 * (double)count + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > count) rank = count;
    return sorted[rank - 1];
}

static void print_stats(double *t, long count) {
    qsort(t, (size_t)count, sizeof *t, cmp_double);
    double sum = 0;
    for (long i = 0; i < count; i++) sum += t[i];
    double median = count % 2 ? t[count / 2] : (t[count / 2 - 1] + t[count / 2]) / 2;
    printf("median_us=%.1f p90_us=%.1f p99_us=%.1f mean_us=%.1f min_us=%.1f max_us=%.1f", median,
           percentile(t, count, 90), percentile(t, count, 99), sum / (double)count, t[0], t[count - 1]);
}

static double median_of(double *t, long count) {
    qsort(t, (size_t)count, sizeof *t, cmp_double);
    return count % 2 ? t[count / 2] : (t[count / 2 - 1] + t[count / 2]) / 2;
}

static void print_case(struct bench_case *c, long count) {
    printf("case=%s n=%ld block=%ld errors=%ld ", c->label, count, block, c->errors);
    print_stats(c->t, count);
    printf(" cpu_median_us=%.1f", median_of(c->cpu, count));
    printf(" first_error=%s\n", c->first_error == -1 ? "-"
                                : c->kind == PAM_CASE ? code_name(c->first_error) : "verify-failed");
}

static long maxrss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A "Name: value kB" field of /proc/self/status. */
static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    size_t len = strlen(field);
    long v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && line[len] == ':' && sscanf(line + len + 1, "%ld", &v) == 1) break;
    fclose(f);
    return v;
}

static long vmrss_kib(void) { return status_kib("VmRSS"); }

static long maps_matches(const char *pattern) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4096];
    long count = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, pattern)) count++;
    fclose(f);
    return count;
}

static void load_sodium(void) {
    void *h = dlopen("libsodium.so.23", RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "pam-loop: %s\n", dlerror()); exit(70); }
    sodium_init_fn = (int (*)(void))dlsym(h, "sodium_init");
    pwhash_verify_fn = (int (*)(const char *, const char *, unsigned long long))dlsym(h, "crypto_pwhash_str_verify");
    pwhash_str_alg_fn = (int (*)(char *, const char *, unsigned long long, unsigned long long, size_t, int))dlsym(
        h, "crypto_pwhash_str_alg");
    if (!sodium_init_fn || !pwhash_verify_fn || !pwhash_str_alg_fn || sodium_init_fn() < 0) {
        fprintf(stderr, "pam-loop: libsodium unusable\n");
        exit(70);
    }
}

static int run_loop(void) {
    long start_maxrss = maxrss_kib();
    long warm_rss = warmup == 0 ? vmrss_kib() : -1;
    long done[MAX_CASES] = {0}; /* transactions run per case, warm-up included */
    long total = warmup + n;
    for (long round = 0;; round++) {
        int progressed = 0;
        for (int j = 0; j < ncases; j++) {
            int k = (int)((j + round) % ncases);
            struct bench_case *c = &cases[k];
            for (long b = 0; b < block && done[k] < total; b++) {
                double a = now_us(), ca = cpu_us();
                int rc = run_case(c);
                double cb = cpu_us();
                record(c, done[k] - warmup, now_us() - a, cb - ca, rc);
                done[k]++;
                progressed = 1;
            }
        }
        if (warm_rss < 0) {
            int warm = 1;
            for (int k = 0; k < ncases; k++) warm = warm && done[k] >= warmup;
            if (warm) warm_rss = vmrss_kib();
        }
        if (!progressed) break;
    }
    long errors = 0;
    for (int k = 0; k < ncases; k++) errors += cases[k].errors;
    if (quiet) return errors ? 3 : 0;
    for (int k = 0; k < ncases; k++) print_case(&cases[k], n);
    printf("process maxrss_start_kib=%ld maxrss_kib=%ld rss_warm_kib=%ld rss_end_kib=%ld rss_anon_end_kib=%ld "
           "rss_file_end_kib=%ld maps_match=%ld\n", start_maxrss, maxrss_kib(), warm_rss, vmrss_kib(), status_kib("RssAnon"),
           status_kib("RssFile"), maps_matches(maps_pattern));
    return 0;
}

static int run_parallel(void) {
    struct bench_case *c = &cases[0];
    size_t total = (size_t)procs * (size_t)n;
    /* Per transaction: latency and result, shared with the children. */
    double *lat = mmap(NULL, total * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double *cpu = mmap(NULL, total * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int *res = mmap(NULL, total * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (lat == MAP_FAILED || cpu == MAP_FAILED || res == MAP_FAILED) { perror("pam-loop: mmap"); return 70; }
    for (size_t i = 0; i < total; i++) res[i] = -1000; /* never ran: a child that died counts as errors */
    int gate[2];
    if (pipe(gate) != 0) { perror("pam-loop: pipe"); return 70; }
    pid_t *pids = calloc((size_t)procs, sizeof *pids);
    if (!pids) return 70;
    for (long p = 0; p < procs; p++) {
        pid_t pid = fork();
        if (pid < 0) { perror("pam-loop: fork"); return 70; }
        if (pid == 0) {
            close(gate[1]);
            char ch;
            while (read(gate[0], &ch, 1) < 0 && errno == EINTR) {}
            for (long i = 0; i < n; i++) {
                double a = now_us(), ca = cpu_us();
                int rc = run_case(c);
                cpu[p * n + i] = cpu_us() - ca;
                lat[p * n + i] = now_us() - a;
                res[p * n + i] = rc;
            }
            _exit(0);
        }
        pids[p] = pid;
    }
    close(gate[0]);
    double a = now_us();
    close(gate[1]); /* EOF releases every child at once */
    int abnormal = 0;
    for (long p = 0; p < procs; p++) {
        int status = 0;
        while (waitpid(pids[p], &status, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) abnormal++;
    }
    double wall = now_us() - a;
    long errors = 0;
    int first_error = -1;
    for (size_t i = 0; i < total; i++) {
        if (res[i] != c->expect) {
            errors++;
            if (first_error == -1) first_error = res[i];
        }
    }
    printf("case=%s procs=%ld total=%zu errors=%ld abnormal_exits=%d wall_s=%.3f throughput_per_s=%.1f ", c->label,
           procs, total, errors, abnormal, wall / 1e6, (double)total / (wall / 1e6));
    print_stats(lat, (long)total);
    printf(" cpu_median_us=%.1f", median_of(cpu, (long)total));
    printf(" first_error=%s\n", first_error == -1 ? "-" : first_error == -1000 ? "not-run" : code_name(first_error));
    return 0;
}

static int run_spawn(void) {
    posix_spawn_file_actions_t quiet_stdout;
    posix_spawn_file_actions_init(&quiet_stdout);
    posix_spawn_file_actions_addopen(&quiet_stdout, 1, "/dev/null", O_WRONLY, 0);
    for (long i = -warmup; i < n; i++) {
        for (int j = 0; j < ncases; j++) {
            struct bench_case *c = &cases[(j + (i + warmup)) % ncases];
            pid_t pid;
            double a = now_us();
            int rc = posix_spawn(&pid, c->argv[0], &quiet_stdout, NULL, c->argv, environ);
            if (rc != 0) {
                fprintf(stderr, "pam-loop: cannot run %s: %s\n", c->argv[0], strerror(rc));
                return 70;
            }
            int status = 0;
            struct rusage ru;
            while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {}
            double elapsed = now_us() - a;
            double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
            int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            record(c, i, elapsed, cpu, code);
        }
    }
    for (int k = 0; k < ncases; k++) {
        struct bench_case *c = &cases[k];
        printf("case=%s n=%ld errors=%ld ", c->label, n, c->errors);
        print_stats(c->t, n);
        printf(" cpu_median_us=%.1f", median_of(c->cpu, n));
        if (c->first_error == -1) printf(" first_error=-\n");
        else printf(" first_error=exit-%d\n", c->first_error);
    }
    return 0;
}

static int run_dlopen(int count, char **libs) {
    size_t total = (size_t)n * (size_t)count;
    double *t = mmap(NULL, total * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED) { perror("pam-loop: mmap"); return 70; }
    long failed = 0;
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) { perror("pam-loop: fork"); return 70; }
        if (pid == 0) {
            for (int k = 0; k < count; k++) {
                double a = now_us();
                void *h = dlopen(libs[k], RTLD_NOW);
                t[(size_t)k * (size_t)n + (size_t)i] = now_us() - a;
                if (!h) { fprintf(stderr, "pam-loop: %s\n", dlerror()); _exit(3); }
            }
            _exit(0);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
    }
    for (int k = 0; k < count; k++) {
        printf("dlopen=%s n=%ld errors=%ld ", libs[k], n, failed);
        print_stats(t + (size_t)k * (size_t)n, n);
        printf("\n");
    }
    return failed ? 1 : 0;
}

static int run_argon2_hash(char **argv) {
    load_sodium();
    char out[128];
    char *end;
    unsigned long long ops = strtoull(argv[0], &end, 10);
    if (*end) usage();
    size_t mem = (size_t)strtoull(argv[1], &end, 10);
    if (*end) usage();
    if (pwhash_str_alg_fn(out, argv[2], strlen(argv[2]), ops, mem, 2 /* crypto_pwhash_ALG_ARGON2ID13 */) != 0) {
        fprintf(stderr, "pam-loop: crypto_pwhash_str_alg failed\n");
        return 1;
    }
    printf("%s\n", out);
    return 0;
}

static int run_fsync(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fsync-probe", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) { perror("pam-loop: open"); return 70; }
    char block[4096];
    memset(block, 0x5a, sizeof block);
    double *t = malloc(sizeof(double) * (size_t)n);
    if (!t) return 70;
    for (long i = 0; i < n; i++) {
        if (pwrite(fd, block, sizeof block, (off_t)(i % 64) * 4096) != (ssize_t)sizeof block) { perror("pam-loop: pwrite"); return 70; }
        double a = now_us();
        if (fdatasync(fd) != 0) { perror("pam-loop: fdatasync"); return 70; }
        t[i] = now_us() - a;
    }
    close(fd);
    unlink(path);
    printf("fsync=fdatasync n=%ld ", n);
    print_stats(t, n);
    printf("\n");
    return 0;
}

static struct bench_case *new_case(void) {
    if (ncases == MAX_CASES) usage();
    struct bench_case *c = &cases[ncases++];
    memset(c, 0, sizeof *c);
    c->first_error = -1;
    return c;
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    const char *mode = argv[1];
    if (strcmp(mode, "argon2-hash") == 0) {
        if (argc != 5) usage();
        return run_argon2_hash(argv + 2);
    }
    if (strcmp(mode, "fsync") == 0) {
        int first = 2;
        if (argc > 3 && strcmp(argv[2], "--n") == 0) { n = parse_count(argv[3], 1); first = 4; }
        if (first != argc - 1) usage();
        setvbuf(stdout, NULL, _IOLBF, 0);
        return run_fsync(argv[first]);
    }
    if (strcmp(mode, "dlopen") == 0) {
        int first = 2;
        if (argc > 3 && strcmp(argv[2], "--n") == 0) { n = parse_count(argv[3], 1); first = 4; }
        if (first >= argc) usage();
        setvbuf(stdout, NULL, _IOLBF, 0);
        return run_dlopen(argc - first, argv + first);
    }
    int need_sodium = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int left = argc - i - 1;
        if (strcmp(a, "--quiet") == 0) quiet = 1;
        else if (strcmp(a, "--confdir") == 0 && left >= 1) confdir = argv[++i];
        else if (strcmp(a, "--maps") == 0 && left >= 1) maps_pattern = argv[++i];
        else if (strcmp(a, "--n") == 0 && left >= 1) n = parse_count(argv[++i], 1);
        else if (strcmp(a, "--warmup") == 0 && left >= 1) warmup = parse_count(argv[++i], 0);
        else if (strcmp(a, "--procs") == 0 && left >= 1) procs = parse_count(argv[++i], 1);
        else if (strcmp(a, "--block") == 0 && left >= 1) block = parse_count(argv[++i], 1);
        else if (strcmp(a, "--case") == 0 && left >= 4) {
            struct bench_case *c = new_case();
            c->kind = PAM_CASE;
            c->label = argv[i + 1];
            c->service = argv[i + 2];
            c->user = argv[i + 3];
            c->expect = parse_code(argv[i + 4]);
            c->answer = "";
            i += 4;
        } else if (strcmp(a, "--answer") == 0 && left >= 1 && ncases > 0 && cases[ncases - 1].kind == PAM_CASE) {
            cases[ncases - 1].answer = argv[++i];
        } else if (strcmp(a, "--argon2") == 0 && left >= 3) {
            struct bench_case *c = new_case();
            c->kind = ARGON2_CASE;
            c->label = argv[i + 1];
            c->hash = argv[i + 2];
            c->password = argv[i + 3];
            c->expect = 0;
            need_sodium = 1;
            i += 3;
        } else if (strcmp(a, "--run") == 0 && left >= 2) {
            struct bench_case *c = new_case();
            c->label = argv[++i];
            c->argv = &argv[i + 1];
            while (i + 1 < argc && strcmp(argv[i + 1], ";") != 0) i++;
            if (i + 1 >= argc) usage();
            argv[++i] = NULL; /* the ';' ends this command's argv */
            if (!c->argv[0]) usage();
        } else usage();
    }
    if (ncases == 0) usage();
    for (int k = 0; k < ncases; k++) {
        cases[k].t = malloc(sizeof(double) * (size_t)(strcmp(mode, "parallel") == 0 ? 1 : n));
        cases[k].cpu = malloc(sizeof(double) * (size_t)(strcmp(mode, "parallel") == 0 ? 1 : n));
        if (!cases[k].t || !cases[k].cpu) return 70;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (need_sodium) load_sodium();
    if (strcmp(mode, "spawn") == 0) {
        for (int k = 0; k < ncases; k++) if (!cases[k].argv) usage();
        return run_spawn();
    }
    for (int k = 0; k < ncases; k++) if (cases[k].argv) usage();
    if (!confdir && !(ncases > 0 && cases[0].kind == ARGON2_CASE && ncases == 1)) usage();
    if (strcmp(mode, "loop") == 0) return run_loop();
    if (strcmp(mode, "parallel") == 0) {
        if (ncases != 1) usage();
        return run_parallel();
    }
    usage();
    return 64;
}
