// Shims for sqlite3 macros Swift cannot import.
#ifndef BIOUNLOCK_CSQLITE_SHIM_H
#define BIOUNLOCK_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_bind_text / _blob with SQLITE_TRANSIENT (a function-pointer cast macro):
/// SQLite copies the bytes before returning, so Swift buffers may be freed right after.
static inline int biounlock_sqlite3_bind_text(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}
static inline int biounlock_sqlite3_bind_blob(sqlite3_stmt *stmt, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(stmt, index, bytes, length, SQLITE_TRANSIENT);
}
/// sqlite3_db_config(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, NULL) (variadic: not callable from Swift).
static inline int biounlock_sqlite3_no_checkpoint_on_close(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, (int *)0);
}
/// Process-wide settings, made before SQLite's first use in the process (afterwards SQLite
/// refuses them with SQLITE_MISUSE, which changes nothing): no memory statistics (they take a
/// global mutex around every allocation and free) and no bulk page-cache allocation per
/// connection (20 pages, ~86 KiB, allocated at every open and freed at every close, when a
/// connection of the module touches a few pages).
static inline int biounlock_sqlite3_configure(void) {
    int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (rc == SQLITE_OK) rc = sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    return rc;
}
#endif
