/*
 * wal-recovery: what a new connection to a WAL-mode SQLite store costs when the WAL it finds still
 * holds frames, against one whose WAL is empty -- the price of leaving the WAL uncheckpointed when
 * a connection closes (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE), which would spare every passcode and
 * touch success the close-time checkpoint's two syncs. A connection that opens a store no other
 * process has open rebuilds the WAL index (the -shm file) from the WAL, reading every frame; in the
 * module each sudo is such a connection, enrolled or not.
 *
 *   wal-recovery [--n N] DIR
 *
 * For each case it makes DIR/walrec-FRAMES.db with a users table like the store's, in WAL mode,
 * and leaves FRAMES committed one-page transactions in the WAL (0: checkpointed and truncated at
 * close, as the module's connections leave it). Then N rounds, the cases interleaved, each timing
 * open + one indexed read + close, as the module's path for a user without biometric unlock does.
 * Prints one line per case: case=frames-FRAMES n=N median_us=... (and p90, p99, mean, min, max).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int frames[] = {0, 5, 20};
#define NCASES (int)(sizeof frames / sizeof frames[0])

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "wal-recovery: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    exit(70);
}

static void exec(sqlite3 *db, const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(db, sql);
}

/* Opens `path` as the cases' connections do: the WAL kept when it closes, and either left as it
 * is (frames > 0) or checkpointed and truncated to zero bytes (frames == 0, the module's way). */
static sqlite3 *open_store(const char *path, int frames_left) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) fail(db, "open");
    int persist = 1;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist) != SQLITE_OK) fail(db, "SQLITE_FCNTL_PERSIST_WAL");
    if (frames_left > 0) {
        if (sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL) != SQLITE_OK) fail(db, "NO_CKPT_ON_CLOSE");
    } else {
        exec(db, "PRAGMA journal_size_limit = 0");
    }
    return db;
}

static void make_store(const char *path, int frames_left) {
    static const char *suffixes[] = {"", "-wal", "-shm"};
    char p[4096];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
    sqlite3 *db = open_store(path, 0);
    exec(db, "PRAGMA journal_mode = WAL");
    exec(db, "CREATE TABLE users(name TEXT PRIMARY KEY, enabled INTEGER NOT NULL DEFAULT 0, bio_failures INTEGER, "
             "passcode_failures INTEGER, passcode_hash TEXT, last_success INTEGER)");
    exec(db, "CREATE TABLE events(id INTEGER PRIMARY KEY, time INTEGER, user TEXT, service TEXT, outcome TEXT)");
    exec(db, "BEGIN");
    for (int i = 0; i < 200; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "INSERT INTO users(name, enabled) VALUES('user%d', %d)", i, i % 2);
        exec(db, sql);
        snprintf(sql, sizeof sql, "INSERT INTO events(time, user, service, outcome) VALUES(%d, 'user%d', 'sudo', 'success')", i, i);
        exec(db, sql);
    }
    exec(db, "COMMIT");
    sqlite3_close(db);
    db = open_store(path, frames_left);
    for (int i = 0; i < frames_left; i++) exec(db, "UPDATE users SET last_success = ifnull(last_success, 0) + 1 WHERE name = 'user1'");
    sqlite3_close(db);
}

static void read_once(const char *path, int frames_left) {
    sqlite3 *db = open_store(path, frames_left);
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, "SELECT enabled, bio_failures FROM users WHERE name = ?", -1, &stmt, NULL) != SQLITE_OK) fail(db, "prepare");
    sqlite3_bind_text(stmt, 1, "nobody", -1, SQLITE_STATIC);
    if (sqlite3_step(stmt) != SQLITE_DONE) fail(db, "step");
    sqlite3_finalize(stmt);
    if (sqlite3_close(db) != SQLITE_OK) fail(db, "close");
}

int main(int argc, char **argv) {
    long n = 500;
    int first = 1;
    if (argc > 3 && strcmp(argv[1], "--n") == 0) {
        n = strtol(argv[2], NULL, 10);
        first = 3;
    }
    if (first != argc - 1 || n < 1) {
        fprintf(stderr, "usage: wal-recovery [--n N] DIR\n");
        return 64;
    }
    char paths[NCASES][4096];
    double *t[NCASES];
    for (int k = 0; k < NCASES; k++) {
        snprintf(paths[k], sizeof paths[k], "%s/walrec-%d.db", argv[first], frames[k]);
        make_store(paths[k], frames[k]);
        t[k] = malloc(sizeof(double) * (size_t)n);
        if (!t[k]) return 70;
        read_once(paths[k], frames[k]); /* warm the page cache */
    }
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < NCASES; k++) {
            double a = now_us();
            read_once(paths[k], frames[k]);
            t[k][i] = now_us() - a;
        }
    }
    for (int k = 0; k < NCASES; k++) {
        qsort(t[k], (size_t)n, sizeof(double), cmp);
        double sum = 0;
        for (long i = 0; i < n; i++) sum += t[k][i];
        printf("case=frames-%d n=%ld median_us=%.1f p90_us=%.1f p99_us=%.1f mean_us=%.1f min_us=%.1f max_us=%.1f\n",
               frames[k], n, t[k][n / 2], t[k][n * 9 / 10], t[k][n * 99 / 100], sum / (double)n, t[k][0], t[k][n - 1]);
    }
    return 0;
}
