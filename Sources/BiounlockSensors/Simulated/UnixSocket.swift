import BiounlockSystem
import Glibc
import BiounlockCore

/// Minimal AF_UNIX stream helpers for the simulated sensor. Every descriptor is
/// close-on-exec and non-blocking; every wait is a poll(2) bounded by a deadline and
/// retried on EINTR.
enum UnixSocket {
    /// sun_path holds 108 bytes including the terminator; longer paths are refused, not truncated.
    static let maximumPathLength = 107

    static func address(_ path: String) -> sockaddr_un? {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumPathLength, !bytes.contains(0) else { return nil }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return addr
    }

    static func makeSocket() -> Int32 {
        socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    }

    static func withSockaddr<R>(_ addr: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var copy = addr
        return withUnsafePointer(to: &copy) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Waits until `fd` has `events`; false on deadline or error.
    static func wait(_ fd: Int32, events: Int16, until deadline: Deadline) -> Bool {
        while true {
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&pfd, 1, deadline.remaining())
            if rc > 0 { return true }
            if rc == 0 { return false }
            if errno != EINTR { return false }
        }
    }

    enum Ready { case first, second, neither }

    /// Waits until `first` (or, when given, `second`) is readable; `.neither` on deadline or error.
    static func waitEither(_ first: Int32, _ second: Int32?, until deadline: Deadline) -> Ready {
        guard let second else { return wait(first, events: Int16(POLLIN), until: deadline) ? .first : .neither }
        while true {
            var fds = [pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)]
            let rc = poll(&fds, 2, deadline.remaining())
            if rc > 0 {
                // The terminal first: a keystroke should never wait behind a stream of commands.
                if fds[1].revents != 0 { return .second }
                return .first
            }
            if rc == 0 { return .neither }
            if errno != EINTR { return .neither }
        }
    }

    /// Reads until EOF, `limit` bytes, the deadline, or `quietMilliseconds` without new data
    /// once something has arrived (virtual_device clients do not always half-close).
    static func readMessage(_ fd: Int32, limit: Int, deadline: Deadline, quietMilliseconds: Int64 = 50) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while out.count <= limit {
            let wait = out.isEmpty ? deadline : Deadline.after(milliseconds: quietMilliseconds)
            guard UnixSocket.wait(fd, events: Int16(POLLIN), until: wait) else { break }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                break
            }
            if n == 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return out
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], deadline: Deadline) -> Bool {
        var offset = 0
        while offset < bytes.count {
            // send with MSG_NOSIGNAL: a peer that closed early is an error here, never a SIGPIPE.
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n > 0 { offset += n; continue }
            if n < 0 && (errno == EINTR) { continue }
            if n < 0 && errno == EAGAIN && wait(fd, events: Int16(POLLOUT), until: deadline) { continue }
            return false
        }
        return true
    }

    /// Sleeps up to `milliseconds`, never past `deadline`.
    static func sleep(milliseconds: Int, until deadline: Deadline) {
        let bounded = Deadline.after(milliseconds: Int64(milliseconds))
        let end = bounded.milliseconds < deadline.milliseconds ? bounded : deadline
        while end.remaining() > 0 {
            _ = poll(nil, 0, end.remaining())
        }
    }
}
