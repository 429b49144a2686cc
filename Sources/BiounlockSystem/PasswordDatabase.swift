import Glibc

/// The system's account database through NSS (getpwnam_r, getpwuid_r).
public enum PasswordDatabase {
    /// An entry as NSS reports it.
    public struct Entry: Equatable, Sendable {
        public let name: String
        public let uid: UInt32
    }

    /// getpwnam_r(3): the entry, nil when there is no such account, or why NSS could not say
    /// (a directory service down, no descriptor or memory left).
    public static func find(named name: String) -> Result<Entry?, Errno> {
        lookup(.getpwnamR) { getpwnam_r(name, &$0, &$1, $2, &$3) }
    }

    /// getpwuid_r(3), as `find(named:)`.
    public static func find(uid: UInt32) -> Result<Entry?, Errno> {
        lookup(.getpwuidR) { getpwuid_r(uid, &$0, &$1, $2, &$3) }
    }

    /// getpwnam_r(3): nil when there is no such account or the lookup fails.
    public static func entry(named name: String) -> Entry? {
        (try? find(named: name).get()) ?? nil
    }

    /// getpwuid_r(3): nil when there is no such account or the lookup fails.
    public static func entry(uid: UInt32) -> Entry? {
        (try? find(uid: uid).get()) ?? nil
    }

    /// The largest buffer a lookup grows to when NSS says an entry does not fit (ERANGE).
    static let maximumBufferSize = 1 << 20

    /// One reentrant lookup (`call`'s arguments after the key: the entry, the buffer, its size,
    /// the result pointer), the name read no further than the buffer. A buffer too small for the
    /// entry (ERANGE: a long GECOS field, a directory service's long home path) is doubled from
    /// 16 KiB up to `maximumBufferSize`. "Not found" is what getpwnam_r(3) says it may be: 0
    /// with no result, or ENOENT, ESRCH, EBADF or EPERM.
    static func lookup(_ name: SystemCall,
                       _ call: (inout passwd, inout [CChar], Int, inout UnsafeMutablePointer<passwd>?) -> Int32) -> Result<Entry?, Errno> {
        var size = 16 * 1024
        while true {
            var pwd = passwd()
            var result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: size)
            let count = buffer.count
            switch systemReturningError(name, { call(&pwd, &buffer, count, &result) }) {
            case .success:
                guard result != nil, let pwName = pwd.pw_name else { return .success(nil) }
                return .success(Entry(name: String(decoding: CString.bytes(pwName, maximumLength: count), as: UTF8.self), uid: pwd.pw_uid))
            case .failure(let e) where e.code == .resultTooLarge && size < maximumBufferSize:
                size *= 2
            case .failure(let e) where e.code == .noSuchFileOrDirectory || e.code == .noSuchProcess
                                        || e.code == .badDescriptor || e.code == .notPermitted:
                return .success(nil)
            case .failure(let e):
                return .failure(e)
            }
        }
    }
}
