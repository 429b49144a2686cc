import BiounlockSystem
import Glibc
import BiounlockCore
import BiounlockFprintProtocol

/// How to start a helper: `biounlock-fprint` (derived from root-owned options only, `make`) or
/// `biounlock-check` (BiounlockCheck's CheckerClient).
public struct HelperLaunch: Equatable {
    /// Where the helper's warnings go: syslog inside PAM (the host's stderr is the user's
    /// terminal, or nothing), the CLI's stderr for an admin at a terminal.
    typealias Diagnostics = HelperDiagnostics

    public let path: String
    public let arguments: [String]
    public let environment: [String]
    public let stderrToNull: Bool

    public init(path: String, arguments: [String], environment: [String], stderrToNull: Bool) {
        self.path = path; self.arguments = arguments; self.environment = environment; self.stderrToNull = stderrToNull
    }

    /// Security choice: the helper's environment is built from nothing. sudo hands the invoking
    /// user's environment to PAM modules, so FP_VIRTUAL_DEVICE, FP_DRIVERS_WHITELIST, G_DEBUG,
    /// G_MESSAGES_DEBUG, GIO_EXTRA_MODULES, GIO_MODULE_DIR, LD_* and the rest of the caller's
    /// environment never reach libfprint or GLib. Test readers (virtual_device) come only from
    /// the root-owned options `fprint_virtual_device[_storage]`, and then replace real readers.
    /// The same holds for D-Bus: DBUS_SYSTEM_BUS_ADDRESS never reaches the helper (fprintd's bus
    /// comes from `fprintd_bus=`, in the request); an fprintd client (`libfprintEnvironment`
    /// false) gets no libfprint variables at all.
    static func make(_ options: Options, diagnostics: Diagnostics, libfprintEnvironment: Bool = true) -> Result<HelperLaunch, SensorUnavailable> {
        if let problem = TrustedFiles.checkExecutable(options.fprintHelper) {
            return .failure(SensorUnavailable("fprint_helper refused: \(problem)"))
        }
        var environment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]
        var drivers: [String] = []
        let virtualReaders = libfprintEnvironment
            ? [(options.fprintVirtualDevice, "FP_VIRTUAL_DEVICE", "virtual_device"),
               (options.fprintVirtualDeviceStorage, "FP_VIRTUAL_DEVICE_STORAGE", "virtual_device_storage")]
            : []
        for (path, variable, driver) in virtualReaders {
            guard let path else { continue }
            // Whoever can write the socket's directory could put their own reader there.
            if let problem = TrustedFiles.checkDirectory(TrustedFiles.parentDirectory(of: path)) {
                return .failure(SensorUnavailable("\(variable.lowercased()) directory refused: \(problem)"))
            }
            environment.append("\(variable)=\(path)")
            drivers.append(driver)
        }
        if !drivers.isEmpty { environment.append("FP_DRIVERS_WHITELIST=\(drivers.joined(separator: ":"))") }
        let arguments = diagnostics == .syslog ? ["--serve", "--syslog"] : ["--serve"]
        return .success(HelperLaunch(path: options.fprintHelper, arguments: arguments, environment: environment,
                                     stderrToNull: diagnostics == .syslog))
    }
}

/// The running helper: a child process and our end of its socket.
///
/// Security choices, all for the host process (sudo, login, a greeter):
/// - posix_spawn, not fork: no copy of a multi-threaded host runs any code of ours;
/// - the child gets an empty signal mask and default dispositions (POSIX_SPAWN_SETSIGMASK,
///   POSIX_SPAWN_SETSIGDEF); the host's own handlers and mask are never touched;
/// - our end of the socketpair is close-on-exec and non-blocking; the child gets /dev/null on
///   stdin/stdout (and stderr inside PAM) and its end on fd 3; every other descriptor of ours is
///   close-on-exec, and the helper closes anything above 3 the host left inheritable first thing
///   (posix_spawn_file_actions_addclosefrom_np is not visible to Swift's Glibc module);
/// - every wait is bounded; on a deadline the child is killed and reaped. SIGKILL is sent only
///   right after waitpid(WNOHANG) found it still running and unreaped, so its pid cannot belong
///   to anyone else;
/// - if the host reaps it first (a SIGCHLD handler, or SIGCHLD ignored), waitpid says ECHILD and
///   that is taken as reaped.
public final class HelperProcess {
    public let pid: pid_t
    public let channel: FrameChannel
    private(set) var reaped = false
    /// Set when the child's end of the socket closed (it exited, or is exiting).
    private(set) var peerClosed = false

    private init(pid: pid_t, channel: FrameChannel) {
        self.pid = pid
        self.channel = channel
    }

    deinit { kill() }

