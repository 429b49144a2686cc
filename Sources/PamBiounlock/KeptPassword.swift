import CPAM
import CUnixPassword
import BiounlockCore
import BiounlockSystem

/// The Unix password kept for the boot at the login services, and given back to the keyring
/// (issue 32; docs/DESIGN.md and docs/SECURITY.md, "The password kept for the boot").
///
/// - Kept: by the `keep_password` line after the login service's password module, when
///   biounlock handed this user on to the password in this transaction (its note names the
///   user, as for PasswordWitness) and PAM_AUTHTOK is the account's password, checked against
///   the shadow hash here (libcrypt, as root) -- not trusted from the order of the stack. It goes
///   into a root-only kernel key (BiounlockSystem.KernelKeys) for require_passcode's age (48 h
///   without one), replacing the one before: each password login renews it.
/// - Released: only at a login service, only right after biounlock's own success in this
///   transaction (the finger, the PIN), only when no module set PAM_AUTHTOK before, and only if
///   it is still the account's password: then it becomes PAM_AUTHTOK, which pam_gnome_keyring
///   and pam_kwallet5 further down read. A password that no longer matches is dropped.
/// - Never: as a user other than root (a locker through biounlock-check), for any other
///   service (sudo, su, polkit, lockers), in a log line (lengths and texts never logged).
/// Every copy made here is wiped (Secret; KernelKeys wipes its read buffer; the C check wipes its own).
enum KeptPassword {
    static func keyName(uid: UInt32) -> String { KeptPasswordKey.name(uid: uid) }
    /// At most this long without a require_passcode age (the issue's idle window).
    static let defaultLifetime = 48 * 3600

    static func isLoginService(_ service: String, _ options: Options) -> Bool {
        options.loginServices.contains { $0.utf8.elementsEqual(service.utf8) }
    }

    /// The length of the NUL-terminated text at `pointer`, or nil when longer than Secret allows.
    static func boundedLength(_ pointer: UnsafePointer<CChar>) -> Int? {
        var n = 0
        while pointer[n] != 0 {
            n += 1
            if n > Secret.maximumLength { return nil }
        }
        return n
    }

    /// 1: `bytes` are `user`'s Unix password; 0: they are not; -1: cannot tell.
    static func matches(_ user: String, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress else { return -1 }
        return biounlock_unix_password_matches(user, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// The `keep_password` line. Always PAM_IGNORE: this line decides nothing.
    static func keepLine(_ pamh: OpaquePointer, arguments: [String], logger: SyslogLogger) -> Int32 {
        guard let pending = biounlock_pam_get_pending_user(pamh).flatMap(PamHandle.string),
              case .name(let user) = PamHandle.user(pamh), user.utf8.elementsEqual(pending.utf8),
              KernelKeys.callerIsRoot,
              case .success(let loaded) = Configuration.load(arguments: arguments) else { return PAM_IGNORE }
        let options = loaded.options
        guard let service = PamHandle.item(pamh, PAM_SERVICE), isLoginService(service, options),
              let account = PasswordDatabase.entry(named: user),
              let token = biounlock_pam_get_string_item(pamh, PAM_AUTHTOK), let length = boundedLength(token), length > 0,
              let secret = Secret(copying: token, count: length) else { return PAM_IGNORE }
        let verdict = secret.withBytes { matches(user, $0) }
        guard verdict == 1 else {
            logger.log(.info, "user=\(sanitizedForLog(user)) service=\(sanitizedForLog(service)) password not kept: \(verdict == 0 ? "not the account's password" : "cannot check it against the shadow entry")")
            return PAM_IGNORE
        }
        let seconds = UInt32(clamping: options.requirePasscode.maximumAgeSeconds ?? defaultLifetime)
        switch secret.withBytes({ KernelKeys.keep(keyName(uid: account.uid), payload: $0, seconds: seconds) }) {
        case .success:
            logger.log(.info, "user=\(sanitizedForLog(user)) service=\(sanitizedForLog(service)) password kept for the boot (kernel key, \(formatDuration(Int(seconds))))")
        case .failure(let error):
            logger.log(.warning, "user=\(sanitizedForLog(user)) cannot keep the password in the kernel keyring: \(error)")
        }
        return PAM_IGNORE
    }

    /// After biounlock's own success at a login service: the kept password as PAM_AUTHTOK.
    static func release(_ pamh: OpaquePointer, user: String, service: String, options: Options, logger: SyslogLogger) {
        guard isLoginService(service, options), KernelKeys.callerIsRoot,
              biounlock_pam_get_string_item(pamh, PAM_AUTHTOK) == nil,
              let account = PasswordDatabase.entry(named: user) else { return }
        let name = keyName(uid: account.uid)
        guard let secret = KernelKeys.withPayload(name, { payload in payload.flatMap { Secret(copying: $0.baseAddress, count: $0.count) } }) else { return }
        switch secret.withBytes({ matches(user, $0) }) {
        case 1:
            if secret.withCChars({ chars, _ in pam_set_item(pamh, PAM_AUTHTOK, chars) }) == PAM_SUCCESS {
                logger.log(.info, "user=\(sanitizedForLog(user)) service=\(sanitizedForLog(service)) the password kept for the boot handed on (PAM_AUTHTOK) for the keyring")
            }
        case 0:
            KernelKeys.drop(name)
            logger.log(.notice, "user=\(sanitizedForLog(user)) the password kept for the boot is no longer the account's: dropped")
        default:
            logger.log(.warning, "user=\(sanitizedForLog(user)) cannot check the kept password against the shadow entry: not handed on")
        }
    }
}
