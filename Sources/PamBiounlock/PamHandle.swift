import BiounlockCore
import BiounlockSystem
import CPAM

/// Bounded reads from the PAM handle and argv. Text that is not valid UTF-8 is refused
/// (a user name) or replaced (an item used only for messages and the audit log).
enum PamHandle {
    /// Longest string read from PAM or argv.
    static let maximumStringLength = 4096

    static func string(_ pointer: UnsafePointer<CChar>) -> String? {
        CString.text(pointer, maximumLength: maximumStringLength)
    }

    static func arguments(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?, logger: Logger) -> [String] {
        guard let argv, argc > 0 else { return [] }
        let count = Int(argc)
        if count > maximumArguments { logger.log(.warning, "more than \(maximumArguments) arguments; the rest are ignored") }
        var words: [String] = []
        for index in 0..<min(count, maximumArguments) {
            guard let word = argv[index] else { continue }
            if let text = string(word) {
                words.append(text)
            } else {
                logger.log(.warning, "argument \(index + 1) is too long or not UTF-8; ignored")
            }
        }
        return words
    }

    /// The user to authenticate. pam_get_user may prompt (login does); its errors pass through,
    /// never success.
    enum UserName {
        case name(String)
        /// pam_get_user failed: return this code (never PAM_SUCCESS).
        case failed(Int32)
    }

    static func user(_ pamh: OpaquePointer) -> UserName {
        var status: Int32 = PAM_SYSTEM_ERR
        guard let pointer = biounlock_pam_get_user(pamh, &status) else {
            if status == PAM_CONV_AGAIN { return .failed(PAM_INCOMPLETE) }
            return .failed(status == PAM_SUCCESS ? PAM_USER_UNKNOWN : status)
        }
        guard let name = string(pointer) else { return .failed(PAM_USER_UNKNOWN) }
        return .name(name)
    }

    /// A variable from the PAM environment, else the process environment (for the remote-session
    /// check only: a forged value can make biounlock skip the finger, never grant anything).
    static func environment(_ pamh: OpaquePointer, _ name: String) -> String? {
        if let value = pam_getenv(pamh, name).flatMap(string) { return value }
        guard let value = Environment.value(name, maximumLength: maximumStringLength), value.count <= maximumStringLength else { return nil }
        return CString.text(validating: value)
    }

    static func item(_ pamh: OpaquePointer, _ item: Int32) -> String? {
        guard let pointer = biounlock_pam_get_string_item(pamh, item) else { return nil }
        return String(decoding: CString.bytes(pointer, maximumLength: maximumStringLength), as: UTF8.self)
    }
}
