import CSystem
import Glibc

/// Who this process is.
public enum ProcessIdentity {
    /// getuid(2).
    public static var realUserID: UInt32 { getuid() }
    /// geteuid(2).
    public static var effectiveUserID: UInt32 { geteuid() }
    /// getgid(2).
    public static var realGroupID: UInt32 { getgid() }
    /// getpid(2).
    public static var processID: Int32 { getpid() }
    /// getpgrp(2).
    public static var processGroup: Int32 { getpgrp() }
}

/// A signal number, from the headers.
public struct Signal: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let interrupt = Signal(rawValue: SIGINT)
    public static let kill = Signal(rawValue: SIGKILL)

    /// kill(2): sends the signal to `pid`.
    public func send(to pid: Int32) throws(Errno) {
        _ = try system(.kill) { Glibc.kill(pid, rawValue) }.get()
    }
}

/// Why a program could not be started (posix_spawn and its preparation).
public enum SpawnFailure: Error, Equatable, Sendable {
    /// posix_spawn_file_actions_init failed.
    case fileActions(Errno)
    /// posix_spawnattr_init failed.
    case attributes(Errno)
    /// Adding an action or an attribute failed.
    case prepare(Errno)
    /// The argument or environment strings could not be copied.
    case outOfMemory
    /// posix_spawn itself failed (the program is missing, not executable, ...).
    case spawn(Errno)
}

/// Starting a helper program and collecting it.
public enum ChildProcess {
    /// posix_spawn(3) of `path` with `arguments` (argv[1...]) and exactly `environment`:
    /// /dev/null on standard input and output (and error, with `standardErrorToNull`),
    /// `descriptor` duplicated onto `target` (dup2 clears its close-on-exec flag in the child
    /// only), every signal unblocked and at its default action in the child
    /// (POSIX_SPAWN_SETSIGMASK, POSIX_SPAWN_SETSIGDEF). posix_spawn, not fork: no copy of a
    /// multi-threaded host runs any code of ours, and the host's own handlers and mask are never
    /// touched. The caller makes every descriptor of its own close-on-exec (this layer does), and
    /// keeps `descriptor` numbered above 2 and apart from `target`.
    public static func spawn(_ path: String, arguments: [String], environment: [String],
                             descriptor: FileDescriptor, at target: FileDescriptor,
                             standardErrorToNull: Bool) throws(SpawnFailure) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        if case .failure(let e) = systemReturningError(.posixSpawn, as: "posix_spawn_file_actions_init", { posix_spawn_file_actions_init(&actions) }) {
            throw .fileActions(e)
        }
        defer { posix_spawn_file_actions_destroy(&actions) }
        if case .failure(let e) = systemReturningError(.posixSpawn, as: "posix_spawnattr_init", { posix_spawnattr_init(&attributes) }) {
            throw .attributes(e)
        }
        defer { posix_spawnattr_destroy(&attributes) }

        var noSignals = sigset_t()
        var allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        var rc: Int32 = 0
        rc |= posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        rc |= posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if standardErrorToNull { rc |= posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        rc |= posix_spawn_file_actions_adddup2(&actions, descriptor.rawValue, target.rawValue)
        rc |= posix_spawnattr_setsigmask(&attributes, &noSignals)
        rc |= posix_spawnattr_setsigdefault(&attributes, &allSignals)
        rc |= posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        guard rc == 0 else { throw .prepare(Errno(Errno.Code(rawValue: rc), call: "posix_spawn_file_actions")) }

        let argv = CStringArray([path] + arguments)
        let envp = CStringArray(environment)
        guard argv.complete, envp.complete else { throw .outOfMemory }
        var pid: Int32 = 0
        switch systemReturningError(.posixSpawn, { posix_spawn(&pid, path, &actions, &attributes, argv.pointers, envp.pointers) }) {
        case .success: return pid
        case .failure(let e): throw .spawn(e)
        }
    }

