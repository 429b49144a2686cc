import BiounlockCore
import BiounlockSystem

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
    private let file: OwnedDescriptor

    private init(file: consuming OwnedDescriptor) { self.file = file }

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
        let file: OwnedDescriptor
        do throws(Errno) {
            file = try FileDescriptor.open(path, .readWrite, options: [.create, .noFollow, .nonBlocking, .noControllingTerminal],
                                           permissions: 0o600)
        } catch {
            return .failure(.unusable("cannot open \(path): \(error.message)"))
        }
        guard let st = try? file.descriptor.status(), TrustedFiles.checkOpened(path, st) == nil else {
            return .failure(.unusable("\(path) is not a root-owned regular file of mode 0600"))
        }
        let lock = CallerLock(file: file)
        let deadline = Deadline.after(milliseconds: waitMilliseconds)
        while true {
            do throws(Errno) {
                if try lock.file.descriptor.setRecordLock(start: Int64(uid), length: 1) { return .success(lock) }
            } catch {
                return .failure(.unusable("cannot lock \(path): \(error.message)"))
            }
            if deadline.hasPassed() { return .failure(.busy) }
            Sleep.milliseconds(25)
        }
    }
}
