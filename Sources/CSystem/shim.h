// libc calls that Swift's Glibc module cannot reach or call: GNU extensions its headers hide
// without _GNU_SOURCE, variadic functions (prctl, syslog), and a signal handler that must be C
// (async-signal-safe). Only BiounlockSystem imports this module; each is a thin wrapper, errno
// left as the call set it, and nothing here decides anything.
#ifndef BIOUNLOCK_CSYSTEM_SHIM_H
#define BIOUNLOCK_CSYSTEM_SHIM_H
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <syslog.h>
#include <termios.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* fgetxattr/fsetxattr (the store's WAL-index mark) are not in Swift's Glibc module, and
 * <sys/xattr.h> cannot be included here: it brings <sys/types.h> and so <sys/select.h>, whose
 * fd_set (member `fds_bits` under _GNU_SOURCE, `__fds_bits` without) then differs from the one
 * in Swift's Glibc module, and a clean build fails. Their glibc prototypes, as <sys/xattr.h>
 * declares them: */
extern ssize_t fgetxattr(int fd, const char *name, void *value, size_t size);
extern int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags);

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

/// prctl(PR_SET_DUMPABLE, 0): no core file, and no ptrace or /proc/PID/mem by the caller (whose
/// real uid the checker keeps), even if the kernel's suid_dumpable setting would allow them.
static inline int biounlock_set_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/// prctl(PR_GET_NO_NEW_PRIVS): set by the caller, the setuid bit was ignored.
static inline int biounlock_no_new_privs(void) { return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); }

/// prctl(PR_GET_CHILD_SUBREAPER): 1 when this process adopts its descendants' orphans, 0 when
/// not, -1 when that cannot be read.
static inline int biounlock_is_child_subreaper(void) {
    int value = 0;
    if (prctl(PR_GET_CHILD_SUBREAPER, &value, 0, 0, 0) != 0) return -1;
    return value != 0;
}

/// prctl(PR_SET_PDEATHSIG, SIGKILL), then whether the parent is still `parent`: a worker of
/// biounlockd dies with the service (a kill -9 of the service mid-enrolment leaves no worker
/// holding the reader). 0 when armed and the parent is alive, -1 otherwise.
static inline int biounlock_die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return -1;
    return getppid() == parent ? 0 : -1;
}

/// openlog(ident, LOG_PID | LOG_NDELAY, LOG_AUTHPRIV). `ident` must stay valid for the life of
/// the process (a literal).
static inline void biounlock_openlog_authpriv(const char *ident) { openlog(ident, LOG_PID | LOG_NDELAY, LOG_AUTHPRIV); }

/// syslog(priority, "%s", message): the message is an argument, never the format.
static inline void biounlock_syslog(int priority, const char *message) { syslog(priority, "%s", message); }

/// The exit status of the watchdog (EX_TEMPFAIL).
#define BIOUNLOCK_WATCHDOG_STATUS 75

static inline void biounlock_watchdog_fired(int signo) {
    (void)signo;
    _exit(BIOUNLOCK_WATCHDOG_STATUS);
}

/// SIGALRM's action becomes _exit(BIOUNLOCK_WATCHDOG_STATUS), and the alarm is set `seconds`
/// from now: the process ends then, whatever it waits for.
static inline void biounlock_watchdog(unsigned int seconds) {
    signal(SIGALRM, biounlock_watchdog_fired);
    alarm(seconds);
}

/* The terminal settings put back when SIGINT arrives while a CLI prompt has echo off (the
 * handler is C: tcsetattr, signal and raise are async-signal-safe). For the CLI only: the module
 * never touches its host's signals. */
static inline int *biounlock_restore_fd(void) { static int fd = -1; return &fd; }
static inline struct termios *biounlock_restore_settings(void) { static struct termios settings = {0}; return &settings; }

static inline void biounlock_restore_terminal(int signo) {
    if (*biounlock_restore_fd() >= 0) (void)tcsetattr(*biounlock_restore_fd(), TCSANOW, biounlock_restore_settings());
    signal(signo, SIG_DFL);
    raise(signo);
}

/// SIGINT restores `settings` on `fd`, then ends the process as SIGINT would have.
static inline void biounlock_arm_terminal_restore(int fd, const struct termios *settings) {
    *biounlock_restore_settings() = *settings;
    *biounlock_restore_fd() = fd;
    signal(SIGINT, biounlock_restore_terminal);
}

/// SIGINT back at its default action.
static inline void biounlock_disarm_terminal_restore(void) {
    *biounlock_restore_fd() = -1;
    signal(SIGINT, SIG_DFL);
}

/// pidfd_open(pid, 0) (Linux 5.3; glibc 2.36 declares no wrapper Swift can see): a descriptor
/// that becomes readable once the process has ended, close-on-exec. -1 with errno on failure.
static inline int biounlock_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/// waitid(P_PIDFD, pidfd, WEXITED | WNOHANG | WNOWAIT): 0 when the process behind `pidfd` is a
/// child of the caller (running, or ended and not yet collected: nothing is collected here), -1
/// with errno ECHILD when it is not -- a pid that was reused after someone else collected it.
static inline int biounlock_pidfd_is_child(int pidfd) {
    siginfo_t info;
    return waitid((idtype_t)3 /* P_PIDFD */, (id_t)pidfd, &info, WEXITED | WNOHANG | WNOWAIT);
}

/// add_key(2) and keyctl(2) (glibc declares neither; libkeyutils is not linked): the kernel
/// keyring where the Unix password is kept for the boot at login services (issue 32,
/// BiounlockSystem.KernelKeys). -1 with errno on failure.
static inline long biounlock_add_key(const char *type, const char *description, const void *payload, size_t length, int keyring) {
    return syscall(SYS_add_key, type, description, payload, length, keyring);
}
static inline long biounlock_keyctl(int operation, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5) {
    return syscall(SYS_keyctl, operation, a2, a3, a4, a5);
}

/// fflush(stdout): what print() buffered is written now.
static inline void biounlock_flush_standard_output(void) { (void)fflush(stdout); }
#endif
