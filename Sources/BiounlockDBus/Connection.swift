import BiounlockSystem

/// A client connection to a message bus, read and written by one thread: what biounlock-fprintd
/// needs of D-Bus, in the order the bus sends it.
///
/// Security choices, each enforced here:
/// - only `unix:path=/ABSOLUTE` addresses (the caller passes the root-owned `fprintd_bus`): no
///   autolaunch, no unixexec, nothing that would run a program, no TCP;
/// - SASL EXTERNAL only: the bus reads who we are from the socket (SO_PEERCRED); no cookie file
///   is ever read;
/// - every wait is poll(2) until the caller's deadline, on the bus socket and (optionally) one
///   other descriptor the caller watches; writes never raise SIGPIPE (MSG_NOSIGNAL);
/// - what the bus sends is cut into messages by their fixed header alone (DBusStream) and read
///   by a bounded parser (DBusMessage.decode): at most `messageLimit` bytes a message (longer
///   ones are read and dropped whole), 16 Ki values a message, 64 levels of nesting. A message
///   that does not parse is dropped (counted in `unreadable`), a stream that does not start a
///   message where one must start ends the connection. Nothing is trusted for being well-formed:
///   who sent it is the caller's check (the bus stamps `sender` on every message it routes).
public final class DBusConnection {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not a `unix:path=/ABSOLUTE` address.
        case address(String)
        case connect(Errno)
        /// The bus refused the SASL handshake (its line).
        case rejected(String)
        /// The bus closed the connection.
        case closed
        /// The stream from the bus did not parse.
        case broken
        case timedOut
        case io(Errno)

