import Glibc

/// poll(2) events.
public struct PollEvents: OptionSet, Hashable, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// Reported only (never asked for): an error, the peer hung up, not an open descriptor.
    public static let error = PollEvents(rawValue: Int16(POLLERR))
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

public enum Poll {
    /// One descriptor to wait for; a nil descriptor is skipped (poll ignores a negative one).
    public struct Request: Sendable {
        public var descriptor: FileDescriptor?
        public var events: PollEvents
        public init(_ descriptor: FileDescriptor?, _ events: PollEvents) {
            self.descriptor = descriptor
            self.events = events
        }
    }

    /// poll(2) on `requests` until one is ready or `deadline` passes (`Deadline.never`: no
    /// bound). EINTR is retried with the time then left. Returns each request's revents, in
    /// order, or nil when the deadline passed with none ready. A deadline already passed polls
    /// once without waiting.
    public static func wait(_ requests: [Request], until deadline: Deadline) throws(Errno) -> [PollEvents]? {
        var fds = requests.map { pollfd(fd: $0.descriptor?.rawValue ?? -1, events: $0.events.rawValue, revents: 0) }
        let count = nfds_t(fds.count)
        let ready = try system(.poll) { Glibc.poll(&fds, count, deadline.pollTimeout) }.get()
        guard ready > 0 else { return nil }
        return fds.map { PollEvents(rawValue: $0.revents) }
    }

    /// poll(2) on one descriptor: its revents, or nil when the deadline passed first.
    public static func wait(_ descriptor: FileDescriptor, for events: PollEvents, until deadline: Deadline) throws(Errno) -> PollEvents? {
        try wait([Request(descriptor, events)], until: deadline)?.first
    }
}
