import Glibc

/// The system's account database through NSS (getpwnam_r, getpwuid_r).
public enum PasswordDatabase {
    /// An entry as NSS reports it.
    public struct Entry: Equatable, Sendable {
        public let name: String
        public let uid: UInt32
    }

    /// getpwnam_r(3) with a 16 KiB buffer: nil when there is no such account or the lookup fails.
    public static func entry(named name: String) -> Entry? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let count = buffer.count
        guard case .success = systemReturningError(.getpwnamR, { getpwnam_r(name, &pwd, &buffer, count, &result) }),
              result != nil, let pwName = pwd.pw_name else { return nil }
        return Entry(name: String(decoding: CString.bytes(pwName, maximumLength: count), as: UTF8.self), uid: pwd.pw_uid)
    }

    /// getpwuid_r(3) with a 16 KiB buffer: nil when there is no such account or the lookup fails.
    public static func entry(uid: UInt32) -> Entry? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let count = buffer.count
        guard case .success = systemReturningError(.getpwuidR, { getpwuid_r(uid, &pwd, &buffer, count, &result) }),
              result != nil, let pwName = pwd.pw_name else { return nil }
        return Entry(name: String(decoding: CString.bytes(pwName, maximumLength: count), as: UTF8.self), uid: pwd.pw_uid)
    }
}