    /// Runs `path` with `arguments` and only `environment`, and returns what it wrote to standard
    /// output (at most `limit` bytes) once it has exited with status 0; nil if it could not be
    /// started, failed, wrote more, or had not finished within `milliseconds` (it is then killed
    /// and collected). For the CLI (doctor asks dpkg-query, which a held dpkg lock or a stuck
    /// NSS can stall): the admin waits at most that long; the module never runs it.
    public static func output(of path: String, arguments: [String], environment: [String], limit: Int = 1 << 20,
                              within milliseconds: Int64 = 10_000) -> [UInt8]? {
        guard let pair = try? FileDescriptor.localStreamPair() else { return nil }
        guard let pid = try? spawn(path, arguments: arguments, environment: environment,
                                   descriptor: pair.second.descriptor, at: .standardOutput, standardErrorToNull: true) else { return nil }
        let deadline = Deadline.after(milliseconds: milliseconds)
        // Our copy of the writing end closed, so the read ends when the program's does.
        let reader = pair.releaseFirst()
        defer { reader.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var complete = false
        // More than asked for, a failed read or no end in time: it is killed below.
        while bytes.count <= limit {
            guard case .some(.some) = try? Poll.wait(reader, for: .readable, until: deadline),
                  let n = try? reader.read(into: &chunk) else { break }
            if n == 0 { complete = true; break }
            bytes.append(contentsOf: chunk[..<min(n, chunk.count)])
        }
        if !complete { try? Signal.kill.send(to: pid) }
        guard waitForExit(pid, until: deadline) == 0, complete, bytes.count <= limit else { return nil }
        return bytes
    }

    /// Waits for `pid` to end until `deadline`, then kills it (SIGKILL) and collects it: its
    /// wait status, or nil when it had to be killed or could not be collected. The wait is on
    /// the child's end itself (ChildWatch: a pidfd), never a pause.
    static func waitForExit(_ pid: Int32, until deadline: Deadline) -> Int32? {
        let watch = ChildWatch(pid)
        switch watch.collect(until: deadline) {
        case .exited(let status): return status
        case .gone: return nil
        case .running:
            try? Signal.kill.send(to: pid)
            var status: Int32 = 0
            _ = system(.waitpid, { waitpid(pid, &status, 0) })
            return nil
        }
    }

    /// What waitpid(pid, WNOHANG) found.
    public enum State: Equatable, Sendable {
        case running
        /// It ended and is collected now.
        case reaped
        /// ECHILD: the host reaped it first (its SIGCHLD handler), or ignores SIGCHLD.
        case gone
    }

    /// waitpid(2) with WNOHANG, EINTR retried.
    public static func collect(_ pid: Int32) -> State {
        var status: Int32 = 0
        switch system(.waitpid, { waitpid(pid, &status, WNOHANG) }) {
        case .success(let rc): return rc == pid ? .reaped : .running
        case .failure: return .gone
        }
    }
}

/// A child's end as an event, so that a wait for it is a wait on the end itself, bounded by a
/// deadline -- never a pause and a look: pidfd_open(2) right after the child was started gives a
/// descriptor that poll(2) reports readable once the child has ended; waitpid(WNOHANG) then
/// collects it.
///
/// Security choices, for the host process (sudo, login):
/// - the descriptor is made while the child cannot have been collected by anyone else (right
///   after posix_spawn, before it is told anything) and then checked to be a child of this
///   process (waitid P_PIDFD, WNOWAIT: nothing collected); should the host's SIGCHLD handler have
///   collected it first and its pid been reused, the check fails and no descriptor is kept;
/// - nothing is ever collected but `pid`, and only through waitpid(pid) (ECHILD: the host
///   collected it, or ignores SIGCHLD -- taken as ended);
/// - the descriptor is close-on-exec (pidfd_open always is) and closed with the watch.
/// Without a descriptor (a kernel before 5.3, no descriptor left) the wait falls back to looking
/// again after pauses of 0.1 ms, then 1 ms doubling up to 5 ms, each cut at the deadline.
public final class ChildWatch {
    public let pid: Int32
    private var pidfd: Int32 = -1

