/*
 * Fuzz target: the PAM module's entry points, through real libpam, at speed.
 *
 * Each input is one PAM transaction (pam_start_confdir, pam_authenticate once or twice,
 * pam_setcred, pam_end) against build/fuzz/pam_biounlock_fuzz.so: the module's sources compiled
 * with AddressSanitizer, coverage and -D BIOUNLOCK_FUZZ. The input decides everything the
 * outside world would: the module arguments, the config file, the PAM service and items, the
 * PAM environment, the conversation's answers, the store's rows, the reader's replies, the
 * terminal's keys, the clock, the boot id, which of SQLite's allocations fail, and which of the
 * module's system calls fail or come up short.
 *
 * What the fuzz build changes (and nothing that ships has; LinkageTests checks the shipped .so):
 *   - Argon2id at libsodium's minimum cost (1 pass, 8 KiB) for the timing equaliser and for new
 *     hashes, and stored hashes above 2 passes or 64 KiB refused as "cost too high" (shipped: 16
 *     passes, 1 GiB), so that a verification costs microseconds and a fuzzed row cannot ask for
 *     seconds (Sources/BiounlockCore/Secrets/Passcode.swift).
 *   - The reader, the controlling terminal, the wall clock and the boot id are scripted
 *     (Sources/PamBiounlock/FuzzWorld.swift): the reader answers at once from the input (a scan
 *     matches when its id is the data of one of the user's templates, as the simulated sensor
 *     decides), so no input waits out a deadline; the terminal replays keys; Ctrl-C's SIGINT is
 *     not sent. Exported entries (Fuzz/Targets/module-exports.map) set that world and report
 *     readers and terminals left open.
 *   - BiounlockSystem is compiled with -D BIOUNLOCK_FAULTS: its funnel asks a fault schedule,
 *     installed for this thread only around each transaction, before each system call
 *     (biounlock_fuzz_faults_begin/_end). SQLite's own system calls do not pass through it;
 *     its allocations fail through sqlite3_config(SQLITE_CONFIG_MALLOC) instead.
 * Everything else is the shipped code path: libpam, the option parser and the trust checks on
 * the config file and the store, NSS, the session probe (PAM_RHOST, PAM_TTY, the environment,
 * lid and logind files), SQLite on a tmpfs (/dev/shm), the counters, the audit log, PAM_AUTHTOK.
 *
 * Security-relevant oracle, checked after every input (abort() so that libFuzzer keeps it):
 *   - PAM_SUCCESS only if the input holds what proves the user: a reader reply scanning an id
 *     that is the data of one of the user's template rows, or an answer (conversation or
 *     terminal) that is the secret of a well-formed hash the harness stored for the user (as
 *     typed, or as a pattern's canonical path). Never for a damaged, missing or untrusted store,
 *     never for a garbage or foreign hash.
 *   - A single pam_authenticate that succeeds leaves PAM_AUTHTOK unset (the passcode is never
 *     handed on).
 *   - No descriptor left open (/proc/self/fd counted before and after), no reader or terminal
 *     left unreleased; leaks are ASan's (-detect_leaks=1).
 * Every input is valid: choices are bytes taken modulo what they choose from; missing bytes
 * read as 0. No input sleeps: the only waits are SQLite's and the write queue's, which no other
 * process contends for.
 *
 * Input: 59 control bytes (missing ones read as 0), then fields separated by NUL bytes:
 *   0 a raw user name   1 module arguments (before the fixed db=, config=, lid_path=,
 *   logind_path=, which win)   2 config file text   3 PAM_RHOST   4 PAM_TTY   5 PAM_RUSER
 *   6 reader script   7 terminal keys   8 fault schedule   9… answers, in order: a first byte of 1 answers NULL
 *   text, 2 fails the conversation, 3 answers a NULL array, 4 up to 1 MiB of 'a'; when they
 *   run out, prompts get NULL text.
 * Control bytes:
 *   c0  bits: 0 PAM_SILENT, 1 pam_setcred after, 2 authenticate twice, 3 setcred with
 *       PAM_DELETE_CRED, 4 a controlling terminal, 5 PAM_RUSER, 6 PAM_RHOST, 7 PAM_TTY set
 *   c1  user: daemon nobody sys bin root (raw) (none: pam_get_user asks) daemon
 *   c2  service: sudo login other xscreensaver su polkit-1
 *   c3  store: 0-6 the store, 7 its lock file writable by others, 8 not a database, 9 an old
 *       schema, 10 a newer one, 11 empty, 12 writable by others, 13 a directory, 14 a symlink,
 *       15 missing
 *   c4  config: 0-1 the text of field 2, 2 missing, 3 writable by others
 *   c5  bits: 0 SSH_CONNECTION, 1 SSH_CLIENT, 2 XDG_SESSION_ID of a remote logind session,
 *       3 XDG_SESSION_ID of a local one, 4 the lid closed, 5 no sensor=simulated before the
 *       fuzzed words (the backend is then what they or the config say, else auto)
 *   c6  boot id: A, B, unreadable
 *   c7 c8 c9  SQLite allocation failure: if c9 bit 0, allocation number c7 + 256 * (c8 % 16)
 *       + 1 of the transaction fails (c9 bit 1: and every one after it)
 *   c10 bit 0: the audit log's next row is a pruning one (id 256); bits 1-2: how many rows
 *   c11… 3 store rows, 16 bytes each:
 *       0 name (daemon nobody sys bin root raw)   1 bit 0 enabled
 *       2 passcode (0 none, 1-6 a well-formed hash, 7 argon2i, 8-11 garbage; / 12: its kind)
 *       3 garbage hash, and / 12: bio_failures      4 passcode_failures   5 bio_failure_at
 *       6 passcode_failure_at   7 passcode_success_at   8 passcode_boot_id
 *       9 enrolment versions   10 uid binding   11-13 templates (data, finger, sensor)
 *       14 bits 0-3 service overrides, 4-5 how many templates   15 last_success
 * Reader script: byte 0 opening (% 4: 0-1 opens, 2 unavailable, 3 nothing enrolled), then
 *   replies: kind % 6: 0-1 scan (next byte: which id), 2 retry (next byte: code), 3 device
 *   error, 4 timeout, 5 "a key was pressed" / the wait limit. When they run out: timeout.
 * Terminal keys: kind % 6: 0 nothing yet, 1 a line (next byte: which answer), 2 Enter alone,
 *   3 too long, 4 closed, 5 Ctrl-C. When they run out: closed.
 * Fault schedule: BiounlockSystem's FaultSchedule(fuzzInput:), 4 bytes a rule (call, fault,
 *   skip, count, each taken modulo its choices): the module's system calls (through the layer's
 *   one funnel) fail with EINTR, EAGAIN, ENOSPC, EIO, EMFILE or ENOMEM, or transfer 1 or 7 bytes.
 * BIOUNLOCK_FUZZ_VERBOSE=1 prints each transaction's PAM codes and audit row (for seeds).
 *
 * Needs BIOUNLOCK_FUZZ_DIR (a root-only directory on a tmpfs with a store made by the real CLI:
 * Tests/EndToEnd/lib/world.bash) and BIOUNLOCK_FUZZ_MODULE (the instrumented module);
 * scripts/fuzz sets them. Seeds: Fuzz/corpus/module, made by Fuzz/Targets/module-seeds.py.
 */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <sodium.h>
