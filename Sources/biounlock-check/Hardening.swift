import BiounlockCore
import BiounlockSystem

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
///   checker between counting a guess and answering, nor a tiny RLIMIT_DATA turn a right PIN into
///   a counted failure). A limit that cannot be raised (a hard limit set by a process without
///   CAP_SYS_RESOURCE in the bounding set) makes the checker refuse before anything is counted:
///   the module falls back to the password, and the reason is logged (finding 28.4 in
///   docs/SECURITY.md). Core dumps off, and the process is marked
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
    static let watchdogStatus = ProcessState.watchdogExitStatus   // EX_TEMPFAIL (75): the watchdog ended it

    static func clearEnvironment() {
        ProcessState.clearEnvironment()
    }

    static func resetSignals() {
        ProcessState.resetSignals()
        ProcessState.ignoreBrokenPipe()
    }

    /// Whether fd 3 is a socket (the caller's end of the exchange).
    static func socketOnDescriptor3() -> Bool {
        (try? FileDescriptor(rawValue: 3).status())?.kind == .socket
    }

    static func usage() {
        let text = "biounlock-check: the setuid helper of pam_biounlock.so for screen lockers that run as the user; it takes no arguments and talks only to the module on fd 3\n"
        try? FileDescriptor.standardError.writeAll(Array(text.utf8))
    }

    static func descriptors() {
        ProcessState.standardDescriptorsToNull()
        try? FileDescriptor(rawValue: 3).setCloseOnExec()
        ProcessState.closeDescriptors(from: 4)
    }

    /// Returns the limits that could not be raised: the checker then checks nothing (main.swift,
    /// CheckerService.limitProblems).
    static func processState(gid: UInt32) -> [LimitProblem] {
        FileSystem.setUmask(0o077)
        try? FileSystem.changeDirectory("/")
        ProcessState.disableCoreDumps()
        let problems = ProcessState.raiseLimits(minimumFiles: 1024)
        ProcessState.setNotDumpable()
        ProcessState.dropSupplementaryGroups()
        // Real gid stays the caller's; effective and (so) saved gid become root.
        ProcessState.setGroups(real: gid, effective: 0)
        return problems
    }

    static var isRoot: Bool { ProcessIdentity.effectiveUserID == 0 && !ProcessState.noNewPrivileges }

    /// After `seconds`, the process ends (status 75), whatever it is waiting for.
    static func watchdog(seconds: Int) {
        ProcessState.installWatchdog(seconds: seconds)
    }
}

/// Syslog (authpriv, "biounlock-check[PID]"), the checker's only output. Never a secret.
final class CheckerSyslog: Logger {
    var debugEnabled = false

    init() { SystemLog.open(identifier: "biounlock-check") }

    func log(_ level: LogLevel, _ message: String) {
        let priority: SystemLog.Priority
        switch level {
        case .error: priority = .error
        case .warning: priority = .warning
        case .notice: priority = .notice
        case .info: priority = .info
        case .debug:
            guard debugEnabled else { return }
            priority = .debug
        }
        SystemLog.write(priority, message)
    }
}
