// What biounlock-check needs from libc that Swift cannot call directly (variadic functions).
// Nothing here decides anything: Sources/biounlock-check/Hardening.swift says why each is used.
#ifndef BIOUNLOCK_CCHECK_SHIM_H
#define BIOUNLOCK_CCHECK_SHIM_H
#include <sys/prctl.h>
#include <syslog.h>

/// prctl(PR_SET_DUMPABLE, 0): no core file, and no ptrace or /proc/PID/mem by the caller (whose
/// real uid the checker keeps), even if the kernel's suid_dumpable setting would allow them.
static inline int biounlock_check_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/// prctl(PR_GET_NO_NEW_PRIVS): set by the caller, the setuid bit was ignored.
static inline int biounlock_check_no_new_privs(void) { return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); }

/// syslog(3) to authpriv as "biounlock-check[PID]"; the message is an argument, never the format.
static inline void biounlock_check_openlog(void) { openlog("biounlock-check", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV); }
static inline void biounlock_check_syslog(int priority, const char *message) { syslog(priority, "%s", message); }
#endif
