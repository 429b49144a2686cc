/// The services the settings app switches together (issue 31: "per service (sudo, login and
/// lock screen, everything else)"), made from ServiceWords' one table of known services, so that
/// a service added there joins its group by itself:
/// - `sudo`: every service that runs a command as root -- sudo, sudo-i, su, su-l, doas, run0,
///   pkexec. su is in: it is the same act (a root shell), and a user who turns biometric unlock
///   off "for sudo" would not expect `su -` to still take the finger.
/// - `login`: every service that logs in or unlocks the screen -- login, the greeters (gdm-*,
///   lightdm, sddm, ...), the lockers (i3lock, swaylock, xscreensaver, kde, ...). sshd, remote and
///   cockpit are log-ins too and are in it; remote sessions stay governed by the `remote` option
///   whatever the switch says.
/// "Everything else" is no group: it is the user's toggle (`enabled`), which every service
/// without an override of its own follows.
///
/// A group is stored as one override per service (the module reads nothing else), written in one
/// store transaction with one audit row naming the group (biounlockd's Enable/Disable "@login").
public enum ServiceGroup: String, CaseIterable, Sendable {
    case sudo
    case login

    /// What the services of the group are for, in ServiceWords' terms.
    public var purposes: [ServiceWords.Purpose] {
        switch self {
        case .sudo: return [.runAsRoot]
        case .login: return [.logIn, .unlockScreen]
        }
    }

    /// The group's PAM services, in the table's order.
    public var services: [String] {
        var out: [String] = []
        for entry in ServiceWords.known where purposes.contains(entry.purpose) { out += entry.services }
        return out
    }

    /// The group `service` belongs to, if any.
    public static func group(of service: String) -> ServiceGroup? {
        guard let purpose = ServiceWords.purpose(of: service) else { return nil }
        return allCases.first { $0.purposes.contains(purpose) }
    }

    /// How a group stands for a user: every service on, every one off, or some of each.
    public enum State: String, Sendable {
        case on, off, mixed
    }

    /// The group's state for a user whose toggle is `enabled` with `overrides` on top (as
    /// UserRecord.isEnabled(for:), and as biounlockd's status gives them: `enabled`, `services`).
    public func state(enabled: Bool, overrides: [String: Bool]) -> State {
        var on = 0, off = 0
        for service in services {
            if overrides[service] ?? enabled { on += 1 } else { off += 1 }
        }
        return off == 0 ? .on : on == 0 ? .off : .mixed
    }

    public func state(of record: UserRecord) -> State {
        state(enabled: record.enabled, overrides: record.serviceOverrides)
    }
}
