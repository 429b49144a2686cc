import CSystem
import Glibc

/// An open file descriptor's number, as swift-system's FileDescriptor: a typed handle with the
/// operations biounlock uses, each a thin wrapper naming the C call it covers and throwing an
/// `Errno`. It does not own the descriptor: `OwnedDescriptor` does, and closes it exactly once.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: STDIN_FILENO)
    public static let standardOutput = FileDescriptor(rawValue: STDOUT_FILENO)
    public static let standardError = FileDescriptor(rawValue: STDERR_FILENO)
}

/// Owns one open descriptor and closes it exactly once: when the owner goes away, or earlier with
/// `close()`. Every descriptor this layer opens is close-on-exec unless asked otherwise, so a
/// host that forks and execs never hands one on.
public struct OwnedDescriptor: ~Copyable {
    public let descriptor: FileDescriptor

    /// Takes ownership of an open descriptor (fd 3 handed to a helper, one end of a socketpair a
    /// test made).
    public init(taking descriptor: FileDescriptor) { self.descriptor = descriptor }

    public var rawValue: Int32 { descriptor.rawValue }

    deinit { descriptor.close() }

    /// close(2) now.
    public consuming func close() {}

    /// Gives up ownership without closing (the caller closes it, or hands it on).
    public consuming func release() -> FileDescriptor {
        let d = descriptor
        discard self
        return d
    }
}

/// The two ends of a socketpair, each owned.
public struct DescriptorPair: ~Copyable {
    public let first: OwnedDescriptor
    public let second: OwnedDescriptor

    /// Gives up ownership of the first end (the caller closes it, or hands it on); the second
    /// is closed now.
    public consuming func releaseFirst() -> FileDescriptor {
        first.release()
    }
}

extension FileDescriptor {
    public enum AccessMode: Sendable {
        case readOnly, writeOnly, readWrite
        var flags: Int32 {
            switch self {
            case .readOnly: return O_RDONLY
            case .writeOnly: return O_WRONLY
            case .readWrite: return O_RDWR
            }
        }
    }

