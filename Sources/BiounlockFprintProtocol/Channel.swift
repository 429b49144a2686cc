import Glibc

/// Monotonic milliseconds, for deadlines on both sides of the channel.
public func monotonicMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) &* 1000 &+ Int64(ts.tv_nsec) / 1_000_000
}

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
        case io(call: String, errno: Int32)

        public var description: String {
            switch self {
            case .closed: return "the helper closed the connection"
            case .timedOut: return "no answer in time"
            case .tooLarge: return "the helper sent an oversized message"
            case .malformed: return "the helper sent a malformed message"
            case .io(let call, let e): return "\(call): \(String(cString: strerror(e)))"
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
        Glibc.close(fd)
        fd = -1
    }

    /// Waits for `events` on the descriptor; false when the deadline passes.
    func wait(_ events: Int32, until deadline: Int64) -> Result<Void, Failure> {
        while true {
            var timeout: Int32 = -1
            if deadline != Int64.max {
                let left = deadline &- monotonicMilliseconds()
                if left <= 0 { return .failure(.timedOut) }
                timeout = left > Int64(Int32.max) ? Int32.max : Int32(left)
            }
            var pfd = pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0)
            let rc = poll(&pfd, 1, timeout)
            if rc > 0 { return .success(()) }
            if rc == 0 { return .failure(.timedOut) }
            if errno != EINTR { return .failure(.io(call: "poll", errno: errno)) }
        }
    }

    /// Sends one frame; the whole frame or a failure.
    public func send(_ payload: [UInt8], until deadline: Int64) -> Result<Void, Failure> {
        guard fd >= 0 else { return .failure(.closed) }
        guard payload.count <= limit else { return .failure(.tooLarge) }
        var bytes = FrameBuffer.frame(payload)
        defer { if sensitive { wipeBytes(&bytes) } }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                if case .failure(let f) = wait(Int32(POLLOUT), until: deadline) { return .failure(f) }
                continue
            }
            if n < 0 && (errno == EPIPE || errno == ECONNRESET) { return .failure(.closed) }
            return .failure(.io(call: "send", errno: n < 0 ? errno : EIO))
        }
        return .success(())
    }

    /// Receives one frame's payload.
    public func receive(until deadline: Int64) -> Result<[UInt8], Failure> {
        guard fd >= 0 else { return .failure(.closed) }
        guard !broken else { return .failure(.malformed) }
        var chunk = [UInt8](repeating: 0, count: min(64 * 1024, limit + 4))
        defer { if sensitive { wipeBytes(&chunk) } }
        while true {
            switch frames.next() {
            case .frame(let payload): return .success(payload)
            case .tooLarge:
                broken = true
                return .failure(.tooLarge)
            case .needMore: break
            }
            if case .failure(let f) = wait(Int32(POLLIN), until: deadline) { return .failure(f) }
            let n = chunk.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return recv(fd, base, raw.count, Int32(MSG_DONTWAIT))
            }
            if n > 0 {
                frames.append(chunk[0..<n])
                continue
            }
            if n == 0 { return .failure(.closed) }
            if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
            if errno == ECONNRESET { return .failure(.closed) }
            return .failure(.io(call: "recv", errno: errno))
        }
    }

    public enum Readiness: Equatable { case ready, interrupted, timedOut, failed }

    /// Waits until a frame can be read (bytes already buffered, or the socket readable) or
    /// `interrupt` becomes readable first (a key pressed at a type-or-touch prompt).
    public func waitReadable(orInterrupt interrupt: Int32?, until deadline: Int64) -> Readiness {
        guard fd >= 0 else { return .failed }
        if frames.buffered > 0 { return .ready }
        while true {
            var timeout: Int32 = -1
            if deadline != Int64.max {
                let left = deadline &- monotonicMilliseconds()
                if left <= 0 { return .timedOut }
                timeout = left > Int64(Int32.max) ? Int32.max : Int32(left)
            }
            // A negative descriptor is ignored by poll: no interrupt.
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: interrupt ?? -1, events: Int16(POLLIN), revents: 0)]
            let rc = poll(&fds, 2, timeout)
            if rc > 0 { return fds[1].revents != 0 ? .interrupted : .ready }
            if rc == 0 { return .timedOut }
            if errno != EINTR { return .failed }
        }
    }

    /// Marks the stream unusable (after a frame that did not parse).
    public func markBroken() { broken = true }
}

/// Zeroes `bytes` in place (explicit_bzero: not optimised away).
public func wipeBytes(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress { explicit_bzero(base, raw.count) }
    }
}
