import BiounlockCore
import BiounlockFprintProtocol
import BiounlockSystem

/// How to start a helper: `biounlock-fprint` (`make`) or `biounlock-fprintd` (`fprintd`), both
/// derived from root-owned options only, or `biounlock-check` (BiounlockCheck's CheckerClient).
public struct HelperLaunch: Equatable {
    /// Where the helper's warnings go: syslog inside PAM (the host's stderr is the user's
    /// terminal, or nothing), the CLI's stderr for an admin at a terminal.
    typealias Diagnostics = HelperDiagnostics

    public let path: String
    public let arguments: [String]
    public let environment: [String]
    public let stderrToNull: Bool
    /// The helper may detach (`--detach`): once fprintd verifies, the spawned process exits and
    /// its child serves the channel (HelperProcess: the end waited for is its `closed`).
    public let detached: Bool

    public init(path: String, arguments: [String], environment: [String], stderrToNull: Bool, detached: Bool = false) {
        self.path = path; self.arguments = arguments; self.environment = environment; self.stderrToNull = stderrToNull
        self.detached = detached
    }

    /// Security choice: the helper's environment is built from nothing. sudo hands the invoking
    /// user's environment to PAM modules, so FP_VIRTUAL_DEVICE, FP_DRIVERS_WHITELIST, G_DEBUG,
    /// G_MESSAGES_DEBUG, GIO_EXTRA_MODULES, GIO_MODULE_DIR, LD_* and the rest of the caller's
    /// environment never reach libfprint or GLib. Test readers (virtual_device) come only from
    /// the root-owned options `fprint_virtual_device[_storage]`, and then replace real readers.
    /// The same holds for D-Bus: DBUS_SYSTEM_BUS_ADDRESS never reaches a helper (fprintd's bus
    /// comes from `fprintd_bus=`, in the request); fprintd's client (`fprintd`) gets no libfprint
    /// variable at all.
    static func make(_ options: Options, diagnostics: Diagnostics) -> Result<HelperLaunch, SensorUnavailable> {
        if let problem = TrustedFiles.checkExecutable(options.fprintHelper) {
            return .failure(SensorUnavailable("fprint_helper refused: \(problem)"))
        }
        var environment = HelperLaunch.cleanEnvironment
        var drivers: [String] = []
        for (path, variable, driver) in [(options.fprintVirtualDevice, "FP_VIRTUAL_DEVICE", "virtual_device"),
                                         (options.fprintVirtualDeviceStorage, "FP_VIRTUAL_DEVICE_STORAGE", "virtual_device_storage")] {
            guard let path else { continue }
            // Whoever can write the socket's directory could put their own reader there.
            if let problem = TrustedFiles.checkDirectory(TrustedFiles.parentDirectory(of: path)) {
                return .failure(SensorUnavailable("\(variable.lowercased()) directory refused: \(problem)"))
            }
            environment.append("\(variable)=\(path)")
            drivers.append(driver)
        }
        if !drivers.isEmpty { environment.append("FP_DRIVERS_WHITELIST=\(drivers.joined(separator: ":"))") }
        return .success(HelperLaunch(path: options.fprintHelper, arguments: arguments(diagnostics), environment: environment,
                                     stderrToNull: diagnostics == .syslog))
    }

    /// fprintd's client, biounlock-fprintd (`fprintd_helper`): the same clean environment, and no
    /// libfprint variable at all (it loads no libfprint, and reads no variable).
    ///
    /// Inside PAM it detaches once fprintd verifies (`--detach`), unless the host adopts orphans
    /// (a subreaper: the helper would become its child): after a match the module returns once
    /// the helper has answered `closed` -- fprintd's Release answered, the device free -- without
    /// waiting for an exit (0.06-0.49 ms more in traces), and the host is left no child either
    /// way (docs/DESIGN.md). The detached helper ends by itself, at the latest
    /// `detachedLifetime` seconds after it detached. The CLI waits for its helper's end as before
    /// (an admin's command, not a host's transaction).
    static func fprintd(_ options: Options, diagnostics: Diagnostics,
                        hostIsSubreaper: () -> Bool = { ProcessState.isChildSubreaper }) -> Result<HelperLaunch, SensorUnavailable> {
        if let problem = TrustedFiles.checkExecutable(options.fprintdHelper) {
            return .failure(SensorUnavailable("fprintd_helper refused: \(problem)"))
        }
        let detach = diagnostics == .syslog && !hostIsSubreaper()
        return .success(HelperLaunch(path: options.fprintdHelper,
                                     arguments: arguments(diagnostics) + (detach ? ["--detach", String(detachedLifetime(options))] : []),
                                     environment: cleanEnvironment, stderrToNull: diagnostics == .syslog, detached: detach))
    }

