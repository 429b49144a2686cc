import Glibc
import CCheck
import BiounlockCore

/// What biounlock-check does to its own process before it reads a byte from its caller. It runs
/// setuid root, started by whoever wants (the module inside a screen locker, or a user by hand
/// with any environment, arguments, descriptors, limits and signal state), so it trusts none of
/// what it inherited. Each step is a choice:
///
/// - **environment**: cleared first (clearenv). The kernel's secure-exec mode already makes
///   glibc drop LD_PRELOAD and friends; nothing of the rest (BIOUNLOCK_*, FP_*, G_*, LANG, TZ,
///   HOME...) may reach NSS, SQLite, the simulated sensor or the libfprint helper. (The Swift
///   runtime reads a few SWIFT_* debugging variables before main -- help text, hash seeding --
///   and refuses its crash backtracer in a privileged process: checked by hand with
///   SWIFT_BACKTRACE pointing at a program of the caller's; never run.)
/// - **signals**: every signal unblocked and at its default action, SIGPIPE ignored (the socket
///   is written with MSG_NOSIGNAL anyway), SIGALRM a watchdog that `_exit`s: an inherited mask or
///   an ignored signal must not stop the watchdog or let a child outlive its reaper.
/// - **descriptors**: fd 3 must be the caller's socket (else: usage, exit 64); 0, 1 and 2 become
///   /dev/null -- whatever they were, and even if they were closed, so that no file the checker
///   opens (the store!) can land on a descriptor a library might write diagnostics to -- and
///   every descriptor above 3 is closed. The checker never prints anything to its caller.
/// - **files**: umask 077, cwd /. **Resource limits** the caller may have lowered are raised
///   again (file size, CPU, address space, data, open files: an `ulimit -f 0` must not kill the
///   checker between counting a guess and answering), core dumps off, and the process is marked
///   not dumpable (no ptrace, no /proc/PID/mem, no core: the checker keeps the caller's real
///   uid, like unix_chkpwd, so that the caller can still end it).
/// - **groups**: supplementary groups dropped, effective (and saved) gid root, so that anything
///   the checker creates (the lock file, SQLite's -wal/-shm) is root:root.
/// - **privilege**: it must be running as root (effective uid 0, no PR_SET_NO_NEW_PRIVS): a
///   checker started from a nosuid mount, or with no_new_privs, refuses (exit 77) and the module
///   falls back to the password.
enum Hardening {
    /// Exit statuses (sysexits.h names).
    static let usageStatus: Int32 = 64      // EX_USAGE: no socket on fd 3
    static let noUserStatus: Int32 = 67     // EX_NOUSER: the real uid has no account
    static let notRootStatus: Int32 = 77    // EX_NOPERM: not running as root
    static let watchdogStatus: Int32 = 75   // EX_TEMPFAIL: the watchdog ended it

    static func clearEnvironment() {
        _ = clearenv()
    }

    static func resetSignals() {
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        for signo in 1..<Int32(65) where signo != SIGKILL && signo != SIGSTOP {
            signal(signo, SIG_DFL)
        }
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether fd 3 is a socket (the caller's end of the exchange).
    static func socketOnDescriptor3() -> Bool {
        var st = stat()
        return fstat(3, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
    }

    static func usage() {
        let text = "biounlock-check: the setuid helper of pam_biounlock.so for screen lockers that run as the user; it takes no arguments and talks only to the module on fd 3\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }

    static func descriptors() {
        let null = open("/dev/null", O_RDWR | O_NOCTTY)
        for fd in Int32(0)...2 where null != fd {
            if null >= 0 { dup2(null, fd) } else { close(fd) }
        }
        if null > 2 { close(null) }
        _ = fcntl(3, F_SETFD, FD_CLOEXEC)
        closefrom(4)
    }

    static func processState(gid: gid_t) {
        _ = umask(0o077)
        _ = chdir("/")
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
        for resource in [RLIMIT_FSIZE, RLIMIT_CPU, RLIMIT_AS, RLIMIT_DATA] {
            var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)   // RLIM_INFINITY
            setrlimit(__rlimit_resource_t(resource.rawValue), &unlimited)
        }
        var files = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < 1024 {
            files.rlim_cur = 1024
            files.rlim_max = max(files.rlim_max, 1024)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        }
        _ = biounlock_check_nondumpable()
        _ = setgroups(0, nil)
        // Real gid stays the caller's; effective and (so) saved gid become root.
        _ = setregid(gid, 0)
    }

    static var isRoot: Bool { geteuid() == 0 && biounlock_check_no_new_privs() == 0 }

    /// After `seconds`, the process ends (status 75), whatever it is waiting for.
    static func watchdog(seconds: Int) {
        signal(SIGALRM) { _ in _exit(Hardening.watchdogStatus) }
        alarm(UInt32(clamping: seconds))
    }
}

/// Syslog (authpriv, "biounlock-check[PID]"), the checker's only output. Never a secret.
final class CheckerSyslog: Logger {
    var debugEnabled = false

    init() { biounlock_check_openlog() }

    func log(_ level: LogLevel, _ message: String) {
        let priority: Int32
        switch level {
        case .error: priority = LOG_ERR
        case .warning: priority = LOG_WARNING
        case .notice: priority = LOG_NOTICE
        case .info: priority = LOG_INFO
        case .debug:
            guard debugEnabled else { return }
            priority = LOG_DEBUG
        }
        biounlock_check_syslog(priority, message)
    }
}
