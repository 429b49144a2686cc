import Glibc

/// An AF_UNIX socket path: sun_path holds 108 bytes including the terminator, so longer paths
/// are refused, not truncated.
public struct LocalSocketAddress: Sendable {
    public static let maximumPathLength = 107
    let bytes: [UInt8]

    /// nil when `path` is empty, longer than `maximumPathLength` bytes or holds a NUL.
    public init?(_ path: String) {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= LocalSocketAddress.maximumPathLength, !bytes.contains(0) else { return nil }
        self.bytes = bytes
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}

extension FileDescriptor {
    /// socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC [| SOCK_NONBLOCK]).
    public static func localStreamSocket(nonBlocking: Bool) throws(Errno) -> OwnedDescriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = try system(.socket) { socket(AF_UNIX, type, 0) }.get()
        return OwnedDescriptor(taking: FileDescriptor(rawValue: fd))
    }

    /// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC): two connected ends.
    public static func localStreamPair() throws(Errno) -> DescriptorPair {
        var pair: [Int32] = [-1, -1]
        _ = try system(.socketpair) { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) }.get()
        return DescriptorPair(first: OwnedDescriptor(taking: FileDescriptor(rawValue: pair[0])),
                              second: OwnedDescriptor(taking: FileDescriptor(rawValue: pair[1])))
    }

    /// bind(2) to a path (the socket file is made with the process's umask).
    public func bind(to address: LocalSocketAddress) throws(Errno) {
        _ = try address.withSockaddr { p, n in system(.bind) { Glibc.bind(rawValue, p, n) } }.get()
    }

    /// listen(2).
    public func listen(backlog: Int32) throws(Errno) {
        _ = try system(.listen) { Glibc.listen(rawValue, backlog) }.get()
    }

    /// accept(2): the connection, as the kernel makes it (Swift's Glibc module has no accept4:
    /// the caller sets close-on-exec and nonblocking itself).
    public func accept() throws(Errno) -> OwnedDescriptor {
        let fd = try system(.accept) { Glibc.accept(rawValue, nil, nil) }.get()
        return OwnedDescriptor(taking: FileDescriptor(rawValue: fd))
    }

    /// connect(2). Not retried on EINTR (a connect interrupted goes on in the background, and a
    /// second one would fail): an interrupted connect is reported as EINPROGRESS, which a
    /// nonblocking socket reports anyway -- wait for it to be writable.
    public func connect(to address: LocalSocketAddress) throws(Errno) {
        let result = address.withSockaddr { p, n in
            system(.connect, retryingInterrupts: false, failed: { $0 == -1 }) { _ in Glibc.connect(rawValue, p, n) }
        }
        switch result {
        case .success: return
        case .failure(let e) where e.code == .interrupted: throw Errno(.inProgress, call: e.call)
        case .failure(let e): throw e
        }
    }

    /// shutdown(SHUT_WR): no more writes (the peer reads end of file).
    public func shutdownWriting() throws(Errno) {
        _ = try system(.shutdown) { Glibc.shutdown(rawValue, Int32(SHUT_WR)) }.get()
    }

    public struct MessageFlags: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// MSG_NOSIGNAL: a peer that went away is EPIPE, never a SIGPIPE in the host.
        public static let noSignal = MessageFlags(rawValue: Int32(MSG_NOSIGNAL))
        /// MSG_DONTWAIT: EAGAIN instead of blocking.
        public static let dontWait = MessageFlags(rawValue: Int32(MSG_DONTWAIT))
    }

    /// send(2) of `bytes` from `offset`: how many were sent (maybe fewer: a short send).
    public func send(_ bytes: [UInt8], from offset: Int = 0, flags: MessageFlags) throws(Errno) -> Int {
        let start = min(max(0, offset), bytes.count)
        return try bytes.withUnsafeBytes { raw -> Result<Int, Errno> in
            guard let base = raw.baseAddress else { return .success(0) }
            return transfer(.send, count: raw.count - start) { n in Glibc.send(rawValue, base + start, n, flags.rawValue) }
        }.get()
    }

    /// recv(2) into `buffer` (all of it at most): how many bytes came, 0 when the peer closed.
    public func receive(into buffer: inout [UInt8], flags: MessageFlags) throws(Errno) -> Int {
        try buffer.withUnsafeMutableBytes { raw -> Result<Int, Errno> in
            guard let base = raw.baseAddress else { return .success(0) }
            return transfer(.recv, count: raw.count) { n in recv(rawValue, base, n, flags.rawValue) }
        }.get()
    }
}