#include <sqlite3.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fuzz build's world (Sources/PamBiounlock/FuzzWorld.swift). */
extern void biounlock_fuzz_world(int64_t now, const char *boot_id, const uint8_t *reader, long reader_count,
                                 const uint8_t *keys, long key_count, int has_terminal);
extern int biounlock_fuzz_unreleased(void);
extern void biounlock_fuzz_faults_begin(const uint8_t *rules, long count);
extern int biounlock_fuzz_faults_end(void);

#define NOW ((int64_t)1796083200) /* 2026-12-01T00:00:00Z */

static char world[512], module[512];
static int verbose;
static sqlite3 *db;
static sqlite3_stmt *st_user, *st_template, *st_override, *st_event;

/* ---- input ---- */
#define MAX_FIELDS 32
#define CONTROL_BYTES 59 /* 11, then 3 rows of 16 */
enum { F_USER, F_ARGS, F_CONFIG, F_RHOST, F_TTY, F_RUSER, F_READER, F_KEYS, F_FAULTS, ANSWERS };
struct fields { const uint8_t *control; size_t control_n; const uint8_t *p[MAX_FIELDS]; size_t n[MAX_FIELDS]; int count; };

static void split(const uint8_t *data, size_t size, struct fields *f) {
    f->control = data;
    f->control_n = size < CONTROL_BYTES ? size : CONTROL_BYTES;
    f->count = 0;
    if (size <= CONTROL_BYTES) return;
    data += CONTROL_BYTES;
    size -= CONTROL_BYTES;
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

static size_t field_len(const struct fields *f, int i) { return i < f->count ? f->n[i] : 0; }
static const uint8_t *field_ptr(const struct fields *f, int i) { return i < f->count ? f->p[i] : (const uint8_t *)""; }
static uint8_t control(const struct fields *f, size_t i) { return i < f->control_n ? f->control[i] : 0; }

/* A field as a C string (at most `max` bytes, so no fuzzed name or item is megabytes). */
static char *field_string(const struct fields *f, int i, size_t max) {
    size_t n = field_len(f, i);
    if (n > max) n = max;
    char *s = malloc(n + 1);
    if (!s) abort();
    memcpy(s, field_ptr(f, i), n);
    s[n] = 0;
    return s;
}

/* ---- SQLite's allocator: the n-th allocation of a transaction can fail ---- */
static int alloc_armed, alloc_persistent;
static long alloc_count, alloc_fail_at;

static int alloc_fails(void) {
    if (!alloc_armed) return 0;
    alloc_count++;
    return alloc_count == alloc_fail_at || (alloc_persistent && alloc_count > alloc_fail_at);
}
static void *fz_malloc(int n) {
    if (n <= 0 || alloc_fails()) return NULL;
    sqlite3_int64 *p = malloc((size_t)n + 16);
    if (!p) return NULL;
    p[0] = n;
    return (char *)p + 16;
}
static void fz_free(void *p) { if (p) free((char *)p - 16); }
static void *fz_realloc(void *p, int n) {
    if (n <= 0 || alloc_fails()) return NULL;
    sqlite3_int64 *q = realloc((char *)p - 16, (size_t)n + 16);
    if (!q) return NULL;
    q[0] = n;
    return (char *)q + 16;
}
static int fz_size(void *p) { return p ? (int)((sqlite3_int64 *)((char *)p - 16))[0] : 0; }
static int fz_roundup(int n) { return (n + 7) & ~7; }
static int fz_init(void *x) { (void)x; return SQLITE_OK; }
static void fz_shutdown(void *x) { (void)x; }
static const sqlite3_mem_methods fz_mem = { fz_malloc, fz_free, fz_realloc, fz_size, fz_roundup, fz_init, fz_shutdown, NULL };

/* ---- what the store may hold ---- */
static const char *names[6] = { "daemon", "nobody", "sys", "bin", "root", NULL /* the raw name */ };
static uid_t uids[5];

/* Well-formed hashes of known secrets (cheap: the harness hashes them once at start). */
struct passcode { const char *kind, *secret; int alg; char hash[crypto_pwhash_STRBYTES]; };
static struct passcode passcodes[] = {
    { "pin", "2468", crypto_pwhash_ALG_ARGON2ID13, "" },
    { "password", "hunter22", crypto_pwhash_ALG_ARGON2ID13, "" },
    { "pattern", "12369", crypto_pwhash_ALG_ARGON2ID13, "" },   /* typed 1369 too */
    { "password", "2468", crypto_pwhash_ALG_ARGON2ID13, "" },   /* a PIN's digits, stored as a password */
    { "pin", "13579", crypto_pwhash_ALG_ARGON2ID13, "" },
    { "pin", "", crypto_pwhash_ALG_ARGON2ID13, "" },            /* the empty string: nothing can type it */
    { "pin", "2468", crypto_pwhash_ALG_ARGON2I13, "" },         /* argon2i: refused, never verified */
};
#define GOOD_PASSCODES 6 /* the first six verify as Argon2id */

/* Hashes nothing may verify against. */
static const char *garbage[] = {
    "", "x", "$argon2id$", "$argon2id$v=19$m=8,t=1,p=1$",
    "$argon2id$v=19$m=8,t=1,p=1$c29tZXNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
    "$argon2id$v=19$m=99999999999,t=1,p=1$c29tZXNhbHQ$aGFzaA",
    "$argon2id$v=19$m=1048577,t=1,p=1$c29tZXNhbHQ$aGFzaA",
    "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$RdescudvJCsgt3ub+b+dWRWJTmaaJObGvuHrJPnE0Hg",
    "$argon2id$v=19$m=8,t=0,p=1$c29tZXNhbHQ$aGFzaA", "$argon2id$v=19$m=8,t=17,p=1$c29tZXNhbHQ$aGFzaA",
    "$argon2id$v=19$m=8,t=1,p=2$c29tZXNhbHQ$aGFzaA", "$argon2id$v=16$m=8,t=1,p=1$c29tZXNhbHQ$aGFzaA",
    "$argon2id$v=19$t=1,m=8,p=1,x=2$c29tZXNhbHQ$aGFzaA", "$argon2id$v=19$m=-8,t=1,p=1$c29tZXNhbHQ$aGFzaA",
    "$argon2id$v=19$m=8,t=1,p=1$$", "$argon2id$v=19$m=8,t=1,p=1$!!!!$????",
    "$2y$10$abcdefghijklmnopqrstuu5ZmqHjXbQaKTRsHrmCQ3i9/qKOsS6", NULL /* truncated */, NULL /* one byte changed */,
    NULL /* 600 bytes */,
};
#define GARBAGE (sizeof garbage / sizeof garbage[0])
static char garbage_truncated[crypto_pwhash_STRBYTES], garbage_changed[crypto_pwhash_STRBYTES], garbage_long[601];

/* Template data the store may hold, and the ids a scan may present. */
static const char *template_ids[5] = { "id-a", "id-b", "id-c", "", "x" };
static const char *scan_ids[6] = { "id-a", "id-b", "id-c", "mallory", "x", "id-a " };
static const char *fingers[4] = { "right-index", "left-thumb", "left-little", "elbow" };
static const char *sensors[4] = { "simulated", "libfprint", "fprintd", "simulated" };
static const char *services[6] = { "sudo", "login", "other", "xscreensaver", "su", "polkit-1" };

static int64_t time_value(uint8_t b, int *null) {
    static const int64_t table[10] = { 0, NOW - 5, NOW - 90, NOW - 400, NOW - 7200, NOW - 4 * 86400, NOW + 3600, INT64_MAX, INT64_MIN, 0 };
    *null = b % 10 == 0;
    return table[b % 10];
}
static int64_t count_value(uint8_t b) {
    static const int64_t table[10] = { 0, 1, 2, 3, 4, 5, 6, 9, 1000000, INT64_MAX };
    return table[b % 10];
}

/* The ids the reader script scans (at most one reply per script byte). */
static const char *scanned[256];
static int scanned_count;

/* What the oracle needs to know about the rows the harness wrote. */
struct row { const char *name; int secret; /* index into passcodes, or -1 */ const char *data[3]; int templates; };
static struct row rows[3];
static int row_count;

/* ---- setup ---- */
static void fail(const char *what) {
    fprintf(stderr, "fuzz-module: %s: %s\n", what, db ? sqlite3_errmsg(db) : strerror(errno));
    abort();
}
static void exec_sql(const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) { fprintf(stderr, "fuzz-module: %s: %s\n", sql, err ? err : "?"); abort(); }
}
static void write_file(const char *path, const void *text, size_t n, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0 || (n && write(fd, text, n) != (ssize_t)n) || fchmod(fd, mode) != 0 || close(fd) != 0) fail(path);
}
static void path_in(char *out, size_t size, const char *relative) { snprintf(out, size, "%s/%s", world, relative); }

