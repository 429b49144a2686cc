import Glibc

/// The system's account database through NSS (getpwnam_r, getpwuid_r).
public enum PasswordDatabase {
    /// An entry as NSS reports it.
    public struct Entry: Equatable, Sendable {
        public let name: String
        public let uid: UInt32
    }

    /// getpwnam_r(3): nil when there is no such account or the lookup fails.
    public static func entry(named name: String) -> Entry? {
        lookup(.getpwnamR) { getpwnam_r(name, &$0, &$1, $2, &$3) }
    }

    /// getpwuid_r(3): nil when there is no such account or the lookup fails.
    public static func entry(uid: UInt32) -> Entry? {
        lookup(.getpwuidR) { getpwuid_r(uid, &$0, &$1, $2, &$3) }
    }

    /// One reentrant lookup (`call`'s arguments after the key: the entry, a 16 KiB buffer, its
    /// size, the result pointer), the name read no further than the buffer.
    private static func lookup(_ name: SystemCall,
                               _ call: (inout passwd, inout [CChar], Int, inout UnsafeMutablePointer<passwd>?) -> Int32) -> Entry? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let count = buffer.count
        guard case .success = systemReturningError(name, { call(&pwd, &buffer, count, &result) }),
              result != nil, let pwName = pwd.pw_name else { return nil }
        return Entry(name: String(decoding: CString.bytes(pwName, maximumLength: count), as: UTF8.self), uid: pwd.pw_uid)
    }
}
