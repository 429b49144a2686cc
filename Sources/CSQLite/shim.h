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
#include <sys/stat.h>
#include <unistd.h>

/// The fchown SQLite's unix VFS makes, as root, on every -wal and -journal it opens (to give a
/// new one the database's owner) -- skipped when the file already has that owner. A real chown
/// changes the inode (its ctime) even when the owner stays, which made the next fdatasync of the
/// WAL write the inode too: one more disk write in every passcode attempt's synced count.
static int biounlock_fchown_unless_owned(int fd, uid_t uid, gid_t gid) {
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_uid == uid && st.st_gid == gid) return 0;
    return fchown(fd, uid, gid);
}

/// Installs biounlock_fchown_unless_owned as the default (unix) VFS's "fchown" (sqlite3_vfs.xSetSystemCall,
/// the VFS's documented way to replace the calls it makes). SQLITE_OK, or an error if this SQLite
/// has no such VFS or call: SQLite then keeps its own fchown.
static inline int biounlock_sqlite3_fchown_unless_owned(void) {
    sqlite3_vfs *vfs = sqlite3_vfs_find(0);
    if (vfs == 0 || vfs->iVersion < 3 || vfs->xSetSystemCall == 0) return SQLITE_ERROR;
    return vfs->xSetSystemCall(vfs, "fchown", (sqlite3_syscall_ptr)biounlock_fchown_unless_owned);
}
#endif