        public var description: String {
            switch self {
            case .address(let a): return "not a unix:path= address: \(a)"
            case .connect(let e): return "cannot connect to the bus: \(e)"
            case .rejected(let line): return "the bus refused the authentication (\(line))"
            case .closed: return "the bus closed the connection"
            case .broken: return "the bus sent a stream that is not D-Bus"
            case .timedOut: return "no answer from the bus in time"
            case .io(let e): return e.description
            }
        }
    }

    public enum Received: Equatable {
        case message(DBusMessage)
        /// The descriptor the caller watches is readable (or hung up).
        case watched
        case timedOut
        case failed(Failure)
    }

    public static let busName = "org.freedesktop.DBus"
    public static let busPath = "/org/freedesktop/DBus"
    public static let busInterface = "org.freedesktop.DBus"
    /// Largest message kept; longer ones are dropped unread (fprintd's are a few hundred bytes).
    public static let messageLimit = 1024 * 1024

    private var fd: Int32
    private var stream = DBusStream(limit: DBusConnection.messageLimit)
    private var authenticated = false
    private var nextSerial: UInt32 = 1
    /// Messages that did not parse and were dropped.
    public private(set) var unreadable = 0
    /// Messages over `messageLimit`, dropped.
    public var oversized: Int { stream.skipped }
    public private(set) var failure: Failure?

    private init(fd: Int32) { self.fd = fd }

    /// A connection on a socket already connected to something that speaks as a bus (unit
    /// tests and the fuzz target play the bus): it reads the handshake's answer line first, as
    /// after `open`, and owns (closes) the descriptor.
    public static func adopting(connected fd: Int32) -> DBusConnection { DBusConnection(fd: fd) }

    deinit { close() }

    public func close() {
        guard fd >= 0 else { return }
        FileDescriptor(rawValue: fd).close()
        fd = -1
    }

    private var descriptor: FileDescriptor { FileDescriptor(rawValue: fd) }

    /// The socket path of a `unix:path=/ABSOLUTE` address (no other key, no second address).
    public static func socketPath(of address: String) -> String? {
        guard address.hasPrefix("unix:path=/"), !address.contains(","), !address.contains(";") else { return nil }
        return String(address.dropFirst("unix:path=".count))
    }

    /// Connects to the bus at `address` and sends, in one write, the SASL EXTERNAL handshake,
    /// BEGIN, Hello and then `first` -- the bus reads them in order, so no round trip is spent
    /// waiting for the handshake. Returns the connection and the serials of `first`.
    public static func open(address: String, first: [DBusMessage], deadline: Deadline) -> Result<(DBusConnection, [UInt32]), Failure> {
        guard let path = socketPath(of: address), let socketAddress = LocalSocketAddress(path) else {
            return .failure(.address(address))
        }
        let socket: OwnedDescriptor
        do throws(Errno) { socket = try FileDescriptor.localStreamSocket(nonBlocking: true) } catch { return .failure(.connect(error)) }
        // A Unix socket connects at once, or fails: EAGAIN (the bus's backlog is full) is a
        // failure too, never a wait without an event to wait on.
        do throws(Errno) { try socket.descriptor.connect(to: socketAddress) } catch { return .failure(.connect(error)) }
        let connection = DBusConnection(fd: socket.release().rawValue)
        // EXTERNAL with our uid, as decimal text in hex: the bus checks it against the socket.
        let uid = Array(String(ProcessIdentity.effectiveUserID).utf8).map { byte -> String in
            let hex = Array("0123456789abcdef".utf8)
            return String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]], as: UTF8.self)
        }.joined()
        var bytes: [UInt8] = [0] + Array("AUTH EXTERNAL \(uid)\r\nBEGIN\r\n".utf8)
        let hello = DBusMessage.call(busName, busPath, busInterface, "Hello")
        var serials: [UInt32] = []
        for message in [hello] + first {
            bytes += message.encoded(serial: connection.nextSerial)
            serials.append(connection.nextSerial)
            connection.nextSerial &+= 1
        }
        if case .failure(let f) = connection.write(bytes, until: deadline) { return .failure(f) }
        return .success((connection, Array(serials.dropFirst())))
    }

    /// Sends `messages` in one write; their serials, in order.
    public func send(_ messages: [DBusMessage], until deadline: Deadline) -> Result<[UInt32], Failure> {
        var bytes: [UInt8] = []
        var serials: [UInt32] = []
        for message in messages {
            if nextSerial == 0 { nextSerial = 1 }
            bytes += message.encoded(serial: nextSerial)
            serials.append(nextSerial)
            nextSerial &+= 1
        }
        return write(bytes, until: deadline).map { serials }
    }

    private func write(_ bytes: [UInt8], until deadline: Deadline) -> Result<Void, Failure> {
        if let failure { return .failure(failure) }
        guard fd >= 0 else { return .failure(.closed) }
        var offset = 0
        while offset < bytes.count {
            do throws(Errno) {
                let n = try descriptor.send(bytes, from: offset, flags: [.noSignal, .dontWait])
                guard n > 0 else { return fail(.io(Errno(.ioError, call: "send"))) }
                offset += n
            } catch {
                switch error.code {
                case .wouldBlock:
                    do throws(Errno) {
                        if try Poll.wait(descriptor, for: .writable, until: deadline) == nil { return .failure(.timedOut) }
                    } catch {
                        return fail(.io(error))
                    }
                case .brokenPipe, .connectionReset: return fail(.closed)
                default: return fail(.io(error))
                }
            }
        }
        return .success(())
    }

    private func fail<T>(_ f: Failure) -> Result<T, Failure> {
        failure = f
        return .failure(f)
    }

    /// The next message from the bus, in the order it sent them; or `watched` as soon as
    /// `watching` is readable (or hung up) while nothing from the bus is waiting; or why neither came
    /// by `deadline` (a deadline already passed: only what can be read without waiting).
    public func receive(until deadline: Deadline, watching: FileDescriptor? = nil) -> Received {
        if let failure { return .failed(failure) }
        guard fd >= 0 else { return .failed(.closed) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            // What is buffered first: the handshake's answer, then whole messages.
            if !authenticated {
                switch stream.line() {
                case .success(let line)?:
                    guard line.starts(with: Array("OK ".utf8)) else {
                        return .failed(failed(.rejected(String(decoding: line.prefix(80), as: UTF8.self))))
                    }
                    authenticated = true
                    continue
                case .failure?: return .failed(failed(.rejected("no answer line")))
                case nil: break
                }
            } else {
                switch stream.next() {
                case .message(let bytes):
                    guard let message = DBusMessage.decode(bytes) else { unreadable += 1; continue }
                    return .message(message)
                case .broken: return .failed(failed(.broken))
                case .needMore: break
                }
            }
            let requests = [Poll.Request(descriptor, .readable), Poll.Request(watching, .readable)]
            let events: [PollEvents]?
            do throws(Errno) { events = try Poll.wait(requests, until: deadline) } catch { return .failed(failed(.io(error))) }
            guard let events else { return .timedOut }
            // The bus first: a status that came as the watched descriptor woke us still counts.
            if events.first?.isEmpty != false, events.count > 1, !events[1].isEmpty { return .watched }
            do throws(Errno) {
                let n = try descriptor.receive(into: &chunk, flags: [.dontWait])
                if n == 0 { return .failed(failed(.closed)) }
                stream.append(chunk.prefix(n))
            } catch {
                switch error.code {
                case .wouldBlock: continue
                case .connectionReset: return .failed(failed(.closed))
                default: return .failed(failed(.io(error)))
                }
            }
        }
    }

    private func failed(_ f: Failure) -> Failure {
        failure = f
        return f
    }
}
