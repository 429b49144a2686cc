// libc calls that Swift's Glibc module cannot reach: GNU extensions its headers hide without
// _GNU_SOURCE. Each is a thin wrapper; errno is left as the call set it.
#ifndef BIOUNLOCK_CSYSTEM_SHIM_H
#define BIOUNLOCK_CSYSTEM_SHIM_H
#define _GNU_SOURCE 1
#include <fcntl.h>

/// fcntl(fd, F_OFD_SETLK, ...) on the bytes [start, start + length): an open-file-description
/// lock (owned by the open file, not the process, so two opens in one process exclude each
/// other, and closing another descriptor of the file releases nothing). `type` is F_WRLCK,
/// F_RDLCK or F_UNLCK. Never waits: -1 with errno EAGAIN (or EACCES) while another holds it.
static inline int biounlock_ofd_setlk(int fd, int type, long long start, long long length) {
    struct flock lock = { .l_type = (short)type, .l_whence = SEEK_SET, .l_start = start, .l_len = length, .l_pid = 0 };
    return fcntl(fd, F_OFD_SETLK, &lock);
}

/// fcntl(fd, F_OFD_GETLK, ...): whether another open file description holds a lock on
/// [start, start + length) that a lock of `type` would conflict with: 1 yes, 0 no, -1 (errno).
/// (A lock held through `fd` itself never counts.)
static inline int biounlock_ofd_held_by_others(int fd, int type, long long start, long long length) {
    struct flock lock = { .l_type = (short)type, .l_whence = SEEK_SET, .l_start = start, .l_len = length, .l_pid = 0 };
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
    return lock.l_type == F_UNLCK ? 0 : 1;
}
#endif