static char store_paths[16][700], config_paths[4][700], lid_state[700];

static void copy_store(const char *to, int user_version) {
    char sql[900];
    unlink(to);
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", to);
    exec_sql(sql);
    if (user_version >= 0) {
        sqlite3 *other = NULL;
        if (sqlite3_open_v2(to, &other, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) fail(to);
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", user_version);
        if (sqlite3_exec(other, sql, NULL, NULL, NULL) != SQLITE_OK) fail(to);
        sqlite3_close(other);
    }
    chmod(to, 0600);
}

/* The harness's own connection to the store, open for the whole run: reopening it for every
   input (schema parse, WAL files, checkpoints) cost more than the transaction. In WAL mode it
   keeps a shared lock on the file, so SQLite defers closing the module's descriptor of it and
   reuses that descriptor at the module's next open: one descriptor more after the first
   transaction, then steady (LLVMFuzzerInitialize runs one transaction before counting). A
   connection or descriptor the module leaks still shows as one more after an input. */
static void open_store(void) {
    char path[700];
    path_in(path, sizeof path, "store/biounlock.db");
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) fail(path);
    sqlite3_busy_timeout(db, 5000);
    exec_sql("PRAGMA synchronous = OFF"); /* the harness's own writes need no durability */
    if (sqlite3_prepare_v2(db,
            "INSERT OR IGNORE INTO users(name, enabled, passcode_hash, passcode_kind, bio_failures, passcode_failures, last_success,"
            " last_failure, created, bio_failure_at, passcode_failure_at, passcode_success_at, passcode_boot_id,"
            " passcode_enrolment_version, enrolment_version, uid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, 0, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            -1, &st_user, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO templates(user, finger, sensor, data, created) VALUES (?1, ?2, ?3, ?4, 0)", -1, &st_template, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO service_overrides(user, service, enabled) VALUES (?1, ?2, ?3)", -1, &st_override, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO events(id, time, user, service, tty, rhost, method, outcome, reason) VALUES (255, 0, 'old', 'sudo', '', '', 'none', 'ignore', 'old')",
            -1, &st_event, NULL) != SQLITE_OK)
        fail("prepare");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static int counting_descriptors = 1;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    const char *w = getenv("BIOUNLOCK_FUZZ_DIR"), *m = getenv("BIOUNLOCK_FUZZ_MODULE");
    if (!w || !m) {
        fprintf(stderr, "fuzz-module: set BIOUNLOCK_FUZZ_DIR and BIOUNLOCK_FUZZ_MODULE (scripts/fuzz does)\n");
        exit(2);
    }
    snprintf(world, sizeof world, "%s", w);
    verbose = getenv("BIOUNLOCK_FUZZ_VERBOSE") != NULL;
    snprintf(module, sizeof module, "%s", m);
    /* Never a terminal: nothing may read the fuzzer's keyboard. */
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) { dup2(null, 0); close(null); }
    if (sodium_init() < 0) fail("sodium_init");
    /* Before SQLite's first use (the module shares this libsqlite3). */
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &fz_mem) != SQLITE_OK) fail("sqlite3_config");

    for (int i = 0; i < 5; i++) {
        struct passwd *pw = getpwnam(names[i]);
        uids[i] = pw ? pw->pw_uid : (uid_t)(4000 + i);
    }
    for (size_t i = 0; i < sizeof passcodes / sizeof passcodes[0]; i++) {
        /* argon2i's minimum is 3 passes */
        unsigned long long ops = passcodes[i].alg == crypto_pwhash_ALG_ARGON2I13 ? 3 : 1;
        if (crypto_pwhash_str_alg(passcodes[i].hash, passcodes[i].secret, strlen(passcodes[i].secret), ops, 8192, passcodes[i].alg) != 0)
            fail("crypto_pwhash_str_alg");
    }
    memcpy(garbage_truncated, passcodes[0].hash, strlen(passcodes[0].hash) - 5);
    snprintf(garbage_changed, sizeof garbage_changed, "%s", passcodes[0].hash);
    garbage_changed[strlen(garbage_changed) - 2] ^= 1;
    memset(garbage_long, '$', 600);
    garbage[GARBAGE - 3] = garbage_truncated;
    garbage[GARBAGE - 2] = garbage_changed;
    garbage[GARBAGE - 1] = garbage_long;

    char path[700];
    open_store();
    path_in(path, sizeof path, "store/biounlock.db");
    exec_sql("DELETE FROM templates; DELETE FROM service_overrides; DELETE FROM users; DELETE FROM events");

    /* The store and its damaged, untrusted or missing neighbours (db= chooses). */
    char dir[700];
    path_in(dir, sizeof dir, "bad"); mkdir(dir, 0700);
    path_in(dir, sizeof dir, "lockbad"); mkdir(dir, 0700);
    path_in(dir, sizeof dir, "conf"); mkdir(dir, 0700);
    for (int i = 0; i < 7; i++) snprintf(store_paths[i], sizeof store_paths[i], "%s", path);
    path_in(store_paths[7], sizeof store_paths[7], "lockbad/biounlock.db");
    copy_store(store_paths[7], -1);
    char lock[800];
    snprintf(lock, sizeof lock, "%s-lock", store_paths[7]);
    write_file(lock, "", 0, 0666);
    path_in(store_paths[8], sizeof store_paths[8], "bad/garbage.db");
    static const char not_a_database[] = "SQLite format 2\0this is not a database at all, not even close........";
    write_file(store_paths[8], not_a_database, sizeof not_a_database - 1, 0600);
    path_in(store_paths[9], sizeof store_paths[9], "bad/old.db");
    copy_store(store_paths[9], 2);
    path_in(store_paths[10], sizeof store_paths[10], "bad/new.db");
    copy_store(store_paths[10], 99);
    path_in(store_paths[11], sizeof store_paths[11], "bad/empty.db");
    write_file(store_paths[11], "", 0, 0600);
    path_in(store_paths[12], sizeof store_paths[12], "bad/open.db");
    copy_store(store_paths[12], -1);
    chmod(store_paths[12], 0666);
    path_in(store_paths[13], sizeof store_paths[13], "bad/dir.db");
    mkdir(store_paths[13], 0700);
    path_in(store_paths[14], sizeof store_paths[14], "bad/link.db");
    unlink(store_paths[14]);
    if (symlink(path, store_paths[14]) != 0) fail(store_paths[14]);
    path_in(store_paths[15], sizeof store_paths[15], "bad/missing.db");

    path_in(config_paths[0], sizeof config_paths[0], "conf/fuzz.conf");
    snprintf(config_paths[1], sizeof config_paths[1], "%s", config_paths[0]);
    path_in(config_paths[2], sizeof config_paths[2], "conf/missing.conf");
    path_in(config_paths[3], sizeof config_paths[3], "conf/open.conf");
    write_file(config_paths[3], "policy=biometrics\n", 18, 0666);

    /* A remote logind session (7); session 8 has no file. The lid: one switch, open. */
    path_in(path, sizeof path, "sessions/7");
    write_file(path, "UID=0\nREMOTE=1\n", 15, 0644);
    path_in(path, sizeof path, "lid/LID0"); mkdir(path, 0755);
    path_in(lid_state, sizeof lid_state, "lid/LID0/state");
    write_file(lid_state, "state:      open\n", 17, 0644);

    /* The transaction after which SQLite holds the module's deferred descriptor (above). */
    counting_descriptors = 0;
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    counting_descriptors = 1;
    return 0;
}

