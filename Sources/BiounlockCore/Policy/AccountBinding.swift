/// Whether a user's row in the store belongs to the account that has the name now.
///
/// Security choice: rows are keyed by name, and a name outlives its account: after `userdel
/// alice`, `useradd alice` makes another account (another uid) with the same name. Each row
/// therefore carries the uid it was made for (schema 3), and a row whose uid is not the name's
/// uid now is treated as if biometric unlock were off: nothing asked, nothing counted, PAM_IGNORE,
/// and a syslog warning. Whoever knew the old account's PIN, or has its finger, gains nothing.
/// `biounlock status`, `list` and `doctor` show such rows with the command that clears them
/// (`biounlock forget USER`); `enrol`, `passcode set` and `enable` refuse to add to them.
public enum AccountBinding: Equatable, Sendable {
    /// The row belongs to the account that has the name now.
    case bound
    /// The row belongs to another account (`recordUID`, nil when bound to none) than the one that
    /// has the name now (`accountUID`).
    case otherAccount(recordUID: UInt32?, accountUID: UInt32)
    /// No account has the name now; the row belonged to `recordUID` (nil: to none).
    case noAccount(recordUID: UInt32?)

    public static func of(_ record: UserRecord, account: Account?) -> AccountBinding {
        guard let account else { return .noAccount(recordUID: record.uid) }
        return record.uid == account.uid ? .bound : .otherAccount(recordUID: record.uid, accountUID: account.uid)
    }

    public var isBound: Bool { self == .bound }

    /// What is wrong, in one sentence without the fix ("" when bound).
    public func problem(user: String) -> String {
        let owner: (UInt32?) -> String = { $0.map { "uid \($0)" } ?? "no account" }
        switch self {
        case .bound:
            return ""
        case .otherAccount(let recordUID, let accountUID):
            return "the biounlock record of \(user) belongs to \(owner(recordUID)), but \(user) is uid \(accountUID) now (the name was given to another account?): biometric unlock is off for \(user)"
        case .noAccount(let recordUID):
            return "the biounlock record of \(user) belongs to \(owner(recordUID)), and no account is named \(user) now"
        }
    }

    /// The command that clears the row (with the admin's global options in front).
    public static func fix(user: String, globals: [String] = []) -> String {
        (["biounlock"] + globals + ["forget", user]).joined(separator: " ")
    }
}
