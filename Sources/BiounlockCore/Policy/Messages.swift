/// Every text a user sees from the module, in one place (LocalAuthentication's LAError table on
/// Linux: docs/DESIGN.md, "Messages").
/// Each names the service, or says what still works, so nobody approves something blind and
/// nobody takes a lockout for a wrong password.
///
/// Prompts start with what they take ("PIN or password for sudo…"), so that callers which put
/// the user's name in front of every prompt (vlock: "alice's ") read naturally.
public enum Messages {
    /// What biounlock's prompt takes now: the passcode of this kind (which the user may still
    /// use) or the Unix password, or only the password (no passcode, or it is locked, or
    /// policy=biometrics). Typed text that is not the passcode goes on to the password module.
    public enum Takes: Equatable, Sendable {
        case passcodeOrPassword(PasscodeKind)
        case password

        /// "PIN or password", "Password".
        var phrase: String {
            switch self {
            case .passcodeOrPassword(let kind): return "\(noun(kind)) or password"
            case .password: return "Password"
            }
        }
    }

    /// "PIN", "Passcode", "Pattern": the kind as the first word of a sentence.
    static func noun(_ kind: PasscodeKind) -> String {
        switch kind {
        case .pin: return "PIN"
        case .password: return "Passcode"
        case .pattern: return "Pattern"
        }
    }

    /// The same in the middle of a sentence ("use your PIN").
    static func lowerNoun(_ kind: PasscodeKind) -> String {
        kind == .pin ? "PIN" : kind.rawValue
    }

    public static func touchPrompt(service: String) -> String {
        touchPrompt(template: Options().reason, service: service)
    }

    /// The `reason=` text with each `%s` replaced by the service (TEXT_INFO, callers without a
    /// terminal).
    public static func touchPrompt(template: String, service: String) -> String {
        template.replacingAll("%s", with: service)
    }

    // MARK: prompts

    /// Type or touch, on a terminal, while the reader waits.
    public static func typeOrTouchPrompt(service: String, takes: Takes) -> String {
        "\(takes.phrase) for \(service), or touch the reader: "
    }

    /// The prompt once the reader is done (or when the finger cannot be used): it takes only text.
    public static func typePrompt(service: String, takes: Takes) -> String {
        "\(takes.phrase) for \(service): "
    }

    /// Callers without a terminal, while the reader still waits behind the prompt.
    public static func dialogPrompt(service: String, takes: Takes) -> String {
        "\(takes.phrase) for \(service), or Enter to use the reader: "
    }

    // MARK: lockouts: what failed, how long, and what still works

    public static func passcodeLocked(_ kind: PasscodeKind, timeLeft: Int64, fingerUsable: Bool) -> String {
        let rest = fingerUsable ? "use your finger or your password" : "use your password"
        return "\(noun(kind)) locked for \(describeTimeLeft(timeLeft)): \(rest)."
    }

    /// - Parameter passcode: the passcode the user may still use, if any.
    public static func biometricsLocked(policy: Policy, timeLeft: Int64?, passcode: PasscodeKind?) -> String {
        if policy == .biometrics {
            let wait = timeLeft.map { " for \(describeTimeLeft($0))" } ?? ""
            return "Fingerprint locked\(wait) after too many failed attempts: use your password."
        }
        let rest = passcode.map { "use your \(lowerNoun($0)) or your password" } ?? "use your password"
        return "Fingerprint locked after too many failed attempts: \(rest)."
    }

    /// Under policy=biometrics the password satisfies the rule (seen in pam_sm_setcred).
    public static func passcodeRequired(_ reason: Reason, policy: Policy, kind: PasscodeKind?, options: Options) -> String {
        let what = policy == .biometrics ? "Password" : kind.map(noun) ?? "Passcode"
        switch reason {
        case .passcodeRequiredFirstUse: return "\(what) required: enter it once before using your finger."
        case .passcodeRequiredAfterEnrolment: return "\(what) required: the enrolled fingers have changed."
        case .passcodeRequiredAfterIdle:
            let age = options.requirePasscode.maximumAgeSeconds.map(formatDuration) ?? "a while"
            return "\(what) required: not entered for \(age)."
        default: return "\(what) required after a restart."
        }
    }

    // MARK: the finger

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
