import BiounlockSystem
import BiounlockCore

/// Reads a secret (a password or a passcode) from a descriptor a client passed: the only way a
/// secret reaches biounlockd (never an argument, which the bus daemon, a monitor or a log could see).
///
/// Security choices:
/// - only a pipe or a socket is read (a terminal, a device or a directory is refused: nothing
///   that could block or stream without end);
/// - the descriptor is made non-blocking (the client shares its open file description, and a
///   client reading its own copy at the same time must not leave us blocked in read), and every
///   wait is a poll bounded by `within` milliseconds from the start: a writer that never closes
///   its end, or sends nothing, costs that long and no more;
/// - at most `Secret.maximumLength` bytes are kept; one byte more, and the secret is refused
///   as too long without reading further (an endless stream, /dev/zero behind a pipe);
/// - one trailing newline is dropped (a line typed or echoed), nothing else is changed; a NUL
///   byte makes it invalid (PAM takes C strings);
/// - the buffer that held the bytes is wiped; the secret lives only in a zeroing `Secret`.
public enum SecretDescriptor {
    public enum Failure: Error, Equatable, Sendable {
        case notAPipe
        case empty
        case tooLong
        case timedOut
        case invalid
        case unreadable(Errno)

        public var description: String {
            switch self {
            case .notAPipe: return "the descriptor is not a pipe or a socket"
            case .empty: return "nothing was written before the descriptor was closed"
            case .tooLong: return "the secret is longer than \(Secret.maximumLength) bytes"
            case .timedOut: return "the descriptor was not closed in time"
            case .invalid: return "the secret holds a NUL byte"
            case .unreadable(let e): return "cannot read the descriptor: \(e)"
            }
        }
    }

    public static func read(_ fd: FileDescriptor, within milliseconds: Int64) -> Result<Secret, Failure> {
        let kind: FileStatus.Kind
        do throws(Errno) { kind = try fd.status().kind } catch { return .failure(.unreadable(error)) }
        guard kind == .fifo || kind == .socket else { return .failure(.notAPipe) }
        do throws(Errno) { try fd.setNonBlocking() } catch { return .failure(.unreadable(error)) }
        let deadline = Deadline.after(milliseconds: milliseconds)
        let limit = Secret.maximumLength + 1 // one more newline
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        defer { wipe(&bytes) }
        var count = 0
        while true {
            if count > limit { return .failure(.tooLong) }
            let ready: PollEvents?
            do throws(Errno) { ready = try Poll.wait(fd, for: .readable, until: deadline) } catch { return .failure(.unreadable(error)) }
            guard let ready else { return .failure(.timedOut) }
            if ready.contains(.invalid) { return .failure(.unreadable(Errno(.badDescriptor, call: "poll"))) }
            let n: Int
            do throws(Errno) {
                n = try fd.read(into: &bytes, at: count, count: bytes.count - count)
            } catch {
                if error.code == .wouldBlock { continue } // someone else read it first: wait again
                return .failure(.unreadable(error))
            }
            if n == 0 { break }
            count += n
        }
        if count > 0 && bytes[count - 1] == UInt8(ascii: "\n") { count -= 1 }
        if count > Secret.maximumLength { return .failure(.tooLong) }
        guard count > 0 else { return .failure(.empty) }
        if bytes[..<count].contains(0) { return .failure(.invalid) }
        guard let secret = Secret.copying(bytes[..<count]) else { return .failure(.tooLong) }
        return .success(secret)
    }
}