    /// - Parameters:
    ///   - limit, sensitive: the channel's frame limit, and whether its buffers are wiped
    ///     (FrameChannel); the fprint helper's defaults unless given.
    public static func spawn(_ launch: HelperLaunch, limit: Int = FprintProtocol.maximumFrameLength,
                             sensitive: Bool = false) -> Result<HelperProcess, SensorUnavailable> {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failure(SensorUnavailable("socketpair: \(errnoDescription(errno))"))
        }
        let ours = pair[0]
        // The child's end moves to 10 or above, so that the dup2 onto fd 3 never meets itself
        // (which would leave close-on-exec set) and never collides with 0-2.
        let theirs = fcntl(pair[1], F_DUPFD_CLOEXEC, Int32(10))
        let dupErrno = errno
        Glibc.close(pair[1])
        guard theirs >= 0 else {
            Glibc.close(ours)
            return .failure(SensorUnavailable("fcntl(F_DUPFD_CLOEXEC): \(errnoDescription(dupErrno))"))
        }
        defer { Glibc.close(theirs) }
        let flags = fcntl(ours, F_GETFL)
        guard flags >= 0, fcntl(ours, F_SETFL, flags | O_NONBLOCK) == 0 else {
            let e = errno
            Glibc.close(ours)
            return .failure(SensorUnavailable("fcntl(O_NONBLOCK): \(errnoDescription(e))"))
        }

        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else {
            Glibc.close(ours)
            return .failure(SensorUnavailable("posix_spawn_file_actions_init failed"))
        }
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard posix_spawnattr_init(&attributes) == 0 else {
            Glibc.close(ours)
            return .failure(SensorUnavailable("posix_spawnattr_init failed"))
        }
        defer { posix_spawnattr_destroy(&attributes) }

        var noSignals = sigset_t()
        var allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        var rc: Int32 = 0
        rc |= posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        rc |= posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if launch.stderrToNull { rc |= posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        rc |= posix_spawn_file_actions_adddup2(&actions, theirs, FprintProtocol.helperDescriptor)
        rc |= posix_spawnattr_setsigmask(&attributes, &noSignals)
        rc |= posix_spawnattr_setsigdefault(&attributes, &allSignals)
        rc |= posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        guard rc == 0 else {
            Glibc.close(ours)
            return .failure(SensorUnavailable("cannot prepare posix_spawn"))
        }

        let argv = CStringArray([launch.path] + launch.arguments)
        let envp = CStringArray(launch.environment)
        guard argv.complete, envp.complete else {
            Glibc.close(ours)
            return .failure(SensorUnavailable("out of memory"))
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, launch.path, &actions, &attributes, argv.pointers, envp.pointers)
        guard spawned == 0 else {
            Glibc.close(ours)
            return .failure(SensorUnavailable("cannot start \(launch.path): \(errnoDescription(spawned))"))
        }
        return .success(HelperProcess(pid: pid, channel: FrameChannel(fd: ours, limit: limit, sensitive: sensitive)))
    }

    func send(_ request: FprintRequest, until deadline: Int64) -> Result<Void, SensorUnavailable> {
        switch channel.send(request.payload, until: deadline) {
        case .success: return .success(())
        case .failure(let f):
            if f == .closed { peerClosed = true }
            return .failure(SensorUnavailable("helper: \(f)"))
        }
    }

    /// The next message from the helper, or why there is none by `deadline`.
    func receive(until deadline: Int64) -> Result<FprintResponse, FrameChannel.Failure> {
        switch channel.receive(until: deadline) {
        case .success(let payload):
            guard let response = FprintResponse(payload: payload) else {
                channel.markBroken()
                return .failure(.malformed)
            }
            return .success(response)
        case .failure(let f):
            if f == .closed { peerClosed = true }
            return .failure(f)
        }
    }

    /// Asks the helper to close the reader and exit; after `graceMilliseconds` it is killed.
    func shutdown(graceMilliseconds: Int64) {
        guard !reaped else { return }
        let deadline = monotonicMilliseconds() &+ graceMilliseconds
        if !peerClosed, case .success = send(.close, until: deadline) {
            // Read until the helper closes its end (it exits right after `closed`).
            while !peerClosed {
                if case .failure = receive(until: deadline) { break }
            }
        }
        if peerClosed {
            channel.close()
            if reap(until: monotonicMilliseconds() &+ graceMilliseconds) { return }
        }
        kill()
    }

    /// Kills and reaps the helper now (deadline passed, or the protocol broke).
    public func kill() {
        guard !reaped else { return }
        // waitpid(WNOHANG) just said "still running": an unreaped child keeps its pid, so the
        // signal cannot reach anyone else. Once it has exited (or the host reaped it), no signal.
        if !reap(until: 0) {
            _ = Glibc.kill(pid, SIGKILL)
        }
        channel.close()
        // A killed process is gone in microseconds, unless stuck in the kernel (a wedged USB
        // transfer); then it is left to the host (or init) rather than making the host wait.
        _ = reap(until: monotonicMilliseconds() &+ 1000)
    }

    /// Waits (bounded) for the helper to exit and collects it.
    @discardableResult
    public func reap(until deadline: Int64) -> Bool {
        while !reaped {
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid {
                reaped = true
            } else if rc < 0 && errno == EINTR {
                continue
            } else if rc < 0 {
                // ECHILD: the host reaped it (its SIGCHLD handler) or ignores SIGCHLD.
                reaped = true
            } else {
                if monotonicMilliseconds() >= deadline { return false }
                _ = poll(nil, 0, 5)
            }
        }
        return true
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
