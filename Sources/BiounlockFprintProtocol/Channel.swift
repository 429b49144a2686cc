import BiounlockSystem

/// One end of the helper's socket, speaking frames. Used by the module and the CLI (their end of
/// a socketpair) and by the helper (fd 3).
///
/// Security choices: every wait is a poll(2) bounded by the caller's deadline (absolute
/// monotonic milliseconds; `Int64.max` waits without bound); reads stop at one frame of at most
/// `FprintProtocol.maximumFrameLength`; writes use send(2) with MSG_NOSIGNAL, so a peer that went
/// away is an error (EPIPE), never a SIGPIPE in the host; no signal handler is touched.
///
/// The same channel carries biounlock-check's protocol (BiounlockCheckProtocol), with its own,
/// smaller frame limit and `sensitive`: frames there carry what the user typed, so every buffer
/// the channel fills (the receive chunk, the frames not yet returned, the framed copy of what is
/// sent) is zeroed before it is released. Payloads handed in and out are the caller's to wipe.
public final class FrameChannel {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The peer closed its end (or died).
        case closed
        case timedOut
        /// The peer announced a frame over the limit.
        case tooLarge
        /// A frame that does not parse as a message of this protocol version.
        case malformed
        /// A system call failed (the Errno names it).
        case io(Errno)

        public var description: String {
            switch self {
            case .closed: return "the helper closed the connection"
            case .timedOut: return "no answer in time"
            case .tooLarge: return "the helper sent an oversized message"
            case .malformed: return "the helper sent a malformed message"
            case .io(let e): return e.description
            }
        }
    }

    public private(set) var fd: Int32
    var frames: FrameBuffer
    /// Set once the stream can no longer be trusted to be in step (oversized or bad frame).
    var broken = false
    /// Largest frame sent or accepted.
    public let limit: Int
    /// Zero every buffer that held frame bytes before releasing it.
    public let sensitive: Bool

    public init(fd: Int32, limit: Int = FprintProtocol.maximumFrameLength, sensitive: Bool = false) {
        self.fd = fd
        self.limit = limit
        self.sensitive = sensitive
        frames = FrameBuffer(limit: limit, wipes: sensitive)
    }

    deinit {
        close()
        frames.wipe()
    }

    public func close() {
        guard fd >= 0 else { return }
        FileDescriptor(rawValue: fd).close()
        fd = -1
    }

    private var descriptor: FileDescriptor { FileDescriptor(rawValue: fd) }

    /// Waits for `events` on the descriptor; false when the deadline passes.
    func wait(_ events: PollEvents, until deadline: Int64) -> Result<Void, Failure> {
        let deadline = Deadline(milliseconds: deadline)
        if deadline.hasPassed() { return .failure(.timedOut) }
        do throws(Errno) {
            return try Poll.wait(descriptor, for: events, until: deadline) == nil ? .failure(.timedOut) : .success(())
        } catch {
            return .failure(.io(error))
        }
    }

    /// Sends one frame; the whole frame or a failure.
    public func send(_ payload: [UInt8], until deadline: Int64) -> Result<Void, Failure> {
        guard fd >= 0 else { return .failure(.closed) }
        guard payload.count <= limit else { return .failure(.tooLarge) }
        var bytes = FrameBuffer.frame(payload)
        defer { if sensitive { Memory.zero(&bytes) } }
        var offset = 0
        while offset < bytes.count {
            do throws(Errno) {
                let n = try descriptor.send(bytes, from: offset, flags: [.noSignal, .dontWait])
                guard n > 0 else { return .failure(.io(Errno(.ioError, call: "send"))) }
                offset += n
            } catch {
                switch error.code {
                case .wouldBlock:
                    if case .failure(let f) = wait(.writable, until: deadline) { return .failure(f) }
                case .brokenPipe, .connectionReset:
                    return .failure(.closed)
                default:
                    return .failure(.io(error))
                }
            }
        }
        return .success(())
    }

    /// Receives one frame's payload.
    public func receive(until deadline: Int64) -> Result<[UInt8], Failure> {
        guard fd >= 0 else { return .failure(.closed) }
        guard !broken else { return .failure(.malformed) }
        var chunk = [UInt8](repeating: 0, count: min(64 * 1024, limit + 4))
        defer { if sensitive { Memory.zero(&chunk) } }
        while true {
            switch frames.next() {
            case .frame(let payload): return .success(payload)
            case .tooLarge:
                broken = true
                return .failure(.tooLarge)
            case .needMore: break
            }
            if case .failure(let f) = wait(.readable, until: deadline) { return .failure(f) }
            do throws(Errno) {
                let n = try descriptor.receive(into: &chunk, flags: [.dontWait])
                if n == 0 { return .failure(.closed) }
                frames.append(chunk.prefix(n))
            } catch {
                switch error.code {
                case .wouldBlock: continue
                case .connectionReset: return .failure(.closed)
                default: return .failure(.io(error))
                }
            }
        }
    }

    public enum Readiness: Equatable { case ready, interrupted, timedOut, failed }

    /// Waits until a frame can be read (bytes already buffered, or the socket readable) or
    /// `interrupt` becomes readable first (a key pressed at a type-or-touch prompt).
    public func waitReadable(orInterrupt interrupt: Int32?, until deadline: Int64) -> Readiness {
        guard fd >= 0 else { return .failed }
        if frames.buffered > 0 { return .ready }
        let deadline = Deadline(milliseconds: deadline)
        if deadline.hasPassed() { return .timedOut }
        // A nil interrupt is skipped (poll ignores a negative descriptor).
        let requests = [Poll.Request(descriptor, .readable), Poll.Request(interrupt.map(FileDescriptor.init(rawValue:)), .readable)]
        do throws(Errno) {
            guard let events = try Poll.wait(requests, until: deadline) else { return .timedOut }
            return events.count > 1 && !events[1].isEmpty ? .interrupted : .ready
        } catch {
            return .failed
        }
    }

    /// Marks the stream unusable (after a frame that did not parse).
    public func markBroken() { broken = true }
}