static void step(sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE) fail("insert");
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

/* Replaces every row with the input's (one transaction on the harness's own connection). */
static void write_rows(const struct fields *f, const char *raw_user, const char *service) {
    exec_sql("BEGIN IMMEDIATE; DELETE FROM templates; DELETE FROM service_overrides; DELETE FROM users; DELETE FROM events");
    row_count = 0;
    for (int r = 0; r < (control(f, 10) >> 1) % 4; r++) {
        size_t at = 11 + 16 * (size_t)r;
        uint8_t b[16];
        for (int i = 0; i < 16; i++) b[i] = control(f, at + (size_t)i);
        struct row *row = &rows[row_count++];
        int which = b[0] % 6;
        row->name = which == 5 ? raw_user : names[which];
        row->secret = -1;
        row->templates = 0;
        sqlite3_bind_text(st_user, 1, row->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st_user, 2, b[1] & 1);
        /* The passcode: 0 none, 1-6 a well-formed hash (sometimes of another kind, sometimes an
           unknown or missing kind), 7 argon2i, 8-11 garbage. */
        int choice = b[2] % 12;
        const char *hash = NULL, *kind = NULL;
        if (choice >= 1 && choice <= 6) {
            struct passcode *p = &passcodes[choice - 1];
            hash = p->hash; kind = p->kind;
            row->secret = choice - 1;
            switch (b[2] / 12 % 6) {
            case 1: kind = "pin"; break;
            case 2: kind = "pattern"; break;
            case 3: kind = NULL; break;
            case 4: kind = "face"; break;
            default: break;
            }
        } else if (choice == 7) {
            hash = passcodes[6].hash; kind = "pin";
        } else if (choice >= 8) {
            hash = garbage[b[3] % GARBAGE]; kind = (b[3] / GARBAGE) % 2 ? "password" : "pin";
        }
        if (hash) sqlite3_bind_text(st_user, 3, hash, -1, SQLITE_STATIC);
        if (kind) sqlite3_bind_text(st_user, 4, kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st_user, 5, count_value(b[3] / 12));
        sqlite3_bind_int64(st_user, 6, count_value(b[4]));
        int null;
        int64_t t = time_value(b[15], &null); if (!null) sqlite3_bind_int64(st_user, 7, t);
        t = time_value(b[5], &null); if (!null) sqlite3_bind_int64(st_user, 8, t);
        t = time_value(b[6], &null); if (!null) sqlite3_bind_int64(st_user, 9, t);
        t = time_value(b[7], &null); if (!null) sqlite3_bind_int64(st_user, 10, t);
        static const char *boots[4] = { NULL, "fuzz-boot-a", "fuzz-boot-b", "" };
        if (boots[b[8] % 4]) sqlite3_bind_text(st_user, 11, boots[b[8] % 4], -1, SQLITE_STATIC);
        int64_t version = b[9] % 4;
        switch (b[9] / 4 % 3) {
        case 0: sqlite3_bind_int64(st_user, 12, version); break;
        case 1: sqlite3_bind_int64(st_user, 12, version - 1); break;
        default: break;
        }
        sqlite3_bind_int64(st_user, 13, version);
        uid_t uid = which < 5 ? uids[which] : 4242;
        switch (b[10] % 6) {
        case 0: case 1: sqlite3_bind_int64(st_user, 14, uid); break;
        case 2: break;
        case 3: sqlite3_bind_int64(st_user, 14, (int64_t)uid + 1000); break;
        case 4: sqlite3_bind_int64(st_user, 14, -1); break;
        default: sqlite3_bind_int64(st_user, 14, (int64_t)1 << 40); break;
        }
        step(st_user);
        for (int j = 0; j < (b[14] >> 4) % 4; j++) {
            uint8_t tb = b[11 + j];
            const char *data = template_ids[tb % 5];
            sqlite3_bind_text(st_template, 1, row->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(st_template, 2, fingers[tb / 5 % 4], -1, SQLITE_STATIC);
            sqlite3_bind_text(st_template, 3, sensors[tb / 20 % 4], -1, SQLITE_STATIC);
            sqlite3_bind_blob(st_template, 4, data, (int)strlen(data), SQLITE_STATIC);
            step(st_template);
            row->data[row->templates++] = data;
        }
        if (b[14] & 1) {
            sqlite3_bind_text(st_override, 1, row->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(st_override, 2, service, -1, SQLITE_STATIC);
            sqlite3_bind_int(st_override, 3, (b[14] >> 1) & 1);
            step(st_override);
        }
        if (b[14] & 4) {
            sqlite3_bind_text(st_override, 1, row->name, -1, SQLITE_STATIC);
            sqlite3_bind_text(st_override, 2, "other", -1, SQLITE_STATIC);
            sqlite3_bind_int(st_override, 3, (b[14] >> 3) & 1);
            step(st_override);
        }
    }
    if (control(f, 10) & 1) step(st_event);
    exec_sql("COMMIT");
}

/* ---- the reader's replies and the terminal's keys, as records for FuzzWorld ---- */
struct script { uint8_t bytes[4096]; size_t n; };
static void record(struct script *s, uint8_t kind, const void *bytes, size_t n) {
    if (n > 255) n = 255;
    if (s->n + 2 + n > sizeof s->bytes) return;
    s->bytes[s->n++] = kind;
    s->bytes[s->n++] = (uint8_t)n;
    memcpy(s->bytes + s->n, bytes, n);
    s->n += n;
}

static const uint8_t *answer(const struct fields *f, int index, size_t *n) {
    int count = f->count - ANSWERS;
    if (count <= 0) { *n = 0; return NULL; }
    int i = ANSWERS + index % count;
    *n = f->n[i];
    return f->p[i];
}

/* ---- the conversation ---- */
struct conv_state { const struct fields *f; int next; };

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    struct conv_state *st = data;
    if (n <= 0 || n > PAM_MAX_NUM_MSG) return PAM_CONV_ERR;
    struct pam_response *out = calloc((size_t)n, sizeof *out);
    if (!out) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        if (msg[i]->msg_style != PAM_PROMPT_ECHO_OFF && msg[i]->msg_style != PAM_PROMPT_ECHO_ON) continue;
        int index = ANSWERS + st->next++;
        if (index >= st->f->count) continue; /* answers ran out: NULL text */
        const uint8_t *a = st->f->p[index];
        size_t len = st->f->n[index];
        if (len > 0 && a[0] == 1) continue;
        if (len > 0 && (a[0] == 2 || a[0] == 3)) {
            for (int j = 0; j < i; j++) free(out[j].resp);
            free(out);
            if (a[0] == 2) return PAM_CONV_ERR;
            *resp = NULL;
            return PAM_SUCCESS;
        }
        if (len > 0 && a[0] == 4) {
            size_t big = len > 2 ? ((size_t)a[1] << 8 | a[2]) % 1024 * 1024 + 1 : 1 << 20;
            out[i].resp = malloc(big + 1);
            if (!out[i].resp) abort();
            memset(out[i].resp, 'a', big);
            out[i].resp[big] = 0;
            continue;
        }
        out[i].resp = malloc(len + 1);
        if (!out[i].resp) abort();
        memcpy(out[i].resp, a, len);
        out[i].resp[len] = 0;
    }
    *resp = out;
    return PAM_SUCCESS;
}

