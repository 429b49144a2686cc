import BiounlockCore
import BiounlockSystem

/// Minimal AF_UNIX stream helpers for the simulated sensor, over BiounlockSystem's descriptors
/// (close-on-exec and non-blocking; EINTR retried by the layer). Every wait is a poll(2) bounded
/// by a deadline.
enum UnixSocket {
    /// sun_path holds 108 bytes including the terminator; longer paths are refused, not truncated.
    static let maximumPathLength = LocalSocketAddress.maximumPathLength

    /// Waits until `fd` has `events`; false on deadline or error.
    static func wait(_ fd: FileDescriptor, for events: PollEvents, until deadline: Deadline) -> Bool {
        (try? Poll.wait(fd, for: events, until: deadline)) != nil
    }

    enum Ready { case first, second, neither }

    /// Waits until `first` (or, when given, `second`) is readable; `.neither` on deadline or error.
    static func waitEither(_ first: FileDescriptor, _ second: FileDescriptor?, until deadline: Deadline) -> Ready {
        guard let second else { return wait(first, for: .readable, until: deadline) ? .first : .neither }
        guard let events = try? Poll.wait([Poll.Request(first, .readable), Poll.Request(second, .readable)], until: deadline),
              events.count == 2 else { return .neither }
        // The terminal first: a keystroke should never wait behind a stream of commands.
        return events[1].isEmpty ? .first : .second
    }

    /// Reads until EOF, `limit` bytes, the deadline, or `quietMilliseconds` without new data
    /// once something has arrived (virtual_device clients do not always half-close).
    static func readMessage(_ fd: FileDescriptor, limit: Int, deadline: Deadline, quietMilliseconds: Int64 = 50) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while out.count <= limit {
            let wait = out.isEmpty ? deadline : Deadline.after(milliseconds: quietMilliseconds)
            guard UnixSocket.wait(fd, for: .readable, until: wait) else { break }
            let n: Int
            do throws(Errno) { n = try fd.read(into: &buffer) } catch {
                if error.code == .wouldBlock { continue }
                break
            }
            if n == 0 { break }
            out.append(contentsOf: buffer.prefix(n))
        }
        return out
    }

    /// Sends all of `bytes` (MSG_NOSIGNAL: a peer that closed early is an error here, never a
    /// SIGPIPE), waiting for room until `deadline`.
    static func writeAll(_ fd: FileDescriptor, _ bytes: [UInt8], deadline: Deadline) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            do throws(Errno) {
                let n = try fd.send(bytes, from: offset, flags: [.noSignal])
                guard n > 0 else { throw Errno(.ioError, call: "send") }
                offset += n
            } catch where error.code == .wouldBlock && wait(fd, for: .writable, until: deadline) {}
        }
    }

    /// Sleeps up to `milliseconds`, never past `deadline`.
    static func sleep(milliseconds: Int, until deadline: Deadline) {
        let bounded = Deadline.after(milliseconds: Int64(milliseconds))
        let end = bounded.milliseconds < deadline.milliseconds ? bounded : deadline
        while end.remaining() > 0 {
            Sleep.milliseconds(end.remaining())
        }
    }
}
