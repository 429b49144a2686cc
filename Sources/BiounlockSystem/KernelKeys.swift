import CSystem
import Glibc

/// The kernel's keyring, for one thing: the Unix password kept for the boot at login services
/// (issue 32; docs/SECURITY.md, "The password kept for the boot"). Keys of type "user" in
/// root's user keyring (the keyring of the real uid 0 in this user namespace: gone at reboot,
/// never on disk), each with a timeout. Callers must run with real and effective uid 0
/// (`KernelKeys.callerIsRoot`): for a process with another real uid, "the user keyring" is that
/// user's.
///
/// Permissions, decided here and nowhere else (the kernel applies them to root too):
/// possessor none, user (the key's owner, uid 0) view+read+write+search+link+setattr, group and
/// other none -- 0x003f0000. Possession grants nothing, so a user whose session keyring was
/// inherited from a root process (and so may reach root's user keyring) still cannot find or
/// read the key; only a process whose fsuid is 0 can. The key is created in this process's
/// keyring, given these permissions and its timeout, and only then linked into the user
/// keyring and unlinked from the process keyring: it is never reachable with the default
/// permissions (possessor all) from anywhere but this process.
public enum KernelKeys {
    static let processKeyring: Int32 = -2   // KEY_SPEC_PROCESS_KEYRING
    static let userKeyring: Int32 = -4      // KEY_SPEC_USER_KEYRING
    static let revoke: Int32 = 3, setperm: Int32 = 5, link: Int32 = 8, unlink: Int32 = 9, search: Int32 = 10
    static let read: Int32 = 11, setTimeout: Int32 = 15, invalidate: Int32 = 21
    /// possessor none; owner (uid 0) all; group none; other none.
    public static let permissions: UInt32 = 0x003f_0000
    /// Longest payload read back (a "user" key holds at most 32767 bytes; the caller's own cap is lower).
    public static let maximumPayload = 4096

    /// Whether this process may use the keys: real and effective uid 0.
    public static var callerIsRoot: Bool { getuid() == 0 && geteuid() == 0 }

    private static func keyctl(_ operation: Int32, _ a2: UInt, _ a3: UInt = 0, _ a4: UInt = 0, _ a5: UInt = 0) -> Result<Int, Errno> {
        system(.keyctl, as: "keyctl(\(operation))", failed: { $0 == -1 }) { _ in biounlock_keyctl(operation, a2, a3, a4, a5) }
    }

    private static func serial(_ value: Int32) -> UInt { UInt(bitPattern: Int(value)) }

    /// The serial of the key `description` in root's user keyring, or nil (none, or an error).
    public static func find(_ description: String) -> Int32? {
        let found = description.withCString { d in
            "user".withCString { t in
                keyctl(search, serial(userKeyring), UInt(bitPattern: t), UInt(bitPattern: d), 0)
            }
        }
        guard case .success(let id) = found, let key = Int32(exactly: id) else { return nil }
        return key
    }

    /// Keeps `length` bytes at `payload` as `description` for `seconds` (at least 1), replacing
    /// an earlier key of that name (which is invalidated first, so that its copy goes now, not at
    /// its own timeout).
    public static func keep(_ description: String, payload: UnsafeRawBufferPointer, seconds: UInt32) -> Result<Void, Errno> {
        guard payload.count > 0, payload.count <= maximumPayload else { return .failure(Errno(.invalidArgument, call: "add_key")) }
        let added = description.withCString { d in
            "user".withCString { t in
                system(.addKey, failed: { $0 == -1 }) { _ in biounlock_add_key(t, d, payload.baseAddress, payload.count, processKeyring) }
            }
        }
        guard case .success(let id) = added, let key = Int32(exactly: id) else {
            if case .failure(let e) = added { return .failure(e) }
            return .failure(Errno(.invalidArgument, call: "add_key"))
        }
        // Any failure from here on: the new key goes (it is only in this process's keyring).
        func abandon(_ e: Errno) -> Result<Void, Errno> {
            _ = keyctl(invalidate, serial(key))
            _ = keyctl(unlink, serial(key), serial(processKeyring))
            return .failure(e)
        }
        if case .failure(let e) = keyctl(setperm, serial(key), UInt(permissions)) { return abandon(e) }
        if case .failure(let e) = keyctl(setTimeout, serial(key), UInt(max(1, seconds))) { return abandon(e) }
        if let earlier = find(description), earlier != key { _ = keyctl(invalidate, serial(earlier)) }
        if case .failure(let e) = keyctl(link, serial(key), serial(userKeyring)) { return abandon(e) }
        _ = keyctl(unlink, serial(key), serial(processKeyring))
        return .success(())
    }

    /// Calls `body` with the payload of `description` (nil: no such key, or it cannot be read);
    /// the copy is wiped when `body` returns. The pointer must not escape.
    public static func withPayload<R>(_ description: String, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard let key = find(description) else { return body(nil) }
        var buffer = [UInt8](repeating: 0, count: maximumPayload)
        defer { buffer.withUnsafeMutableBytes { if let b = $0.baseAddress { explicit_bzero(b, $0.count) } } }
        let got = buffer.withUnsafeMutableBytes { raw in
            keyctl(read, serial(key), UInt(bitPattern: raw.baseAddress), UInt(raw.count))
        }
        guard case .success(let length) = got, length > 0, length <= maximumPayload else { return body(nil) }
        return buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }

    /// Drops `description` at once (invalidated: the kernel unlinks it everywhere and frees it).
    /// Whether there was one.
    @discardableResult
    public static func drop(_ description: String) -> Bool {
        guard let key = find(description) else { return false }
        if case .failure = keyctl(invalidate, serial(key)) {
            _ = keyctl(revoke, serial(key))
            _ = keyctl(unlink, serial(key), serial(userKeyring))
        }
        return true
    }
}
