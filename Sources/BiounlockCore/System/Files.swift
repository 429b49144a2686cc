import Glibc

/// Why a file that holds settings or secrets is not trusted.
///
/// Security choice: the store, its directory, the config file and the simulated sensor's
/// socket directory decide who gets in, so each must be owned by root and writable by
/// root only, and must not be a symlink (opened with O_NOFOLLOW). Anything else is refused
/// and the module falls back to the password (PAM_AUTHINFO_UNAVAIL), never to success.
public enum FileTrustProblem: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(String)
    case unreadable(String, errno: Int32)
    case symlink(String)
    case notRegularFile(String)
    case notDirectory(String)
    case wrongOwner(String, uid: UInt32)
    case writableByOthers(String, mode: UInt32)
    case tooLarge(String)
    case notExecutable(String)
    case notCanonical(String)
    case notSetuidRoot(String)

    public var description: String {
        switch self {
        case .missing(let p): return "\(p) does not exist"
        case .unreadable(let p, let e): return "\(p) cannot be read: \(errnoDescription(e))"
        case .symlink(let p): return "\(p) is a symbolic link"
        case .notRegularFile(let p): return "\(p) is not a regular file"
        case .notDirectory(let p): return "\(p) is not a directory"
        case .wrongOwner(let p, let uid): return "\(p) is owned by uid \(uid), not root"
        case .writableByOthers(let p, let mode): return "\(p) is writable by group or others (mode \(octal(mode & 0o7777)))"
        case .tooLarge(let p): return "\(p) is too large"
        case .notExecutable(let p): return "\(p) is not executable"
        case .notCanonical(let p): return "\(p) is not an absolute path without '.', '..' or '//'"
        case .notSetuidRoot(let p): return "\(p) is not setuid root (mode 4755) or not executable by others"
        }
    }
}

public func errnoDescription(_ code: Int32) -> String {
    guard let s = strerror(code) else { return "errno \(code)" }
    return String(cString: s)
}

func octal(_ n: UInt32) -> String { "0" + String(n, radix: 8) }

/// The uid that must own trusted files. Root in production; tests running as root use it too.
public let trustedOwner: uid_t = 0

public enum TrustedFiles {
    /// Checks that `path` is a directory owned by root and not writable by group or others.
    public static func checkDirectory(_ path: String) -> FileTrustProblem? {
        var st = stat()
        if lstat(path, &st) != 0 {
            return errno == ENOENT ? .missing(path) : .unreadable(path, errno: errno)
        }
        if (st.st_mode & S_IFMT) == S_IFLNK { return .symlink(path) }
        if (st.st_mode & S_IFMT) != S_IFDIR { return .notDirectory(path) }
        return checkOwnership(path, st)
    }

    static func checkOwnership(_ path: String, _ st: stat) -> FileTrustProblem? {
        if st.st_uid != trustedOwner { return .wrongOwner(path, uid: st.st_uid) }
        if st.st_mode & (S_IWGRP | S_IWOTH) != 0 { return .writableByOthers(path, mode: st.st_mode) }
        return nil
    }

    /// Checks an existing regular file (not a symlink, root-owned, not group/world-writable)
    /// and the directory that holds it.
    public static func checkFile(_ path: String) -> FileTrustProblem? {
        if let problem = checkDirectory(parentDirectory(of: path)) { return problem }
        var st = stat()
        if lstat(path, &st) != 0 {
            return errno == ENOENT ? .missing(path) : .unreadable(path, errno: errno)
        }
        if (st.st_mode & S_IFMT) == S_IFLNK { return .symlink(path) }
        if (st.st_mode & S_IFMT) != S_IFREG { return .notRegularFile(path) }
        return checkOwnership(path, st)
    }

    /// Reads a small trusted text file: opened with O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK (a FIFO
    /// cannot block us), checked with fstat on the open descriptor (no check-then-open race),
    /// at most `limit` bytes.
    public static func readText(_ path: String, limit: Int = 64 * 1024) -> Result<String, FileTrustProblem> {
        if let problem = checkDirectory(parentDirectory(of: path)) { return .failure(problem) }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        if fd < 0 {
            switch errno {
            case ENOENT: return .failure(.missing(path))
            case ELOOP: return .failure(.symlink(path))
            case let e: return .failure(.unreadable(path, errno: e))
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(.unreadable(path, errno: errno)) }
        if (st.st_mode & S_IFMT) != S_IFREG { return .failure(.notRegularFile(path)) }
        if let problem = checkOwnership(path, st) { return .failure(problem) }
        if st.st_size > limit { return .failure(.tooLarge(path)) }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var total = 0
        while total <= limit {
            let n = bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return read(fd, base + total, raw.count - total)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(path, errno: errno))
            }
            if n == 0 { break }
            total += n
        }
        if total > limit { return .failure(.tooLarge(path)) }
        return .success(String(decoding: bytes[0..<total], as: UTF8.self))
    }

    /// Checks a program biounlock runs as root (the libfprint helper): an absolute, canonical
    /// path; every directory from / down to it root-owned, not writable by group or others and not
    /// a symlink; the file itself regular, root-owned, not group/world-writable and executable.
    /// Anyone able to write anywhere along the path could otherwise swap the program between this
    /// check and the exec.
    public static func checkExecutable(_ path: String) -> FileTrustProblem? {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard path.utf8.first == UInt8(ascii: "/"), path.utf8.count > 1,
              !components.dropFirst().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            return .notCanonical(path)
        }
        var directory = "/"
        if let problem = checkDirectory(directory) { return problem }
        for component in components.dropFirst().dropLast() {
            directory += (directory == "/" ? "" : "/") + component
            if let problem = checkDirectory(directory) { return problem }
        }
        var st = stat()
        if lstat(path, &st) != 0 {
            return errno == ENOENT ? .missing(path) : .unreadable(path, errno: errno)
        }
        if (st.st_mode & S_IFMT) == S_IFLNK { return .symlink(path) }
        if (st.st_mode & S_IFMT) != S_IFREG { return .notRegularFile(path) }
        if let problem = checkOwnership(path, st) { return problem }
        if st.st_mode & S_IXUSR == 0 { return .notExecutable(path) }
        return nil
    }

    /// Checks the setuid checker the module runs as the user (`check_helper`): everything
    /// checkExecutable checks, and setuid (owned by root, so it runs as root) and executable by
    /// others (the user runs it). The module hands it what the user types, so a checker anyone
    /// but root could replace would be a password thief, and one that is not setuid root could
    /// not read the store.
    public static func checkSetuidHelper(_ path: String) -> FileTrustProblem? {
        if let problem = checkExecutable(path) { return problem }
        var st = stat()
        guard lstat(path, &st) == 0 else { return .unreadable(path, errno: errno) }
        if st.st_mode & S_ISUID == 0 || st.st_mode & S_IXOTH == 0 { return .notSetuidRoot(path) }
        return nil
    }

    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }
}

/// Directory listing and file tests for admin checks (never on the module's path).
public enum Directory {
    /// Names in `path` (not "." or ".."), at most `limit`; empty when it cannot be read.
    public static func names(_ path: String, limit: Int = 1024) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var out: [String] = []
        while out.count < limit, let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
                let bytes = raw.prefix { $0 != 0 }
                return String(decoding: bytes, as: UTF8.self)
            }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    public static func isExecutable(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return st.st_mode & S_IXUSR != 0
    }
}
