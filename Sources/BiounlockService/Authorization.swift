import BiounlockServiceProtocol

/// What polkit said about an action for a caller.
public enum AuthorityAnswer: Equatable, Sendable {
    case authorized
    /// Not authorised (`challenge`: it would be with an authentication the caller did not allow
    /// to be asked for: the call lacked ALLOW_INTERACTIVE_AUTHORIZATION).
    case notAuthorized(challenge: Bool)
    /// polkit could not be asked: refused (never "authorised by default").
    case unavailable(String)
}

/// polkit's CheckAuthorization for the caller's bus name (the subject polkit resolves to the
/// caller's uid, pid and session itself). biounlockd implements it over the bus; tests and the
/// fuzzer answer themselves.
public protocol Authority: Sendable {
    func check(action: String, caller: Caller) -> AuthorityAnswer
}

/// The rules of re-authentication, as numbers (docs/SECURITY.md, "biounlockd").
public struct ReauthRules: Equatable, Sendable {
    /// How long a successful Authenticate lets the same connection change things.
    public var grantMilliseconds: Int64 = Int64(ManagerAPI.grantSeconds) * 1000
    /// Consecutive failures of one uid that are not slowed down beyond PAM's own delay.
    public var freeFailures = 3
    /// The wait after each further consecutive failure (then the last, again and again).
    public var waitsMilliseconds: [Int64] = [10_000, 30_000, 60_000, 300_000]
    /// A uid's failures are forgotten this long after the last one (the service stays up
    /// while it remembers any: leaving would forget them).
    public var memoryMilliseconds: Int64 = 15 * 60 * 1000

    public init() {}

    /// How long a uid with `failures` consecutive failures must wait after the last one.
    public func wait(afterFailures failures: Int) -> Int64 {
        guard failures >= freeFailures, !waitsMilliseconds.isEmpty else { return 0 }
        return waitsMilliseconds[min(failures - freeFailures, waitsMilliseconds.count - 1)]
    }
}

/// How many calls may be in flight (the service answers Busy beyond them, at once): a flood of
/// calls from one user costs that user, not the others.
public struct CallLimits: Equatable, Sendable {
    public var perConnection = 4
    public var perUser = 8
    public var total = 32
    public init() {}
}
