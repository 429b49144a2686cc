import BiounlockSystem

/// Under policy=biometrics -- and whenever a user falls back from biounlock to the Unix
/// password -- biounlock never sees the password, yet a correct password must count as "the
/// passcode was entered": it lifts the biometric lockout and satisfies the passcode-required
/// rules (that is how the first login after boot works with a finger-only policy).
///
/// The module learns it in pam_sm_setcred, which libpam callers invoke only after the whole
/// auth stack succeeded: pam_sm_authenticate leaves a note when it handed the user on to the
/// password, and pam_sm_setcred records the success if the note names the same user. Callers
/// that never call pam_setcred (polkit's agent helper) are witnessed in pam_sm_acct_mgmt, from
/// pam_unix's own verdict on the handle (PamBiounlock/Entry.swift says why that proves it).
///
/// Not when the module runs as the user (screen lockers, through biounlock-check): setcred there
/// cannot write the root-only store, and the module leaves no note. It does not ask the checker
/// to record the success either -- the checker cannot tell a real "the stack accepted the
/// password" from one any process of the user's could send, and believing it would let that
/// process reset the passcode lockout and guess the PIN without end. The checker checks the
/// text it handed on against the shadow entry itself instead (CheckerService.witnessUnixPassword).
public enum PasswordWitness {
    /// Whether the stack goes on to the password after this decision: biounlock handed the user
    /// on, or stepped aside for a service it is turned off for while it is on for another
    /// (Reason.disabledForService). Not after a success, for a user who has not enabled
    /// biometric unlock anywhere (nothing of theirs is written), a remote session, an unknown
    /// name, a store or account database that could not be read, or a failed conversation.
    public static func handsOnToPassword(_ decision: Decision) -> Bool {
        switch decision.outcome {
        case .unavailable, .maxTries: return decision.reason != .storeUnavailable && decision.reason != .accountsUnavailable
        case .ignore: return decision.reason == .disabledForService
        case .success, .userUnknown, .conversationFailed: return false
        }
    }

    /// Records the password success. Never throws into the host: failures are logged.
    public static func recordPasswordSuccess(user: String, store: AuthStore, logger: Logger, clock: Clock = SystemClock(),
                                             bootID: String? = SessionProbe.currentBootID) {
        do {
            try store.recordSuccess(user: user, method: .password, at: clock.now(), bootID: bootID ?? "")
            logger.log(.info, "user=\(sanitizedForLog(user)) password accepted by the stack: counters cleared, passcode rules satisfied")
        } catch {
            logger.log(.error, "cannot record the password success of \(sanitizedForLog(user)): \(error)")
        }
    }
}
