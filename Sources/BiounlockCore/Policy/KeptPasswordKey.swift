import BiounlockSystem

/// The name of the kernel key that holds a user's Unix password for the boot (issue 32;
/// PamBiounlock.KeptPassword keeps and hands it on), and its removal, shared by the module and
/// the CLI (`disable`, `passcode clear`, `unenrol`, `forget`, `forget-password` drop it).
public enum KeptPasswordKey {
    /// By uid, not name: a name may be given to another account later.
    public static func name(uid: UInt32) -> String { "biounlock:password:\(uid)" }

    /// Drops the key of `user` (an account name) if there is one; nothing without root or for a
    /// name that is no account. Whether a key was dropped.
    @discardableResult
    public static func drop(user: String) -> Bool {
        guard KernelKeys.callerIsRoot, let account = PasswordDatabase.entry(named: user) else { return false }
        return KernelKeys.drop(name(uid: account.uid))
    }
}