    /// A detached fprintd helper's longest life, in seconds from when it detached (once fprintd
    /// verifies): the reader's `timeout`, its start and release, and a margin -- past it the
    /// reader is of no use to the transaction (a helper gone is "reader unavailable", never a
    /// success; an idle helper ends after 120 s anyway).
    static func detachedLifetime(_ options: Options) -> Int {
        Int((LibfprintSensor.openMilliseconds + LibfprintSensor.closeMilliseconds) / 1000) + options.timeoutSeconds + 30
    }

    static let cleanEnvironment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]

    static func arguments(_ diagnostics: Diagnostics) -> [String] {
        diagnostics == .syslog ? ["--serve", "--syslog"] : ["--serve"]
    }
}

/// The running helper: a child process and our end of its socket.
///
/// A detached helper (HelperLaunch.detached, the fprintd helper inside PAM) is our child until
/// fprintd verifies; then it forks, exits at once and is collected (a look after each message
/// read, and in `shutdown`), and its child serves the socket, releases the reader and answers
/// `closed`, which is the end `shutdown` waits for. That child is never signalled (it is not
/// ours: its pid could be anyone's); closing our end of the socket ends it, bounded
/// (biounlock-fprintd's `--detach`).
///
/// Security choices, all for the host process (sudo, login, a greeter):
/// - posix_spawn, not fork: no copy of a multi-threaded host runs any code of ours;
/// - the child gets an empty signal mask and default dispositions (POSIX_SPAWN_SETSIGMASK,
///   POSIX_SPAWN_SETSIGDEF); the host's own handlers and mask are never touched;
/// - our end of the socketpair is close-on-exec and non-blocking; the child gets /dev/null on
///   stdin/stdout (and stderr inside PAM) and its end on fd 3; every other descriptor of ours is
///   close-on-exec, and the helper closes anything above 3 the host left inheritable first thing
///   (posix_spawn_file_actions_addclosefrom_np is not visible to Swift's Glibc module);
/// - every wait is bounded, and waits on the event itself: the helper's answer or the end of its
///   socket (poll), its exit (ChildWatch: a pidfd made right after the spawn), never a pause;
///   on a deadline the child is killed and reaped. SIGKILL is sent only right after
///   waitpid(WNOHANG) found it still running and unreaped, so its pid cannot belong to anyone else;
/// - if the host reaps it first (a SIGCHLD handler, or SIGCHLD ignored), waitpid says ECHILD and
///   that is taken as reaped.
public final class HelperProcess {
    public let pid: Int32
    public let channel: FrameChannel
    /// The child's end, as an event (ChildWatch).
    private let end: ChildWatch
    /// The child (the spawned process) is collected.
    private(set) var reaped = false
    /// The helper serves from the child's child (see above).
    let detached: Bool
    /// `shutdown` or `kill` is done: our end of the socket is closed.
    private var finished = false
    /// Set when the child's end of the socket closed (it exited, or is exiting).
    private(set) var peerClosed = false
    /// `close` was sent (`startClosing`): the helper is releasing the reader and exiting.
    private(set) var closeSent = false

    private init(pid: Int32, channel: FrameChannel, detached: Bool) {
        self.pid = pid
        self.channel = channel
        self.detached = detached
        end = ChildWatch(pid)
    }

    deinit { kill() }

