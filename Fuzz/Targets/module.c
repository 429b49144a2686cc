/*
 * Fuzz target: the PAM module's entry point, through real libpam.
 *
 * Each input is one transaction: pam_start_confdir against an instrumented build of the module
 * (build/fuzz/pam_biounlock_fuzz.so, the same sources as build/pam_biounlock.so) with a fuzzed
 * tail of the service line, a fuzzed or chosen user, fuzzed conversation answers and fuzzed
 * commands to the simulated sensor, sent by a "finger" thread while the reader listens.
 *
 * Input: fields separated by NUL bytes.
 *   0  control: byte 0 bits 0 PAM_SILENT, 1 pam_setcred after, 2 no user (pam_get_user asks),
 *      3-5 which user, 6 a remote PAM_RHOST, 7 authenticate twice on one handle
 *   1  a raw user name (users 6 and 7)
 *   2  module arguments, before the fixed ones (db=, sim_socket=, timeout=1, ... which win)
 *   3  simulated sensor commands, one per line (UNPLUG is always sent last)
 *   4… conversation answers in order; a first byte of 1 answers NULL text, 2 fails the
 *      conversation, 3 answers PAM_SUCCESS with a NULL array, 4 answers up to 1 MiB of 'a'.
 *      When they run out, prompts get NULL text.
 *
 * Oracle: besides "no crash, no leak, no hang", PAM_SUCCESS is allowed only for a user whose
 * passcode or enrolled finger id appears somewhere in the input.
 *
 * Needs BIOUNLOCK_FUZZ_DIR (a world made by Tests/EndToEnd/lib/world.bash: store, users, sim
 * socket directory), BIOUNLOCK_FUZZ_ARGS (its module arguments, world_args) and
 * BIOUNLOCK_FUZZ_MODULE (the instrumented module). scripts/fuzz sets them.
 */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <sodium.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct known_user { const char *name, *secret, *finger; };
static const struct known_user known[] = {
    { "daemon", "2468", "daemon-right-index" },      /* PIN and finger, enabled */
    { "nobody", "hunter22", "nobody-right-index" },  /* password and finger, enabled */
    { "sys", NULL, "sys-right-index" },              /* finger only (policy=biometrics) */
};
static const char *users[8] = { "daemon", "daemon", "nobody", "sys", "bin", "root", NULL, NULL };

static char world[512], module[512], confdir[600], sim_socket[600], fixed_args[4096];
static sqlite3 *db;

#define MAX_FIELDS 16
struct fields { const uint8_t *p[MAX_FIELDS]; size_t n[MAX_FIELDS]; int count; };

static void split(const uint8_t *data, size_t size, struct fields *f) {
    f->count = 0;
    size_t start = 0;
    for (size_t i = 0; i <= size && f->count < MAX_FIELDS; i++) {
        if (i == size || data[i] == 0) {
            f->p[f->count] = data + start;
            f->n[f->count] = i - start;
            f->count++;
            start = i + 1;
        }
    }
}

static char *field_string(const struct fields *f, int i) {
    if (i >= f->count) return strdup("");
    char *s = malloc(f->n[i] + 1);
    memcpy(s, f->p[i], f->n[i]);
    s[f->n[i]] = 0;
    return s;
}

/* ---- conversation ---- */
struct conv_state { const struct fields *f; int next; };

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    struct conv_state *st = data;
    struct pam_response *out = calloc((size_t)n, sizeof *out);
    if (!out) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        if (msg[i]->msg_style != PAM_PROMPT_ECHO_OFF && msg[i]->msg_style != PAM_PROMPT_ECHO_ON) continue;
        int index = st->next++;
        if (index + 4 >= st->f->count) continue; /* answers ran out: NULL text */
        const uint8_t *a = st->f->p[index + 4];
        size_t len = st->f->n[index + 4];
        if (len > 0 && a[0] == 1) continue;
        if (len > 0 && a[0] == 2) { for (int j = 0; j < i; j++) free(out[j].resp); free(out); return PAM_CONV_ERR; }
        if (len > 0 && a[0] == 3) { for (int j = 0; j < i; j++) free(out[j].resp); free(out); *resp = NULL; return PAM_SUCCESS; }
        if (len > 0 && a[0] == 4) {
            size_t big = len > 2 ? ((size_t)a[1] << 8 | a[2]) % 1024 * 1024 + 1 : 1 << 20;
            out[i].resp = malloc(big + 1);
            memset(out[i].resp, 'a', big);
            out[i].resp[big] = 0;
            continue;
        }
        out[i].resp = malloc(len + 1);
        memcpy(out[i].resp, a, len);
        out[i].resp[len] = 0;
    }
    *resp = out;
    return PAM_SUCCESS;
}

/* ---- the finger: sends the commands while the reader listens ---- */
struct finger { const struct fields *f; atomic_int stop; };

static int send_command(const char *command, size_t len) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sim_socket);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) { close(fd); return -1; }
    ssize_t w = write(fd, command, len);
    (void)w;
    shutdown(fd, SHUT_WR);
    struct pollfd p = { .fd = fd, .events = POLLIN };
    char buf[64];
    while (poll(&p, 1, 500) > 0 && read(fd, buf, sizeof buf) > 0) {}
    close(fd);
    return 0;
}