    /// open(2) flags besides the access mode. O_CLOEXEC is always added unless `inheritable`.
    public struct OpenOptions: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let create = OpenOptions(rawValue: O_CREAT)
        public static let exclusive = OpenOptions(rawValue: O_EXCL)
        /// O_NOFOLLOW: a symbolic link at the path fails with ELOOP.
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
        /// O_NONBLOCK: a FIFO cannot block the open, nor reads.
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
        public static let directory = OpenOptions(rawValue: O_DIRECTORY)
        /// Without O_CLOEXEC (the checker's /dev/null for descriptors 0-2).
        public static let inheritable = OpenOptions(rawValue: 1 << 30)
    }

    /// open(2), close-on-exec unless `.inheritable`; `permissions` only with `.create`.
    public static func open(_ path: String, _ mode: AccessMode, options: OpenOptions = [],
                            permissions: UInt32 = 0) throws(Errno) -> OwnedDescriptor {
        var flags = mode.flags | (options.rawValue & ~OpenOptions.inheritable.rawValue)
        if !options.contains(.inheritable) { flags |= O_CLOEXEC }
        let fd = try system(.open) { Glibc.open(path, flags, mode_t(permissions)) }.get()
        return OwnedDescriptor(taking: FileDescriptor(rawValue: fd))
    }

    /// close(2), errors ignored and never retried (Syscalls.swift says why).
    public func close() {
        _ = Glibc.close(rawValue)
    }

    // MARK: transfers

    /// read(2): at most `count` bytes (all that fit when nil) into `buffer` from `offset`; 0 at
    /// the end of the file. A nonblocking descriptor with nothing to read fails with EAGAIN.
    public func read(into buffer: inout [UInt8], at offset: Int = 0, count: Int? = nil) throws(Errno) -> Int {
        let start = min(max(0, offset), buffer.count)
        let wanted = min(count ?? Int.max, buffer.count - start)
        return try buffer.withUnsafeMutableBytes { raw -> Result<Int, Errno> in
            guard let base = raw.baseAddress else { return .success(0) }
            return transfer(.read, count: max(0, wanted)) { n in Glibc.read(rawValue, base + start, n) }
        }.get()
    }

    /// pread(2) until `count` bytes are read from `fileOffset` or the file ends (fewer then),
    /// continuing after short reads; the descriptor's own offset is left alone.
    public func read(count: Int, atFileOffset fileOffset: Int64) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        var total = 0
        while total < bytes.count {
            let done = total
            let n = try bytes.withUnsafeMutableBytes { raw -> Result<Int, Errno> in
                guard let base = raw.baseAddress else { return .success(0) }
                return transfer(.pread, count: raw.count - done) { n in Glibc.pread(rawValue, base + done, n, off_t(fileOffset &+ Int64(done))) }
            }.get()
            if n == 0 { break }
            total += n
        }
        bytes.removeSubrange(total...)
        return bytes
    }

    /// read(2) of one byte: the byte, or nil at the end of the file (for a terminal read key by
    /// key: no buffer holds what was typed).
    public func readByte() throws(Errno) -> UInt8? {
        var byte: UInt8 = 0
        defer { byte = 0 }
        let n = try transfer(.read, count: 1) { n in Glibc.read(rawValue, &byte, n) }.get()
        return n == 0 ? nil : byte
    }

    /// write(2) of `bytes` from `offset`: how many were written (maybe fewer: a short write).
    public func write(_ bytes: [UInt8], from offset: Int = 0) throws(Errno) -> Int {
        let start = min(max(0, offset), bytes.count)
        return try bytes.withUnsafeBytes { raw -> Result<Int, Errno> in
            guard let base = raw.baseAddress else { return .success(0) }
            return transfer(.write, count: raw.count - start) { n in Glibc.write(rawValue, base + start, n) }
        }.get()
    }

    /// write(2) until all of `bytes` is written, continuing after short writes (for a blocking
    /// descriptor: a usage message on standard error).
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let n = try write(bytes, from: offset)
            if n <= 0 { throw Errno(.ioError, call: "write") }
            offset += n
        }
    }

    /// read(2) until the end of the file, at most `limit + 1` bytes (more than `limit` tells the
    /// caller the file is too large), continuing after short reads. A nonblocking descriptor with
    /// nothing to read fails with EAGAIN.
    ///
    /// The buffer starts at `expected + 1` bytes (a regular file's size from fstat: one read, and
    /// one more that finds the end) and doubles, up to `limit + 1`, only when a read fills it. A
    /// buffer of `limit + 1` from the start was 64 KiB zeroed and freed for every config file the
    /// module read, and its free made glibc consolidate the heap: 63,000 of a not-enabled
    /// transaction's 919,000 user-space instructions (callgrind).
    public func readAll(upTo limit: Int, expected: Int = 4096) throws(Errno) -> [UInt8] {
        let capacity = min(max(0, limit), Int.max - 1) + 1
        var bytes = [UInt8](repeating: 0, count: expected >= 0 && expected < capacity ? expected + 1 : capacity)
        var total = 0
        while total < capacity {
            if total == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, capacity - bytes.count)))
            }
            let n = try read(into: &bytes, at: total)
            if n == 0 { break }
            total += n
        }
        bytes.removeSubrange(total...)
        return bytes
    }

    // MARK: state

    /// fstat(2).
    public func status() throws(Errno) -> FileStatus {
        var st = Glibc.stat()
        _ = try system(.fstat) { fstat(rawValue, &st) }.get()
        return FileStatus(st)
    }

    /// fsync(2).
    public func sync() throws(Errno) {
        _ = try system(.fsync) { fsync(rawValue) }.get()
    }

    /// fdatasync(2): the data, and of the metadata what reading it back needs (the size, new
    /// blocks); whether the times go too is the filesystem's choice (ext4 without a journal
    /// writes the inode anyway).
    public func syncData() throws(Errno) {
        _ = try system(.fdatasync) { fdatasync(rawValue) }.get()
    }

    /// fchmod(2).
    public func changePermissions(_ permissions: UInt32) throws(Errno) {
        _ = try system(.fchmod) { fchmod(rawValue, mode_t(permissions)) }.get()
    }

    /// fcntl(F_SETFD, FD_CLOEXEC).
    public func setCloseOnExec() throws(Errno) {
        _ = try system(.fcntl, as: "fcntl(F_SETFD)") { fcntl(rawValue, F_SETFD, FD_CLOEXEC) }.get()
    }

    /// fcntl(F_GETFL), then fcntl(F_SETFL) with O_NONBLOCK added.
    public func setNonBlocking() throws(Errno) {
        let flags = try system(.fcntl, as: "fcntl(O_NONBLOCK)") { fcntl(rawValue, F_GETFL) }.get()
        _ = try system(.fcntl, as: "fcntl(O_NONBLOCK)") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }.get()
    }

    /// fcntl(F_DUPFD_CLOEXEC): a close-on-exec copy numbered `minimum` or above.
    public func duplicate(atLeast minimum: Int32) throws(Errno) -> OwnedDescriptor {
        let fd = try system(.fcntl, as: "fcntl(F_DUPFD_CLOEXEC)") { fcntl(rawValue, F_DUPFD_CLOEXEC, minimum) }.get()
        return OwnedDescriptor(taking: FileDescriptor(rawValue: fd))
    }

    /// dup2(2): makes `target` a copy of this descriptor (not close-on-exec).
    public func duplicate(onto target: FileDescriptor) throws(Errno) {
        _ = try system(.dup2) { dup2(rawValue, target.rawValue) }.get()
    }

    /// fgetxattr(2): the value of the extended attribute `name`, nil when the file has none by
    /// that name (ENODATA); longer than `maximumLength` bytes fails with ERANGE.
    public func extendedAttribute(_ name: String, maximumLength: Int) throws(Errno) -> [UInt8]? {
        var value = [UInt8](repeating: 0, count: max(0, maximumLength))
        let result = value.withUnsafeMutableBytes { raw in
            system(.fgetxattr, failed: { $0 < 0 }) { _ in fgetxattr(rawValue, name, raw.baseAddress, raw.count) }
        }
        switch result {
        case .success(let n):
            value.removeSubrange(min(max(0, n), value.count)...)
            return value
        case .failure(let e) where e.code == .noData:
            return nil
        case .failure(let e):
            throw e
        }
    }

    /// fsetxattr(2): sets the extended attribute `name` to `value` (made or replaced).
    public func setExtendedAttribute(_ name: String, to value: [UInt8]) throws(Errno) {
        _ = try value.withUnsafeBytes { raw in
            system(.fsetxattr) { fsetxattr(rawValue, name, raw.baseAddress, raw.count, 0) }
        }.get()
    }

    /// isatty(3).
    public var isTerminal: Bool { isatty(rawValue) != 0 }

    // MARK: locks

    public enum LockKind: Sendable {
        case shared, exclusive, unlock
        var type: Int32 {
            switch self {
            case .shared: return Int32(F_RDLCK)
            case .exclusive: return Int32(F_WRLCK)
            case .unlock: return Int32(F_UNLCK)
            }
        }
    }

    /// fcntl(F_OFD_SETLK) on the bytes [start, start + length): an open-file-description lock
    /// (owned by this open of the file, not by the process: two opens in one process exclude each
    /// other, and closing another descriptor of the file releases nothing). Never waits: false
    /// while another open holds a conflicting lock (EAGAIN or EACCES).
    public func setOpenFileDescriptionLock(_ kind: LockKind, start: Int64, length: Int64) throws(Errno) -> Bool {
        switch system(.fcntl, as: "fcntl(F_OFD_SETLK)", { biounlock_ofd_setlk(rawValue, kind.type, start, length) }) {
        case .success: return true
        case .failure(let e) where e.code == .wouldBlock || e.code == .permissionDenied: return false
        case .failure(let e): throw e
        }
    }

    /// fcntl(F_OFD_GETLK): whether another open of the file holds a lock on [start, start +
    /// length) that a lock of `kind` would conflict with (a lock held through this open never
    /// counts).
    public func openFileDescriptionLockHeldByOthers(_ kind: LockKind, start: Int64, length: Int64) throws(Errno) -> Bool {
        let held = try system(.fcntl, as: "fcntl(F_OFD_GETLK)") { biounlock_ofd_held_by_others(rawValue, kind.type, start, length) }.get()
        return held == 1
    }

    /// fcntl(F_SETLK) with an exclusive POSIX record lock on [start, start + length) (owned by
    /// the process, released when it exits). Never waits: false while another process holds it.
    public func setRecordLock(start: Int64, length: Int64) throws(Errno) -> Bool {
        var region = flock()
        region.l_type = Int16(F_WRLCK)
        region.l_whence = Int16(SEEK_SET)
        region.l_start = off_t(start)
        region.l_len = off_t(length)
        switch system(.fcntl, as: "fcntl(F_SETLK)", { fcntl(rawValue, F_SETLK, &region) }) {
        case .success: return true
        case .failure(let e) where e.code == .wouldBlock || e.code == .permissionDenied: return false
        case .failure(let e): throw e
        }
    }
}
