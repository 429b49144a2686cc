import BiounlockCore
import CUnixPassword

/// The checker's own check of the Unix password (CheckerService.checkUnixPassword): the shadow
/// entry of the caller, crypt_r, a constant-time comparison, all in C (CUnixPassword), which
/// wipes its copies. true: the password; false: not it; nil: cannot tell (no shadow entry, a
/// locked or empty hash, an error). Only this executable links libcrypt.
enum UnixPassword {
    static func matches(user: String, typed: Secret) -> Bool? {
        let result = typed.withBytes { bytes -> Int32 in
            guard let base = bytes.baseAddress else { return -1 }
            return biounlock_unix_password_matches(user, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        switch result {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }
}