static void *finger_main(void *arg) {
    struct finger *fg = arg;
    const uint8_t *cmds = fg->f->count > 3 ? fg->f->p[3] : NULL;
    size_t left = fg->f->count > 3 ? fg->f->n[3] : 0;
    int last = 0;
    while (!atomic_load(&fg->stop)) {
        const char *command = "UNPLUG";
        size_t len = 6;
        if (left > 0) {
            const uint8_t *nl = memchr(cmds, '\n', left);
            len = nl ? (size_t)(nl - cmds) : left;
            command = (const char *)cmds;
        } else if (last) {
            break;
        }
        if (send_command(command, len) == 0) {
            if (left > 0) {
                size_t used = len < left ? len + 1 : left;
                cmds += used; left -= used;
            } else {
                last = 1;
            }
        } else {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* ---- setup ---- */
static void exec_sql(const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "fuzz-module: %s: %s\n", sql, err ? err : "?");
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    const char *w = getenv("BIOUNLOCK_FUZZ_DIR"), *m = getenv("BIOUNLOCK_FUZZ_MODULE");
    if (!w || !m || !getenv("BIOUNLOCK_FUZZ_ARGS")) {
        fprintf(stderr, "fuzz-module: set BIOUNLOCK_FUZZ_DIR, BIOUNLOCK_FUZZ_ARGS and BIOUNLOCK_FUZZ_MODULE (scripts/fuzz does)\n");
        exit(2);
    }
    snprintf(world, sizeof world, "%s", w);
    snprintf(module, sizeof module, "%s", m);
    snprintf(confdir, sizeof confdir, "%s/pam.d", world);
    snprintf(sim_socket, sizeof sim_socket, "%s/sim/s", world);
    const char *a = getenv("BIOUNLOCK_FUZZ_ARGS");
    snprintf(fixed_args, sizeof fixed_args, "%s timeout=1", a ? a : "");
    /* Never a terminal: the type-or-touch prompt must not read the fuzzer's keyboard. */
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) { dup2(null, 0); close(null); }
    char path[700];
    snprintf(path, sizeof path, "%s/store/biounlock.db", world);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK || sodium_init() < 0) abort();
    sqlite3_busy_timeout(db, 5000);
    /* Cheap Argon2id hashes, so that a verification costs microseconds, not 0.1 s. */
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (!known[i].secret) continue;
        char hash[crypto_pwhash_STRBYTES], sql[512];
        if (crypto_pwhash_str_alg(hash, known[i].secret, strlen(known[i].secret), 1, 8192, crypto_pwhash_ALG_ARGON2ID13) != 0) abort();
        snprintf(sql, sizeof sql, "UPDATE users SET passcode_hash = '%s' WHERE name = '%s'", hash, known[i].name);
        exec_sql(sql);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct fields f;
    split(data, size, &f);
    uint8_t control = f.n[0] > 0 ? f.p[0][0] : 0;

    /* Each transaction starts from the same counters; the audit log does not grow without end. */
    exec_sql("UPDATE users SET bio_failures = 0, passcode_failures = 0, bio_failure_at = NULL, passcode_failure_at = NULL;"
             "DELETE FROM events");

    char *raw_user = field_string(&f, 1), *args = field_string(&f, 2);
    /* The fuzzed words come first, so that the fixed ones win; a line break would end the
       line, and an unbalanced bracket would swallow the fixed words. */
    int open_brackets = 0, close_brackets = 0;
    for (char *c = args; *c; c++) {
        if (*c == '\n' || *c == '\r') *c = ' ';
        open_brackets += *c == '['; close_brackets += *c == ']';
    }
    if (open_brackets != close_brackets) for (char *c = args; *c; c++) if (*c == '[' || *c == ']') *c = ' ';
    char service_path[700];
    snprintf(service_path, sizeof service_path, "%s/fuzz", confdir);
    FILE *svc = fopen(service_path, "w");
    if (!svc) abort();
    fprintf(svc, "auth [success=done ignore=ignore default=die] %s %s %s\n", module, args, fixed_args);
    fclose(svc);

    const char *user = (control & 4) ? NULL : users[(control >> 3) & 7];
    if (!(control & 4) && user == NULL) user = raw_user;

    struct conv_state st = { &f, 0 };
    struct pam_conv conv = { conversation, &st };
    pam_handle_t *pamh = NULL;
    if (pam_start_confdir("fuzz", user, &conv, confdir, &pamh) != PAM_SUCCESS) abort();
    if (control & 64) pam_set_item(pamh, PAM_RHOST, (control & 1) ? "attacker.example" : "localhost");

    struct finger fg = { &f, 0 };
    pthread_t thread;
    pthread_create(&thread, NULL, finger_main, &fg);
    int rc = pam_authenticate(pamh, (control & 1) ? PAM_SILENT : 0);
    int rc2 = (control & 128) ? pam_authenticate(pamh, 0) : PAM_AUTH_ERR;
    atomic_store(&fg.stop, 1);
    pthread_join(thread, NULL);

    if (rc == PAM_SUCCESS || rc2 == PAM_SUCCESS) {
        const void *item = NULL;
        pam_get_item(pamh, PAM_USER, &item);
        const char *who = item;
        int allowed = 0;
        for (size_t i = 0; who && i < sizeof known / sizeof known[0]; i++) {
            if (strcmp(who, known[i].name) != 0) continue;
            if (known[i].secret && memmem(data, size, known[i].secret, strlen(known[i].secret))) allowed = 1;
            if (memmem(data, size, known[i].finger, strlen(known[i].finger))) allowed = 1;
        }
        if (!allowed) {
            fprintf(stderr, "fuzz-module: PAM_SUCCESS for %s without its passcode or finger in the input\n", who ? who : "(null)");
            abort();
        }
    }
    if (control & 2) pam_setcred(pamh, PAM_ESTABLISH_CRED);
    pam_end(pamh, rc);
    free(raw_user);
    free(args);
    return 0;
}
