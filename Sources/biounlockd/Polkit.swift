import BiounlockService
import BiounlockServiceProtocol
import BiounlockBus

/// polkit's CheckAuthorization over the bus, the subject being the caller's bus name (polkit
/// resolves it to the uid, pid and session itself, so nothing the caller says is trusted).
/// Anything but an explicit "authorised" is a refusal; polkit not answering is `unavailable`.
struct PolkitAuthority: Authority {
    let connection: BusConnection

    func check(action: String, caller: Caller) -> AuthorityAnswer {
        let subject = BusValue.tuple([.string("system-bus-name"), .vardict([("name", .string(caller.busName))])])
        let details = BusValue.dictionary(key: "s", value: "s", [])
        // AllowUserInteraction (1) only when the call allowed it: polkit's agent may then ask an
        // administrator, which can take minutes.
        let flags: UInt32 = caller.allowsInteraction ? 1 : 0
        let result = connection.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                     "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization",
                                     [subject, .string(action), details, .uint32(flags), .string("")],
                                     timeoutMilliseconds: caller.allowsInteraction ? 300_000 : 25_000)
        switch result {
        case .failure(let e):
            return .unavailable(e.description)
        case .success(let reply):
            guard case .tuple(let r)? = reply.first, r.count >= 2, let authorized = r[0].bool, let challenge = r[1].bool else {
                return .unavailable("polkit answered something else")
            }
            return authorized ? .authorized : .notAuthorized(challenge: challenge)
        }
    }
}
