import Glibc

/// A failed C call: which call, and the errno it set. The one error type of this layer; the
/// layers above keep it inside their own failures (StoreFailure, SensorUnavailable, ...) so that
/// what failed stays typed until it is shown.
///
/// `description` is "call: message", the text biounlock has always logged for a failed call
/// ("fsync: No space left on device"); `message` is strerror_r's text alone.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The errno value.
    public let code: Code
    /// The C call that failed, as logs name it ("fsync", "fcntl(F_DUPFD_CLOEXEC)").
    public let call: String

    public init(_ code: Code, call: String) {
        self.code = code
        self.call = call
    }

    /// strerror_r's description of the code ("No space left on device").
    public var message: String { code.description }

    public var description: String { "\(call): \(message)" }

    /// An errno value, with the names the layers above compare against (they never see the C
    /// constants). Values come from the headers, never written as numbers.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        init(_ rawValue: Int32) { self.rawValue = rawValue }

        public static let interrupted = Code(EINTR)
        public static let wouldBlock = Code(EAGAIN)   // == EWOULDBLOCK on Linux
        public static let noSuchFileOrDirectory = Code(ENOENT)
        public static let fileExists = Code(EEXIST)
        public static let tooManySymbolicLinks = Code(ELOOP)   // O_NOFOLLOW met a link
        public static let permissionDenied = Code(EACCES)
        public static let notPermitted = Code(EPERM)
        public static let noSpace = Code(ENOSPC)
        public static let ioError = Code(EIO)
        public static let tooManyOpenFiles = Code(EMFILE)
        public static let noMemory = Code(ENOMEM)
        public static let brokenPipe = Code(EPIPE)
        public static let connectionReset = Code(ECONNRESET)
        public static let connectionAborted = Code(ECONNABORTED)
        public static let connectionRefused = Code(ECONNREFUSED)
        public static let inProgress = Code(EINPROGRESS)
        public static let noChildProcess = Code(ECHILD)
        public static let noSuchProcess = Code(ESRCH)
        public static let badDescriptor = Code(EBADF)
        public static let invalidArgument = Code(EINVAL)
        public static let resultTooLarge = Code(ERANGE)
        public static let noLocks = Code(ENOLCK)
        public static let noData = Code(ENODATA)   // no extended attribute by that name

        /// strerror_r's text ("errno N" for a code it does not know).
        public var description: String {
            var buffer = [CChar](repeating: 0, count: 256)
            // The XSI strerror_r (what Swift imports) fills `buffer`, also with "Unknown error N"
            // for a code it does not know (returning EINVAL then).
            _ = strerror_r(rawValue, &buffer, buffer.count - 1)
            guard buffer[0] != 0 else { return "errno \(rawValue)" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
