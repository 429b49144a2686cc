import BiounlockCore
import BiounlockSystem

/// A fingerprint reader with no hardware: while verifying or enrolling it listens on a
/// control socket and takes virtual_device's commands (`SCAN id`, `RETRY n`, `ERROR n`,
/// `UNPLUG`, `SLEEP ms`), one per connection. A verify matches when the touched id is
/// the data of an enrolled template; enrolment takes `enrollStages` touches of one id.
///
/// Security choices: the socket's directory must be root-owned and not writable by group or
/// others (so nobody else can plant or replace the socket), and the socket itself is made 0600,
/// so only root can act as the finger. The sensor runs on the caller's thread: no threads, no
/// signals, every wait bounded by the transaction's deadline.
public final class SimulatedSensor: FingerprintSensor {
    public static let enrollStages = 5

    let path: String
    private var listener: FileDescriptor?
    private var pendingSleep = 0

    private init(path: String, listener: FileDescriptor) {
        self.path = path
        self.listener = listener
    }

    deinit { close() }

    /// Creates the control socket at `path` and starts listening.
    public static func listen(at path: String) -> Result<SimulatedSensor, SensorUnavailable> {
        guard LocalSocketAddress(path) != nil else {
            return .failure(SensorUnavailable("sim_socket path is empty or longer than \(UnixSocket.maximumPathLength) bytes"))
        }
        if let problem = TrustedFiles.checkDirectory(TrustedFiles.parentDirectory(of: path)) {
            return .failure(SensorUnavailable("sim_socket directory refused: \(problem)"))
        }
        // A socket left by an earlier transaction is replaced; anything else at the path is not ours.
        if let st = try? FileStatus.of(path, followingSymbolicLinks: false) {
            guard st.kind == .socket else {
                return .failure(SensorUnavailable("\(path) exists and is not a socket"))
            }
            try? FileSystem.unlink(path)
        }
        // bind() creates the socket with the caller's umask (the module must not change the
        // host's): it is bound under a private name, made 0600, and only then renamed into place,
        // so the socket at `path` is never anyone's but root's, not even for an instant.
        let staging = TrustedFiles.parentDirectory(of: path) + "/.sim-\(ProcessIdentity.processID)"
        guard let stagingAddress = LocalSocketAddress(staging) else {
            return .failure(SensorUnavailable("sim_socket directory path is too long"))
        }
        try? FileSystem.unlink(staging)
        let socket: OwnedDescriptor
        do throws(Errno) { socket = try FileDescriptor.localStreamSocket(nonBlocking: true) } catch {
            return .failure(SensorUnavailable(error))
        }
        do throws(Errno) { try socket.descriptor.bind(to: stagingAddress) } catch {
            return .failure(SensorUnavailable("bind \(path)", error))
        }
        do throws(Errno) {
            try FileSystem.changePermissions(staging, 0o600)
            try FileSystem.rename(staging, to: path)
            try socket.descriptor.listen(backlog: 16)
        } catch {
            try? FileSystem.unlink(staging)
            try? FileSystem.unlink(path)
            return .failure(SensorUnavailable("listen \(path)", error))
        }
        return .success(SimulatedSensor(path: path, listener: socket.release()))
    }

    public func close() {
        guard let listener else { return }
        listener.close()
        self.listener = nil
        try? FileSystem.unlink(path)
    }

    enum Next { case command(SimCommand), timedOut, interrupted, failed(SensorUnavailable) }

    /// Accepts connections until one carries a valid command, or the deadline passes.
    func nextCommand(until deadline: Deadline) -> SimCommand? {
        if case .command(let c) = next(until: deadline, interrupt: nil) { return c }
        return nil
    }

    /// Like nextCommand, but also returns as soon as `interrupt` is readable.
    func next(until deadline: Deadline, interrupt: Int32?) -> Next {
        while let listener {
            switch UnixSocket.waitEither(listener, interrupt.map(FileDescriptor.init(rawValue:)), until: deadline) {
            case .second: return .interrupted
            case .neither: return .timedOut
            case .first: break
            }
            // Glibc's module does not export accept4; set the flags right after accept.
            let connection: OwnedDescriptor
            do throws(Errno) { connection = try listener.accept() } catch {
                if error.code == .wouldBlock || error.code == .connectionAborted { continue }
                return .failed(SensorUnavailable(error))
            }
            try? connection.descriptor.setCloseOnExec()
            try? connection.descriptor.setNonBlocking()
            // A client gets at most one second to send its command.
            let readDeadline = Deadline.after(milliseconds: min(1000, Int64(deadline.remaining())))
            let message = UnixSocket.readMessage(connection.descriptor, limit: SimCommand.maximumLength, deadline: readDeadline)
            // Closing the connection is the reply: EOF tells the client the command was taken.
            connection.close()
            guard let command = SimCommand(bytes: message) else { continue }
            if case .sleep(let ms) = command {
                pendingSleep += ms
                continue
            }
            if pendingSleep > 0 {
                UnixSocket.sleep(milliseconds: pendingSleep, until: deadline)
                pendingSleep = 0
                if deadline.hasPassed() { return .timedOut }
            }
            return .command(command)
        }
        return .timedOut
    }

