/// Why a file that holds settings or secrets is not trusted.
///
/// Security choice: the store, its directory, the config file, the message catalogs, the
/// simulated sensor's socket directory and the helpers biounlock starts decide who gets in, so
/// each must be owned by root and writable by root only, and must not be a symlink (opened with
/// O_NOFOLLOW). Anything else is refused and the module falls back to the password
/// (PAM_AUTHINFO_UNAVAIL), never to success.
public enum FileTrustProblem: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(String)
    case unreadable(String, Errno)
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
        case .unreadable(let p, let e): return "\(p) cannot be read: \(e.message)"
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

    /// What a failed lstat/open of `path` means: missing, a link (O_NOFOLLOW), or unreadable.
    static func failed(_ path: String, _ e: Errno) -> FileTrustProblem {
        switch e.code {
        case .noSuchFileOrDirectory: return .missing(path)
        case .tooManySymbolicLinks where e.call == SystemCall.open.rawValue: return .symlink(path)
        default: return .unreadable(path, e)
        }
    }
}

func octal(_ n: UInt32) -> String { "0" + String(n, radix: 8) }

/// The uid that must own trusted files. Root in production; tests running as root use it too.
public let trustedOwner: UInt32 = 0

/// The file trust checks, one API for every file that decides who gets in: the module's config
/// and store (and its side files), the checker's lock, the catalogs, the simulated sensor's
/// directory, and the helpers the module and the CLI start (checkExecutable, checkSetuidHelper).
public enum TrustedFiles {
    /// Checks that `path` is a directory owned by root and not writable by group or others.
    public static func checkDirectory(_ path: String) -> FileTrustProblem? {
        let st: FileStatus
        do throws(Errno) { st = try FileStatus.of(path, followingSymbolicLinks: false) } catch { return .failed(path, error) }
        if st.kind == .symbolicLink { return .symlink(path) }
        if st.kind != .directory { return .notDirectory(path) }
        return checkOwnership(path, st)
    }

    /// Owned by root and not writable by group or others (the file's type is the caller's to check).
    public static func checkOwnership(_ path: String, _ st: FileStatus) -> FileTrustProblem? {
        if st.owner != trustedOwner { return .wrongOwner(path, uid: st.owner) }
        if st.isWritableByGroupOrOthers { return .writableByOthers(path, mode: st.mode) }
        return nil
    }

    /// A regular file owned by root and not writable by group or others, as fstat of an open
    /// descriptor shows it (no check-then-open race).
    public static func checkOpened(_ path: String, _ st: FileStatus) -> FileTrustProblem? {
        if st.kind != .regular { return .notRegularFile(path) }
        return checkOwnership(path, st)
    }

    /// Checks an existing regular file (not a symlink, root-owned, not group/world-writable)
    /// and the directory that holds it.
    public static func checkFile(_ path: String) -> FileTrustProblem? {
        checkDirectory(parentDirectory(of: path)) ?? checkRegularFile(path)
    }

    /// checkFile without its directory: for the files of a directory checked once.
    public static func checkRegularFile(_ path: String) -> FileTrustProblem? {
        let st: FileStatus
        do throws(Errno) { st = try FileStatus.of(path, followingSymbolicLinks: false) } catch { return .failed(path, error) }
        if st.kind == .symbolicLink { return .symlink(path) }
        if st.kind != .regular { return .notRegularFile(path) }
        return checkOwnership(path, st)
    }

    /// Reads a small trusted text file: opened with O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK (a FIFO
    /// cannot block us), checked with fstat on the open descriptor (no check-then-open race),
    /// at most `limit` bytes.
    public static func readText(_ path: String, limit: Int = 64 * 1024) -> Result<String, FileTrustProblem> {
        if let problem = checkDirectory(parentDirectory(of: path)) { return .failure(problem) }
        let file: OwnedDescriptor
        do throws(Errno) {
            file = try FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking, .noControllingTerminal])
        } catch {
            return .failure(.failed(path, error))
        }
        let st: FileStatus
        do throws(Errno) { st = try file.descriptor.status() } catch { return .failure(.unreadable(path, error)) }
        if let problem = checkOpened(path, st) { return .failure(problem) }
        if st.size > limit { return .failure(.tooLarge(path)) }
        let bytes: [UInt8]
        do throws(Errno) { bytes = try file.descriptor.readAll(upTo: limit, expected: Int(clamping: st.size)) } catch { return .failure(.unreadable(path, error)) }
        if bytes.count > limit { return .failure(.tooLarge(path)) }
        return .success(String(decoding: bytes, as: UTF8.self))
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
        let st: FileStatus
        do throws(Errno) { st = try FileStatus.of(path, followingSymbolicLinks: false) } catch { return .failed(path, error) }
        if st.kind == .symbolicLink { return .symlink(path) }
        if st.kind != .regular { return .notRegularFile(path) }
        if let problem = checkOwnership(path, st) { return problem }
        if !st.isExecutableByOwner { return .notExecutable(path) }
        return nil
    }

    /// Checks the setuid checker the module runs as the user (`check_helper`): everything
    /// checkExecutable checks, and setuid (owned by root, so it runs as root) and executable by
    /// others (the user runs it). The module hands it what the user types, so a checker anyone
    /// but root could replace would be a password thief, and one that is not setuid root could
    /// not read the store.
    public static func checkSetuidHelper(_ path: String) -> FileTrustProblem? {
        if let problem = checkExecutable(path) { return problem }
        let st: FileStatus
        do throws(Errno) { st = try FileStatus.of(path, followingSymbolicLinks: false) } catch { return .unreadable(path, error) }
        if !st.isSetUserID || !st.isExecutableByOthers { return .notSetuidRoot(path) }
        return nil
    }

    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }
}
