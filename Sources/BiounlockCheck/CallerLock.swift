import BiounlockSystem
import Glibc
import BiounlockCore

/// One check at a time per user: a POSIX record lock on byte `uid` of `checker.lock` in the
/// store's (root-only) directory, held for the whole check and released by the kernel when the
/// checker exits, however it exits.
///
/// Why, beyond the passcode lockout (which already counts each guess atomically before it is
/// checked, so parallel guesses cannot outrun it): every check runs as root, and a locked or
/// wrong passcode still costs one Argon2id computation (64 MiB) so that timing tells nothing.
/// Without the lock one user could start hundreds of checkers at once and have root spend
/// their memory and CPU; with it, a user gets one check at a time and the others wait (at most
/// `waitMilliseconds`, then the caller falls back to the password). Other users are not affected.
final class CallerLock {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    static let waitMilliseconds: Int64 = 5_000
    static let fileName = "checker.lock"

    enum Failure: Error, CustomStringConvertible {
        case unusable(String)
        case busy

        var description: String {
            switch self {
            case .unusable(let why): return why
            case .busy: return "another check of this user is still running"
            }
        }
    }

    /// Takes the lock for `uid` in `directory` (created 0600, never followed through a symlink).
    static func acquire(uid: UInt32, directory: String, waitMilliseconds: Int64 = CallerLock.waitMilliseconds) -> Result<CallerLock, Failure> {
        if let problem = TrustedFiles.checkDirectory(directory) { return .failure(.unusable("lock directory refused: \(problem)")) }
        let path = directory + "/" + fileName
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0o600)
        guard fd >= 0 else { return .failure(.unusable("cannot open \(path): \(errnoDescription(errno))")) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == trustedOwner,
              st.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            close(fd)
            return .failure(.unusable("\(path) is not a root-owned regular file of mode 0600"))
        }
        let lock = CallerLock(fd: fd)
        let deadline = monotonicMillisecondsNow() &+ waitMilliseconds
        while true {
            var region = flock()
            region.l_type = Int16(F_WRLCK)
            region.l_whence = Int16(SEEK_SET)
            region.l_start = off_t(uid)
            region.l_len = 1
            if fcntl(fd, F_SETLK, &region) == 0 { return .success(lock) }
            guard errno == EACCES || errno == EAGAIN || errno == EINTR else {
                return .failure(.unusable("cannot lock \(path): \(errnoDescription(errno))"))
            }
            if monotonicMillisecondsNow() >= deadline { return .failure(.busy) }
            _ = poll(nil, 0, 25)
        }
    }
}

func monotonicMillisecondsNow() -> Int64 { SystemClock().monotonicMilliseconds() }