    public func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult {
        // Touches wait in the listen backlog while the caller is away (at a prompt): they count
        // when it comes back, as a libfprint verify running in the helper meanwhile does.
        let early = waitUntil.map { $0.milliseconds < deadline.milliseconds } ?? false
        let command: SimCommand
        switch next(until: early ? (waitUntil ?? deadline) : deadline, interrupt: interrupt) {
        case .timedOut: return early && !deadline.hasPassed() ? .interrupted : .timedOut
        case .interrupted: return .interrupted
        case .failed(let why): return .unavailable(why)
        case .command(let c): command = c
        }
        switch command {
        case .scan(let id):
            if let template = templates.first(where: { $0.sensor == .simulated && $0.data == id }) {
                return .match(template.finger)
            }
            return .noMatch
        case .retry(let code):
            return .retry(RetryReason(code: code))
        case .error(let code):
            return .unavailable(SensorUnavailable("simulated device error \(code)"))
        case .unplug:
            return .unavailable(SensorUnavailable("reader unplugged"))
        case .sleep:
            return .timedOut // unreachable: nextCommand consumes SLEEP
        }
    }

    public func enroll(finger: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable> {
        var expected: [UInt8]?
        var done = 0
        while done < SimulatedSensor.enrollStages {
            guard let command = nextCommand(until: deadline) else {
                return .failure(SensorUnavailable("no touch in time (\(done)/\(SimulatedSensor.enrollStages) done)"))
            }
            switch command {
            case .scan(let id):
                if expected == nil || expected == id {
                    expected = id
                    done += 1
                    progress(.stage(done: done, of: SimulatedSensor.enrollStages))
                } else {
                    progress(.differentFinger)
                }
            case .retry(let code):
                progress(.retry(RetryReason(code: code)))
            case .error(let code):
                return .failure(SensorUnavailable("simulated device error \(code)"))
            case .unplug:
                return .failure(SensorUnavailable("reader unplugged"))
            case .sleep:
                continue
            }
        }
        guard let expected else { return .failure(SensorUnavailable("no touch")) }
        return .success(Template(finger: finger, sensor: .simulated, data: expected, created: SystemClock().now()))
    }
}

/// The finger's side of the control socket (`biounlock sim …`, tests, the demo).
public enum SimulatedFinger {
    /// Connects to the sensor (retrying until it listens or `waitMilliseconds` pass), sends one
    /// command, half-closes and waits for the sensor to close the connection (command taken).
    public static func send(_ command: SimCommand, to path: String, waitMilliseconds: Int) -> Result<Void, SensorUnavailable> {
        send(bytes: command.bytes, to: path, waitMilliseconds: waitMilliseconds)
    }

    /// The same for any virtual_device command, as bytes (`INSERT id` for virtual_device_storage,
    /// `SET_ENROLL_STAGES n`, …): the simulated sensor ignores what it does not know.
    public static func send(bytes: [UInt8], to path: String, waitMilliseconds: Int) -> Result<Void, SensorUnavailable> {
        guard let address = LocalSocketAddress(path) else {
            return .failure(SensorUnavailable("socket path is empty or longer than \(UnixSocket.maximumPathLength) bytes"))
        }
        let deadline = Deadline.after(milliseconds: Int64(waitMilliseconds))
        var lastError = Errno(.connectionRefused, call: "connect")
        repeat {
            let socket: OwnedDescriptor
            do throws(Errno) { socket = try FileDescriptor.localStreamSocket(nonBlocking: true) } catch {
                return .failure(SensorUnavailable(error))
            }
            var connected = false
            do throws(Errno) {
                try socket.descriptor.connect(to: address)
                connected = true
            } catch {
                lastError = error
                if error.code == .inProgress { connected = UnixSocket.wait(socket.descriptor, for: .writable, until: deadline) }
            }
            if connected {
                do throws(Errno) { try UnixSocket.writeAll(socket.descriptor, bytes, deadline: deadline) } catch {
                    return .failure(SensorUnavailable("write", error))
                }
                try? socket.descriptor.shutdownWriting()
                _ = UnixSocket.readMessage(socket.descriptor, limit: 4096, deadline: deadline, quietMilliseconds: Int64(deadline.remaining()))
                return .success(())
            }
            socket.close()
            UnixSocket.sleep(milliseconds: 20, until: deadline)
        } while !deadline.hasPassed()
        return .failure(SensorUnavailable("no simulated sensor listening on \(path) (\(lastError.message))"))
    }
}