    /// - Parameters:
    ///   - limit, sensitive: the channel's frame limit, and whether its buffers are wiped
    ///     (FrameChannel); the fprint helper's defaults unless given.
    public static func spawn(_ launch: HelperLaunch, limit: Int = FprintProtocol.maximumFrameLength,
                             sensitive: Bool = false) -> Result<HelperProcess, SensorUnavailable> {
        let pair: DescriptorPair
        do throws(Errno) { pair = try FileDescriptor.localStreamPair() } catch { return .failure(SensorUnavailable(error)) }
        // The child's end moves to 10 or above, so that the dup2 onto fd 3 never meets itself
        // (which would leave close-on-exec set) and never collides with 0-2.
        let theirs: OwnedDescriptor
        do throws(Errno) { theirs = try pair.second.descriptor.duplicate(atLeast: 10) } catch { return .failure(SensorUnavailable(error)) }
        do throws(Errno) { try pair.first.descriptor.setNonBlocking() } catch { return .failure(SensorUnavailable(error)) }
        let pid: Int32
        do throws(SpawnFailure) {
            pid = try ChildProcess.spawn(launch.path, arguments: launch.arguments, environment: launch.environment,
                                         descriptor: theirs.descriptor, at: FileDescriptor(rawValue: FprintProtocol.helperDescriptor),
                                         standardErrorToNull: launch.stderrToNull)
        } catch {
            switch error {
            case .fileActions: return .failure(SensorUnavailable("posix_spawn_file_actions_init failed"))
            case .attributes: return .failure(SensorUnavailable("posix_spawnattr_init failed"))
            case .prepare: return .failure(SensorUnavailable("cannot prepare posix_spawn"))
            case .outOfMemory: return .failure(SensorUnavailable("out of memory"))
            case .spawn(let e): return .failure(SensorUnavailable("cannot start \(launch.path)", e))
            }
        }
        return .success(HelperProcess(pid: pid, channel: FrameChannel(fd: pair.releaseFirst().rawValue, limit: limit, sensitive: sensitive),
                                      detached: launch.detached))
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
        // A detached helper's first process exits as soon as it forks (fprintd verifying):
        // collected here once it has (one waitpid WNOHANG), long before `shutdown` needs it.
        if detached, !reaped { _ = reap(until: 0) }
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

    /// Asks the helper to close the reader and exit, without waiting: the caller goes on with
    /// its own work (recording a success) while the helper releases the reader, and
    /// `shutdown` then waits for the end. False when the request could not be sent.
    @discardableResult
    func startClosing() -> Bool {
        guard !finished, !peerClosed, !closeSent else { return closeSent }
        // One small frame into an idle socket: never waits in practice (bounded anyway).
        if case .success = send(.close, until: monotonicMilliseconds() &+ 100) { closeSent = true }
        return closeSent
    }

    /// Asks the helper to close the reader and exit (unless `startClosing` did), and waits for
    /// it to do so; after `graceMilliseconds` it is killed.
    func shutdown(graceMilliseconds: Int64) {
        guard !finished else { return }
        let deadline = monotonicMilliseconds() &+ graceMilliseconds
        if peerClosed || closeSent || startClosing() {
            // The helper releases the reader, answers `closed` and exits: its end is what is
            // waited for (its pidfd), one wake-up; what it sent before is not read. Detached, the
            // end is its `closed` (or its end of the socket closing), and the child it started
            // from is collected already (or now: the helper could not detach).
            if (!detached || awaitClosed(until: deadline)) && reap(until: deadline) {
                finished = true
                channel.close()
                return
            }
        }
        kill()
    }

    /// Reads (and drops) what a detached helper sends until its `closed` or the end of its
    /// socket: true; false at `deadline` or on a broken channel.
    private func awaitClosed(until deadline: Int64) -> Bool {
        while !peerClosed, monotonicMilliseconds() < deadline {
            switch receive(until: deadline) {
            case .success(.closed): return true
            case .success: continue
            case .failure(.closed): return true
            case .failure: return false
            }
        }
        return peerClosed
    }

    /// Kills and reaps the helper now (deadline passed, or the protocol broke). A helper that
    /// detached is never signalled (see above): our end of its socket closes.
    public func kill() {
        guard !finished else { return }
        finished = true
        // waitpid(WNOHANG) just said "still running": an unreaped child keeps its pid, so the
        // signal cannot reach anyone else. Once it has exited (or the host reaped it), no signal.
        if !reap(until: 0) {
            try? Signal.kill.send(to: pid)
        }
        channel.close()
        // A killed process is gone in microseconds, unless stuck in the kernel (a wedged USB
        // transfer); then it is left to the host (or init) rather than making the host wait.
        if !reap(until: monotonicMilliseconds() &+ 1000) { end.close() }
    }

    /// Waits (bounded) for the helper to exit and collects it: a wait on its end (ChildWatch).
    @discardableResult
    public func reap(until deadline: Int64) -> Bool {
        guard !reaped else { return true }
        switch end.collect(until: Deadline(milliseconds: deadline)) {
        case .exited, .gone:
            // .gone (ECHILD): the host reaped it (its SIGCHLD handler) or ignores SIGCHLD.
            reaped = true
        case .running:
            return false
        }
        return true
    }
}
