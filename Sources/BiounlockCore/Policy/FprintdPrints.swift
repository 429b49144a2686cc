/// sensor=fprintd: the prints are fprintd's, and GNOME Settings, KDE or `fprintd-enroll` add and
/// delete them without biounlock. So that `require_passcode=enrolment` sees those changes as it
/// sees `biounlock enrol`'s (docs/DESIGN.md, "The chain", step 7), the store keeps
/// the set of prints biounlock last saw for the user (users.fprintd_prints, schema 5), as text:
/// one "DEVICE:FINGER" entry per print (fprintd's device as the object path's last element,
/// the finger as fprintd names it), sorted, comma-separated; "" when the user had none.
///
/// Security choice: a set that differs from the stored one is a change of the enrolled set (the
/// enrolment version is bumped, so the passcode is required before the finger is used again).
/// So is a user for whom no set was ever recorded (NULL: a store from before schema 5, a user
/// enabled under another backend or straight through the store) or whose text does not parse:
/// when in doubt, the passcode, once. fprintd names prints by finger only, so a print deleted
/// and enrolled again under the same finger between two looks is not seen (the polkit action
/// that lets a user enrol, net.reactivated.fprint.device.enroll, asks them to authenticate).
public enum FprintdPrints {
    /// The stored text for `templates` (fprintd's, of any devices).
    public static func text(_ templates: [Template]) -> String {
        canonical(templates.map { entry(device: $0.device, finger: $0.finger) })
    }

    /// What to store after the module saw `templates` on the one device it claimed (every
    /// template names that device), or nil when the stored text says that already. What the
    /// store says of the user's other devices is kept: the module only sees the one it claimed.
    public static func afterSeeing(_ templates: [Template], stored: String?) -> String? {
        guard let device = templates.first?.device else { return nil }
        let seen = templates.map { entry(device: $0.device, finger: $0.finger) }
        guard let old = stored.flatMap(entries) else { return canonical(seen) }
        let updated = canonical(old.filter { !$0.hasPrefix(device + ":") } + seen)
        return updated == canonical(old) ? nil : updated
    }

    /// What to store after the CLI listed `templates` on every device, or nil when the stored
    /// text says that already.
    public static func afterListing(_ templates: [Template], stored: String?) -> String? {
        let listed = text(templates)
        guard let old = stored.flatMap(entries) else { return listed }
        return listed == canonical(old) ? nil : listed
    }

    static func entry(device: String, finger: Finger) -> String { device + ":" + finger.name }

    static func canonical(_ entries: [String]) -> String {
        var unique: [String] = []
        for e in entries.sorted() where unique.last != e { unique.append(e) }
        return unique.joined(separator: ",")
    }

    /// The entries of a stored text, or nil when it is not one this type wrote.
    static func entries(_ text: String) -> [String]? {
        if text.isEmpty { return [] }
        var out: [String] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let colon = part.firstIndex(of: ":"), colon != part.startIndex,
                  Finger(name: String(part[part.index(after: colon)...])) != nil else { return nil }
            out.append(String(part))
        }
        return out
    }
}
