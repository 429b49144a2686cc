import Glibc

/// Every C call this layer wraps, by name. The name is what an `Errno` reports (unless the
/// wrapper names the call more precisely, "fcntl(F_DUPFD_CLOEXEC)"), and what a fault schedule
/// targets in builds with BIOUNLOCK_FAULTS (Faults.swift).
public enum SystemCall: String, CaseIterable, Sendable {
    case open, read, write, send, recv, poll, fstat, stat, lstat, fsync, fdatasync, fcntl, fchmod, dup2
    case mkdir, chmod, rename, unlink, chdir
    case socket, socketpair, bind, listen, accept, connect, shutdown
    case opendir
    case posixSpawn = "posix_spawn", waitpid, kill, pidfdOpen = "pidfd_open", waitid
    case getpwnamR = "getpwnam_r", getpwuidR = "getpwuid_r", gethostname
    case tcgetattr, tcsetattr, tcgetpgrp, ttyname = "ttyname_r"
    case setrlimit, getrlimit, setgroups, setregid, sigprocmask, prctl
    case nanosleep
    case pread, fgetxattr, fsetxattr
    case addKey = "add_key", keyctl
}

// The one funnel. Every wrapper that can see EINTR calls the C function through `system`, which
// retries it on EINTR (recomputing nothing itself: `body` is called again, so a poll recomputes
// the time left from its deadline), turns a failure into an `Errno` naming the call, and -- in
// builds with BIOUNLOCK_FAULTS only -- lets a fault schedule fail the call or shorten a transfer
// before it is made (Faults.swift). In release builds the fault hook is compiled out.
//
// close(2) is the one call not retried: Linux releases the descriptor even when close reports
// EINTR, and a retry could close a descriptor another thread has just been given.

/// Calls `body` until it does not fail with EINTR. `failed` says whether a result is a failure
/// (errno then holds the reason); `body` gets the byte limit a fault schedule imposes on this
/// call (nil: none) and applies it to the count it passes to a transfer call.
@inline(__always)
func system<T>(_ name: SystemCall, as label: String? = nil, retryingInterrupts: Bool = true,
               failed: (T) -> Bool, _ body: (_ byteLimit: Int?) -> T) -> Result<T, Errno> {
    while true {
        var limit: Int? = nil
        #if BIOUNLOCK_FAULTS
        switch Faults.next(name) {
        case .fail(let code)?:
            if code == .interrupted && retryingInterrupts { continue }
            return .failure(Errno(code, call: label ?? name.rawValue))
        case .short(let bytes)?:
            limit = max(1, bytes)
        case nil:
            break
        }
        #endif
        let result = body(limit)
        guard failed(result) else { return .success(result) }
        let code = errno
        if code == EINTR && retryingInterrupts { continue }
        return .failure(Errno(Errno.Code(rawValue: code), call: label ?? name.rawValue))
    }
}

/// A call that returns -1 (errno set) on failure.
@inline(__always)
func system(_ name: SystemCall, as label: String? = nil, _ body: () -> Int32) -> Result<Int32, Errno> {
    system(name, as: label, failed: { $0 == -1 }) { _ in body() }
}

/// A transfer of at most `count` bytes (read, write, send, recv) that returns -1 on failure;
/// `body` gets the count to pass, shortened when a fault schedule asks for a short transfer.
@inline(__always)
func transfer(_ name: SystemCall, count: Int, _ body: (_ count: Int) -> Int) -> Result<Int, Errno> {
    system(name, failed: { $0 < 0 }) { limit in body(min(count, limit ?? count)) }
}

/// A call that returns its error number instead of setting errno (posix_spawn, getpwnam_r):
/// 0 is success.
@inline(__always)
func systemReturningError(_ name: SystemCall, as label: String? = nil, _ body: () -> Int32) -> Result<Void, Errno> {
    system(name, as: label, failed: { (rc: Int32) -> Bool in
        if rc != 0 { errno = rc }
        return rc != 0
    }) { _ in body() }.map { _ in () }
}