/* ---- the oracle ---- */
/* A pattern's canonical path (Sources/BiounlockCore/Secrets/Pattern.swift), or 0 if none. */
static int canonical_pattern(const uint8_t *typed, size_t n, char *out, size_t size) {
    int used[10] = { 0 };
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (typed[i] < '1' || typed[i] > '9') return 0;
        int p = typed[i] - '0';
        if (used[p]) return 0;
        if (k > 0) {
            int a = out[k - 1] - '0';
            int ra = (a - 1) / 3, ca = (a - 1) % 3, rb = (p - 1) / 3, cb = (p - 1) % 3;
            if ((ra + rb) % 2 == 0 && (ca + cb) % 2 == 0) {
                int mid = (ra + rb) / 2 * 3 + (ca + cb) / 2 + 1;
                if (mid != a && mid != p && !used[mid]) {
                    if (k + 1 >= size) return 0;
                    used[mid] = 1;
                    out[k++] = (char)('0' + mid);
                }
            }
        }
        if (k + 1 >= size) return 0;
        used[p] = 1;
        out[k++] = (char)('0' + p);
    }
    out[k] = 0;
    return 1;
}

static int proves(const struct fields *f, const char *who) {
    if (!who) return 0;
    for (int r = 0; r < row_count; r++) {
        if (strcmp(rows[r].name, who) != 0) continue;
        /* A scan of one of the user's template ids (as the reader script was handed over). */
        for (int i = 0; i < scanned_count; i++)
            for (int t = 0; t < rows[r].templates; t++)
                if (rows[r].data[t][0] && strcmp(rows[r].data[t], scanned[i]) == 0) return 1;
        /* An answer that is the secret of a well-formed hash (typed, or a pattern's path). */
        if (rows[r].secret >= 0 && rows[r].secret < GOOD_PASSCODES) {
            const char *secret = passcodes[rows[r].secret].secret;
            size_t len = strlen(secret);
            for (int i = ANSWERS; i < f->count; i++) {
                char path[16];
                if (len > 0 && f->n[i] == len && memcmp(f->p[i], secret, len) == 0) return 1;
                if (len > 0 && canonical_pattern(f->p[i], f->n[i], path, sizeof path) && strcmp(path, secret) == 0) return 1;
            }
        }
    }
    return 0;
}

