/// Why the chain decided as it did. Raw values go into the audit log and syslog.
/// (An Error too, so that a step can return Result<_, Reason>: why it could not go on.)
public enum Reason: String, Sendable, Error {
    case matched = "finger-matched"
    case faceMatched = "face-matched"
    case passcodeAccepted = "passcode-accepted"
    case notEnabled = "not-enabled"
    /// Not enabled for this service, enabled for another: PAM_IGNORE, and the password that
    /// follows is witnessed (PasswordWitness).
    case disabledForService = "disabled-for-service"
    /// The store's row for the name belongs to another account (AccountBinding): as not enabled.
    case recordOfAnotherAccount = "record-of-another-account"
    case unknownUser = "unknown-user"
    /// NSS could not say whether the name has an account (getpwnam_r failed: a directory
    /// service down, no descriptor or memory left): unavailable, and logged.
    case accountsUnavailable = "accounts-unavailable"
    case storeUnavailable = "store-unavailable"
    case nothingEnrolled = "nothing-enrolled"
    case readerUnavailable = "reader-unavailable"
    case timedOut = "timed-out"
    case wrongFinger = "wrong-finger"
    case noPasscode = "no-passcode"
    case passcodeDeclined = "passcode-declined"
    case wrongPasscode = "wrong-passcode"
    case passcodeTooLong = "passcode-too-long"
    case passcodeUnusable = "passcode-unusable"
    /// The process's resource limits leave no room to verify the passcode (Passcode.limitsAllow):
    /// not checked, not counted, handed on.
    case resourceLimit = "resource-limit"
    case conversationFailed = "conversation-failed"
    case biometricsLocked = "biometrics-locked"
    case passcodeLocked = "passcode-locked"
    case passcodeRequiredFirstUse = "passcode-required-first-use"
    case passcodeRequiredAfterBoot = "passcode-required-boot"
    case passcodeRequiredAfterEnrolment = "passcode-required-enrolment"
    case passcodeRequiredAfterIdle = "passcode-required-idle"
    /// At a login service (login_services), the first login of a boot: the Unix password, which
    /// biounlock never checks itself -- it steps aside and the stack's password module asks.
    case passwordRequiredAfterBoot = "password-required-boot"
    case remoteSession = "remote-session"
    case lidClosed = "lid-closed"
    /// A password stack with a fingerprint stack of its own beside it (`password_services`:
    /// GDM's gdm-password, KDE's kde): the reader is left to that stack.
    case readerInFingerprintStack = "reader-in-fingerprint-stack"
    case cancelled = "cancelled"
    case passwordHandedOver = "password-handed-over"
    case typingTimedOut = "typing-timed-out"
    /// The module runs as the user and biounlock-check could not decide for it (missing, not
    /// setuid root, in a directory others can write, failed, busy, or it broke the protocol).
    case checkerUnavailable = "checker-unavailable"
    /// biounlock-check was asked about a user other than the one who ran it.
    case otherUserRefused = "other-user-refused"
}

/// The chain's answer, one case per row of the return-code table (docs/DESIGN.md).
/// The module maps each case to exactly one PAM code in one exhaustive switch.
public enum Outcome: Equatable, Sendable {
    /// Finger matched or passcode correct: PAM_SUCCESS.
    case success(AuthMethod)
    /// biounlock stays out of it -- the user has not enabled biometric unlock (for this
    /// service), or a remote session under remote=ignore: PAM_IGNORE, nothing asked or counted.
    case ignore
    /// Nothing biounlock can decide; the stack moves on to the password (with the typed text as
    /// PAM_AUTHTOK when there was some): PAM_AUTHINFO_UNAVAIL.
    case unavailable
    /// Wrong finger `max_tries` times with no passcode fallback: PAM_MAXTRIES.
    case maxTries
    /// Not a user of this system: PAM_USER_UNKNOWN.
    case userUnknown
    /// The conversation failed, gave no answer, or the user pressed Ctrl-C: PAM_CONV_ERR.
    case conversationFailed

    public var label: String {
        switch self {
        case .success: return "success"
        case .ignore: return "ignore"
        case .unavailable: return "unavailable"
        case .maxTries: return "maxtries"
        case .userUnknown: return "user-unknown"
        case .conversationFailed: return "conversation-error"
        }
    }
}

/// The PAM return codes the module gives, with Linux-PAM's values (security/_pam_types.h) and
/// names. The one table from the chain's outcome to a code: the module returns `rawValue`,
/// `biounlock verify` prints `name`, and a decision biounlock-check made for a caller without
/// root goes through it too. (Core does not link libpam; PamBiounlockTests checks every value
/// against libpam's header.)
public enum PamReturn: Int32, CaseIterable, Sendable {
    case success = 0
    case authinfoUnavailable = 9
    case userUnknown = 10
    case maxTries = 11
    case conversationError = 19
    case ignore = 25

    public init(_ outcome: Outcome) {
        switch outcome {
        case .success: self = .success
        case .ignore: self = .ignore
        case .unavailable: self = .authinfoUnavailable
        case .maxTries: self = .maxTries
        case .userUnknown: self = .userUnknown
        case .conversationFailed: self = .conversationError
        }
    }

    /// The code's name in Linux-PAM's headers, as admins read it in docs and logs.
    public var name: String {
        switch self {
        case .success: return "PAM_SUCCESS"
        case .authinfoUnavailable: return "PAM_AUTHINFO_UNAVAIL"
        case .userUnknown: return "PAM_USER_UNKNOWN"
        case .maxTries: return "PAM_MAXTRIES"
        case .conversationError: return "PAM_CONV_ERR"
        case .ignore: return "PAM_IGNORE"
        }
    }
}

public struct Decision: Equatable, Sendable {
    public let outcome: Outcome
    public let reason: Reason
    public let method: AuthMethod

    public init(_ outcome: Outcome, _ reason: Reason, method: AuthMethod = .none) {
        self.outcome = outcome; self.reason = reason; self.method = method
    }
}
