/// Every text a user sees from the module, in one place (the seed's LAError table, on Linux).
/// Each names the service, or says what happens next, so nobody approves something blind.
public enum Messages {
    public static func touchPrompt(service: String) -> String {
        touchPrompt(template: Options().reason, service: service)
    }

    /// The `reason=` text with each `%s` replaced by the service.
    public static func touchPrompt(template: String, service: String) -> String {
        template.replacingAll("%s", with: service)
    }

    /// What the user falls back to: biounlock's passcode, or (policy=biometrics) the password.
    static func fallbackNoun(_ policy: Policy) -> String { policy == .biometrics ? "password" : "passcode" }

    public static func biometricsLocked(policy: Policy, timeLeft: Int64?) -> String {
        let after = timeLeft.map { "try again in \(describeTimeLeft($0)) or " } ?? ""
        return "Fingerprint locked after too many failed attempts: \(after)use your \(fallbackNoun(policy))."
    }

    public static func passcodeLocked(timeLeft: Int64) -> String {
        "Too many wrong passcodes: try again in \(describeTimeLeft(timeLeft))."
    }

    public static func passcodeRequired(_ reason: Reason, policy: Policy, options: Options) -> String {
        let noun = fallbackNoun(policy) == "password" ? "Password" : "Passcode"
        switch reason {
        case .passcodeRequiredFirstUse: return "\(noun) required: enter it once before using your finger."
        case .passcodeRequiredAfterEnrolment: return "\(noun) required: the enrolled fingers have changed."
        case .passcodeRequiredAfterIdle:
            let age = options.requirePasscode.maximumAgeSeconds.map(formatDuration) ?? "a while"
            return "\(noun) required: not entered for \(age)."
        default: return "\(noun) required after a restart."
        }
    }

    /// The one prompt of type-or-touch.
    public static func typeOrTouchPrompt(service: String, kind: PasscodeKind?) -> String {
        let noun: String
        switch kind {
        case .pin?: noun = "PIN"
        case .password?: noun = "passcode"
        case .pattern?: noun = "pattern"
        case nil: noun = "password"
        }
        return "Touch the reader or type your \(noun) for \(service): "
    }

    /// The same prompt once the reader is done.
    public static func typeOnlyPrompt(service: String, kind: PasscodeKind?) -> String {
        let noun = kind == .pin ? "PIN" : kind.map(\.rawValue) ?? "password"
        let fallback = kind == nil ? "" : " (Enter alone for your password)"
        return "Type your \(noun) for \(service)\(fallback): "
    }

    public static let skippedRemote = "Fingerprint skipped: remote session."
    public static let skippedLid = "Fingerprint skipped: the lid is closed."

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
        let noun: String
        switch kind {
        case .pin: noun = "PIN"
        case .password: noun = "passcode"
        case .pattern: noun = "pattern (digits 1-9)"
        }
        return "biounlock \(noun) for \(service) (Enter alone for your password): "
    }

    public static let wrongPasscode = "Wrong passcode."
    public static let passcodeTooLong = "Passcode too long."
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation in this library).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