static int open_descriptors(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) abort();
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* ---- one input ---- */
static char last_lid[2] = { 0, 0 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct fields f;
    split(data, size, &f);
    uint8_t c0 = control(&f, 0), c5 = control(&f, 5);
    const char *service = services[control(&f, 2) % 6];
    int store_variant = control(&f, 3) % 16, config_variant = control(&f, 4) % 4;

    char *raw_user = field_string(&f, F_USER, 300), *args = field_string(&f, F_ARGS, 2000);
    write_rows(&f, raw_user, service);

    /* The fuzzed words come first, so that the fixed ones win; a line break would end the line,
       and an unbalanced bracket would swallow the fixed words. */
    int open_brackets = 0, close_brackets = 0;
    for (char *c = args; *c; c++) {
        if (*c == '\n' || *c == '\r') *c = ' ';
        open_brackets += *c == '['; close_brackets += *c == ']';
    }
    if (open_brackets != close_brackets) for (char *c = args; *c; c++) if (*c == '[' || *c == ']') *c = ' ';
    if (config_variant < 2) write_file(config_paths[0], field_ptr(&f, F_CONFIG), field_len(&f, F_CONFIG), 0600);
    char service_path[700];
    snprintf(service_path, sizeof service_path, "%s/pam.d/%s", world, service);
    FILE *svc = fopen(service_path, "w");
    if (!svc) abort();
    fprintf(svc, "auth [success=done ignore=ignore default=die] %s %s %s db=%s config=%s lid_path=%s/lid logind_path=%s/sessions proc_path=%s/proc\n",
            module, (c5 & 32) ? "" : "sensor=simulated", args, store_paths[store_variant], config_paths[config_variant], world, world, world);
    fclose(svc);
    char lid = (c5 & 16) ? 'c' : 'o';
    if (last_lid[0] != lid) {
        write_file(lid_state, lid == 'c' ? "state:      closed\n" : "state:      open\n", lid == 'c' ? 19 : 17, 0644);
        last_lid[0] = lid;
    }

    /* The reader and the terminal. */
    struct script reader = { .n = 0 }, keys = { .n = 0 };
    scanned_count = 0;
    const uint8_t *s = field_ptr(&f, F_READER);
    size_t sn = field_len(&f, F_READER);
    reader.bytes[reader.n++] = sn > 0 ? s[0] : 0;
    for (size_t i = 1; i < sn && i < 256; i++) {
        uint8_t kind = s[i] % 6, arg = i + 1 < sn ? s[i + 1] : 0;
        if (kind == 0 || kind == 1) {
            record(&reader, kind, scan_ids[arg % 6], strlen(scan_ids[arg % 6]));
            scanned[scanned_count++] = scan_ids[arg % 6];
        }
        else if (kind == 2) record(&reader, kind, &arg, 1);
        else record(&reader, kind, NULL, 0);
        if (kind <= 2) i++;
    }
    const uint8_t *k = field_ptr(&f, F_KEYS);
    size_t kn = field_len(&f, F_KEYS);
    for (size_t i = 0; i < kn && i < 256; i++) {
        uint8_t kind = k[i] % 6;
        if (kind == 1) {
            size_t len = 0;
            const uint8_t *line = answer(&f, i + 1 < kn ? k[i + 1] : 0, &len);
            record(&keys, kind, line, len);
            i++;
        } else {
            record(&keys, kind, NULL, 0);
        }
    }
    static const char *boots[3] = { "fuzz-boot-a", "fuzz-boot-b", NULL };
    biounlock_fuzz_world(NOW, boots[control(&f, 6) % 3], reader.bytes, (long)reader.n, keys.bytes, (long)keys.n, (c0 & 16) != 0);

    static const char *users[8] = { "daemon", "nobody", "sys", "bin", "root", NULL, NULL, "daemon" };
    int which = control(&f, 1) % 8;
    const char *user = which == 5 ? raw_user : users[which];

    int descriptors = open_descriptors();
    struct conv_state st = { &f, 0 };
    struct pam_conv conv = { conversation, &st };
    pam_handle_t *pamh = NULL;
    char confdir[700];
    snprintf(confdir, sizeof confdir, "%s/pam.d", world);
    if (pam_start_confdir(service, user, &conv, confdir, &pamh) != PAM_SUCCESS) abort();
    char *item;
    if (c0 & 32) { item = field_string(&f, F_RUSER, 300); pam_set_item(pamh, PAM_RUSER, item); free(item); }
    if (c0 & 64) { item = field_string(&f, F_RHOST, 300); pam_set_item(pamh, PAM_RHOST, item); free(item); }
    if (c0 & 128) { item = field_string(&f, F_TTY, 300); pam_set_item(pamh, PAM_TTY, item); free(item); }
    if (c5 & 1) pam_putenv(pamh, "SSH_CONNECTION=192.0.2.7 50000 192.0.2.1 22");
    if (c5 & 2) pam_putenv(pamh, "SSH_CLIENT=192.0.2.7 50000 22");
    if (c5 & 4) pam_putenv(pamh, "XDG_SESSION_ID=7");
    if (c5 & 8) pam_putenv(pamh, "XDG_SESSION_ID=8");

    uint8_t c9 = control(&f, 9);
    alloc_count = 0;
    alloc_fail_at = (long)control(&f, 7) + 256 * (long)(control(&f, 8) % 16) + 1;
    alloc_persistent = (c9 & 2) != 0;
    alloc_armed = c9 & 1;
    biounlock_fuzz_faults_begin(field_ptr(&f, F_FAULTS), (long)field_len(&f, F_FAULTS));
    int rc = pam_authenticate(pamh, (c0 & 1) ? PAM_SILENT : 0);
    int rc2 = (c0 & 4) ? pam_authenticate(pamh, 0) : PAM_AUTH_ERR;

    if (rc == PAM_SUCCESS || rc2 == PAM_SUCCESS) {
        const void *who = NULL;
        pam_get_item(pamh, PAM_USER, &who);
        if (store_variant >= 7 || !proves(&f, who)) {
            fprintf(stderr, "fuzz-module: PAM_SUCCESS for %s (store %d) without its finger or passcode in the input\n",
                    who ? (const char *)who : "(null)", store_variant);
            abort();
        }
    }
    if (rc == PAM_SUCCESS && !(c0 & 4)) {
        /* A success hands nothing on: a verified passcode never becomes PAM_AUTHTOK. */
        const void *token = NULL;
        if (pam_get_item(pamh, PAM_AUTHTOK, &token) == PAM_SUCCESS && token) {
            fprintf(stderr, "fuzz-module: PAM_SUCCESS with PAM_AUTHTOK set\n");
            abort();
        }
    }
    if (c0 & 2) pam_setcred(pamh, (c0 & 8) ? PAM_DELETE_CRED : PAM_ESTABLISH_CRED);
    pam_end(pamh, rc);
    alloc_armed = 0;
    int injected = biounlock_fuzz_faults_end();

    if (verbose) {
        sqlite3_stmt *q = NULL;
        fprintf(stderr, "fuzz-module: rc=%s", pam_strerror(NULL, rc));
        if (c0 & 4) fprintf(stderr, " rc2=%s", pam_strerror(NULL, rc2));
        if (injected) fprintf(stderr, " faults=%d", injected);
        if (sqlite3_prepare_v2(db, "SELECT user, method, outcome, reason FROM events WHERE reason != 'old' ORDER BY id", -1, &q, NULL) == SQLITE_OK)
            while (sqlite3_step(q) == SQLITE_ROW)
                fprintf(stderr, " [%s %s %s %s]", sqlite3_column_text(q, 0), sqlite3_column_text(q, 1), sqlite3_column_text(q, 2), sqlite3_column_text(q, 3));
        sqlite3_finalize(q);
        fprintf(stderr, "\n");
    }
    if (biounlock_fuzz_unreleased() != 0) {
        fprintf(stderr, "fuzz-module: a reader or terminal was left open\n");
        abort();
    }
    int after = open_descriptors();
    if (counting_descriptors && after != descriptors) {
        fprintf(stderr, "fuzz-module: %d descriptors open before the transaction, %d after:\n", descriptors, after);
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char link[300], target[300] = "";
            snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n > 0) target[n] = 0;
            fprintf(stderr, "  %s -> %s\n", e->d_name, target);
        }
        if (d) closedir(d);
        abort();
    }
    free(raw_user);
    free(args);
    return 0;
}
