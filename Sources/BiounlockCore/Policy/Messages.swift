/// Every text a user sees from the module, in one place (the seed's LAError table, on Linux).
/// Each names the service, or says what happens next, so nobody approves something blind.
public enum Messages {
    public static func touchPrompt(service: String) -> String {
        "Touch the fingerprint reader to authenticate for \(service)"
    }

    public static func notRecognised(triesLeft: Int) -> String {
        triesLeft == 1 ? "Fingerprint not recognised. 1 try left." : "Fingerprint not recognised. \(triesLeft) tries left."
    }

    public static let tooManyWrongFingers = "Fingerprint not recognised."

    public static func retry(_ reason: RetryReason) -> String {
        switch reason {
        case .general: return "Try again: touch the reader once more."
        case .tooShort: return "Try again: the touch was too short."
        case .centerFinger: return "Try again: centre your finger on the reader."
        case .removeFinger: return "Try again: lift your finger and touch again."
        }
    }

    public static let readerUnavailable = "Fingerprint reader not available."
    public static let timedOut = "No touch in time."
    public static let nothingEnrolled = "No fingerprint enrolled."

    public static func passcodePrompt(service: String, kind: PasscodeKind) -> String {
        let noun = kind == .pin ? "PIN" : "passcode"
        return "biounlock \(noun) for \(service) (Enter alone for your password): "
    }

    public static let wrongPasscode = "Wrong passcode."
    public static let passcodeTooLong = "Passcode too long."
}