    /// What collecting the child found.
    public enum Collected: Equatable, Sendable {
        /// It ended and is collected now: its wait status.
        case exited(Int32)
        /// ECHILD: collected by someone else (the host's SIGCHLD handler), or SIGCHLD ignored.
        case gone
        /// Still running at the deadline.
        case running
    }

    public init(_ pid: Int32) {
        self.pid = pid
        guard case .success(let fd) = system(.pidfdOpen, { biounlock_pidfd_open(pid) }) else { return }
        if case .success = system(.waitid, as: "waitid(P_PIDFD)", { biounlock_pidfd_is_child(fd) }) {
            pidfd = fd
        } else {
            FileDescriptor(rawValue: fd).close()
        }
    }

    deinit { close() }

    /// Whether the wait is on a pidfd (false: the fallback's pauses).
    public var watchesEnd: Bool { pidfd >= 0 }

    /// Closes the descriptor (the child collected, or abandoned to the host).
    public func close() {
        guard pidfd >= 0 else { return }
        FileDescriptor(rawValue: pidfd).close()
        pidfd = -1
    }

    /// Collects the child if it has ended, waiting for its end until `deadline` at most (a
    /// deadline already passed: one look, no wait).
    public func collect(until deadline: Deadline) -> Collected {
        var pause: Int32 = 0
        while true {
            var status: Int32 = 0
            switch system(.waitpid, { waitpid(pid, &status, WNOHANG) }) {
            case .success(let rc) where rc == pid:
                close()
                return .exited(status)
            case .success: break
            case .failure:
                close()
                return .gone
            }
            let left = deadline.remaining()
            if left == 0 { return .running }
            if pidfd >= 0 {
                // Readable once it has ended. A poll that fails (it should not) drops the
                // descriptor for the fallback below.
                do throws(Errno) {
                    if try Poll.wait(FileDescriptor(rawValue: pidfd), for: .readable, until: deadline) == nil { return .running }
                } catch {
                    close()
                }
            } else {
                // No pidfd: milliseconds are poll's unit, so the first pauses are nanosleeps.
                if pause == 0 { Sleep.nanoseconds(100_000); pause = 1 } else {
                    Sleep.milliseconds(min(pause, left))
                    pause = min(pause * 2, 5)
                }
            }
        }
    }
}

/// Whether a shared object loads, tried where it cannot hurt the caller: fork(2), and the child
/// only dlopen(RTLD_NOW)s it, looks `symbols` up and _exits (killed if it has not within
/// `milliseconds`). For the CLI's doctor (a broken module must not take it down, nor a
/// constructor that never returns keep it waiting); the module never forks its host.
public enum SharedObject {
    public static func loadsInChildProcess(_ path: String, exporting symbols: [String], within milliseconds: Int64 = 10_000) -> Bool {
        // The C strings are made before the fork: the child allocates nothing.
        let strings = CStringArray([path] + symbols)
        guard strings.complete, let file = strings.pointers.first ?? nil else { return false }
        let pid = fork()
        if pid == 0 {
            let handle = dlopen(file, RTLD_NOW | RTLD_LOCAL)
            var ok = handle != nil
            for name in strings.pointers.dropFirst() where ok {
                if let name { ok = dlsym(handle, name) != nil }
            }
            _exit(ok ? 0 : 1)
        }
        guard pid > 0 else { return false }
        // A constructor that never returns is a module that does not load (killed at the bound).
        return ChildProcess.waitForExit(pid, until: Deadline.after(milliseconds: milliseconds)) == 0
    }
}

/// A NULL-terminated array of C strings for posix_spawn, freed on deinit.
final class CStringArray {
    private(set) var pointers: [UnsafeMutablePointer<CChar>?]
    let complete: Bool

    init(_ strings: [String]) {
        var all: [UnsafeMutablePointer<CChar>?] = []
        var ok = true
        for s in strings {
            let p = strdup(s)
            if p == nil { ok = false }
            all.append(p)
        }
        all.append(nil)
        pointers = all
        complete = ok
    }

    deinit { for p in pointers { free(p) } }
}
