import BiounlockSystem

/// A system account, as NSS knows it.
public struct Account: Equatable, Sendable {
    public let name: String
    public let uid: UInt32
    public init(name: String, uid: UInt32) { self.name = name; self.uid = uid }
}

public enum Accounts {
    /// Longest user name we look up; longer names match nothing.
    public static let maximumNameLength = 256

    /// Looks `name` up with getpwnam_r. Names that are empty, too long, not valid UTF-8 or
    /// contain control characters, '/' or ':' match nothing and are never passed to NSS.
    /// The returned name is the one NSS reports, and only that name is used to find rows
    /// in the store (so "Alice", "alice " or "../alice" never reach alice's row).
    public static func lookup(_ name: String) -> Account? {
        (try? find(name).get()) ?? nil
    }

    /// As `lookup(_:)`, telling "no such account" (nil) from a lookup NSS could not make (the
    /// module answers the first as an unknown user, the second as unavailable).
    public static func find(_ name: String) -> Result<Account?, Errno> {
        guard isPlausibleName(name) else { return .success(nil) }
        return PasswordDatabase.find(named: name).map { entry in
            // Byte for byte: Swift's `==` is canonical equivalence ("é" == "e\u{301}"), and two
            // such names are two accounts (docs/SECURITY.md, finding 28.2).
            guard let entry, entry.name.utf8.elementsEqual(name.utf8) else { return nil }
            return Account(name: entry.name, uid: entry.uid)
        }
    }

    /// The account of `uid` (getpwuid_r), if its name is one `lookup(_:)` finds again with the
    /// same uid: biounlock-check authenticates exactly that name.
    public static func lookup(uid: UInt32) -> Account? {
        guard let entry = PasswordDatabase.entry(uid: uid), entry.uid == uid,
              let again = lookup(entry.name), again.uid == uid else { return nil }
        return again
    }

    public static func isPlausibleName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maximumNameLength else { return false }
        return bytes.allSatisfy { $0 > 0x20 && $0 != 0x7f && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") }
    }
}
