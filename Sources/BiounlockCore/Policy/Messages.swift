/// Every text a user sees from the module, in one place (LocalAuthentication's LAError table on
/// Linux: docs/DESIGN.md, "Messages").
/// Each names the service, or says what still works, so nobody approves something blind and
/// nobody takes a lockout for a wrong password.
///
/// Prompts start with what they take ("PIN or password for sudo…"), so that callers which put
/// the user's name in front of every prompt (vlock: "alice's ") read naturally.
public enum Messages {
    // Each text is a whole sentence per case (no nouns glued into sentences), so that every
    // language can say it its own way; `{name}` placeholders carry the values. In English every
    // text is what it was before translations came (tests and lockers match it under LANG=C).

    /// What biounlock's prompt takes now: the passcode of this kind (which the user may still
    /// use) or the Unix password, or only the password (no passcode, or it is locked, or
    /// policy=biometrics). Typed text that is not the passcode goes on to the password module.
    public enum Takes: Equatable, Sendable {
        case passcodeOrPassword(PasscodeKind)
        case password
    }

    /// The touch request with the default `reason=` (shown in the user's language).
    public static func touchPrompt(service: String) -> String {
        touchPrompt(template: Options.defaultReason, service: service)
    }

    /// The `reason=` text with each `%s` replaced by the service (TEXT_INFO, callers without a
    /// terminal). The default is translated; a text the admin wrote is shown as written.
    public static func touchPrompt(template: String, service: String) -> String {
        guard template == Options.defaultReason else { return template.replacingAll("%s", with: service) }
        // TRANSLATORS: shown while the reader waits, by callers without a terminal (dialogs,
        // lockers); {service} is what the user is doing ("unlocking the screen", translated with
        // these texts) or, for a service biounlock does not know, its PAM name.
        return L("Touch the fingerprint reader to authenticate for {service}", ["service": ServiceWords.words(for: service)])
    }

    // MARK: prompts (PROMPT_ECHO_OFF; on a terminal, biounlock's own prompt)

    /// Type or touch, on a terminal, while the reader waits.
    public static func typeOrTouchPrompt(service: String, takes: Takes) -> String {
        // TRANSLATORS: a prompt starts with what it takes, because some callers put the user's
        // name in front ("alice's "). "PIN", "Passcode" and "Pattern" are biounlock's own
        // passcode kinds; "password" is the Unix password; {service} is what the user is doing
        // ("running a command as root") or an unknown PAM service's name. Keep the trailing ": " (or your language's prompt punctuation).
        let v: KeyValuePairs = ["service": ServiceWords.words(for: service)]
        switch takes {
        case .passcodeOrPassword(.pin): return L("PIN or password for {service}, or touch the reader: ", v)
        case .passcodeOrPassword(.password): return L("Passcode or password for {service}, or touch the reader: ", v)
        case .passcodeOrPassword(.pattern): return L("Pattern or password for {service}, or touch the reader: ", v)
        case .password: return L("Password for {service}, or touch the reader: ", v)
        }
    }

    /// The prompt once the reader is done (or when the finger cannot be used): it takes only text.
    public static func typePrompt(service: String, takes: Takes) -> String {
        // TRANSLATORS: the same prompts once the reader is done: they take only typed text.
        let v: KeyValuePairs = ["service": ServiceWords.words(for: service)]
        switch takes {
        case .passcodeOrPassword(.pin): return L("PIN or password for {service}: ", v)
        case .passcodeOrPassword(.password): return L("Passcode or password for {service}: ", v)
        case .passcodeOrPassword(.pattern): return L("Pattern or password for {service}: ", v)
        case .password: return L("Password for {service}: ", v)
        }
    }

    /// Callers without a terminal, while the reader still waits behind the prompt.
    public static func dialogPrompt(service: String, takes: Takes) -> String {
        // TRANSLATORS: the prompts of dialogs and lockers while the reader still waits behind
        // them: Enter alone goes on waiting for a touch.
        let v: KeyValuePairs = ["service": ServiceWords.words(for: service)]
        switch takes {
        case .passcodeOrPassword(.pin): return L("PIN or password for {service}, or touch the reader, then press Enter: ", v)
        case .passcodeOrPassword(.password): return L("Passcode or password for {service}, or touch the reader, then press Enter: ", v)
        case .passcodeOrPassword(.pattern): return L("Pattern or password for {service}, or touch the reader, then press Enter: ", v)
        case .password: return L("Password for {service}, or touch the reader, then press Enter: ", v)
        }
    }

    // MARK: lockouts: what failed, how long, and what still works (ERROR_MSG)

    // TRANSLATORS: {time} is the time left, e.g. "4 min" or "1 h 5 min" (translated below).
    public static func passcodeLocked(_ kind: PasscodeKind, timeLeft: Int64, fingerUsable: Bool) -> String {
        let v: KeyValuePairs = ["time": describeTimeLeft(timeLeft)]
        switch (kind, fingerUsable) {
        case (.pin, true): return L("PIN locked for {time}: use your finger or your password.", v)
        case (.pin, false): return L("PIN locked for {time}: use your password.", v)
        case (.password, true): return L("Passcode locked for {time}: use your finger or your password.", v)
        case (.password, false): return L("Passcode locked for {time}: use your password.", v)
        case (.pattern, true): return L("Pattern locked for {time}: use your finger or your password.", v)
        case (.pattern, false): return L("Pattern locked for {time}: use your password.", v)
        }
    }

    /// - Parameter passcode: the passcode the user may still use, if any.
    public static func biometricsLocked(policy: Policy, timeLeft: Int64?, passcode: PasscodeKind?) -> String {
        if policy == .biometrics, let timeLeft {
            return L("Fingerprint locked for {time} after too many failed attempts: use your password.",
                     ["time": describeTimeLeft(timeLeft)])
        }
        switch policy == .biometrics ? nil : passcode {
        case .pin?: return L("Fingerprint locked after too many failed attempts: use your PIN or your password.")
        case .password?: return L("Fingerprint locked after too many failed attempts: use your passcode or your password.")
        case .pattern?: return L("Fingerprint locked after too many failed attempts: use your pattern or your password.")
        case nil: return L("Fingerprint locked after too many failed attempts: use your password.")
        }
    }

    /// Under policy=biometrics the password satisfies the rule (seen in pam_sm_setcred). TEXT_INFO.
    public static func passcodeRequired(_ reason: Reason, policy: Policy, kind: PasscodeKind?, options: Options) -> String {
        /// What is required: the Unix password (policy=biometrics) or the passcode of this kind.
        enum What { case password, pin, passcode, pattern }
        let what: What
        switch policy == .biometrics ? nil : kind ?? .password {
        case nil: what = .password
        case .pin?: what = .pin
        case .password?: what = .passcode
        case .pattern?: what = .pattern
        }
        switch reason {
        case .passcodeRequiredFirstUse:
            switch what {
            case .password: return L("Password required: enter it once before using your finger.")
            case .pin: return L("PIN required: enter it once before using your finger.")
            case .passcode: return L("Passcode required: enter it once before using your finger.")
            case .pattern: return L("Pattern required: enter it once before using your finger.")
            }
        case .passcodeRequiredAfterEnrolment:
            switch what {
            case .password: return L("Password required: the enrolled fingers have changed.")
            case .pin: return L("PIN required: the enrolled fingers have changed.")
            case .passcode: return L("Passcode required: the enrolled fingers have changed.")
            case .pattern: return L("Pattern required: the enrolled fingers have changed.")
            }
        case .passcodeRequiredAfterIdle:
            // TRANSLATORS: {age} is how long it was not entered, e.g. "72h" or "3d" (translated
            // below), or "a while".
            let v: KeyValuePairs = ["age": options.requirePasscode.maximumAgeSeconds.map(describeAge) ?? L("a while")]
            switch what {
            case .password: return L("Password required: not entered for {age}.", v)
            case .pin: return L("PIN required: not entered for {age}.", v)
            case .passcode: return L("Passcode required: not entered for {age}.", v)
            case .pattern: return L("Pattern required: not entered for {age}.", v)
            }
        default:
            switch what {
            case .password: return L("Password required after a restart.")
            case .pin: return L("PIN required after a restart.")
            case .passcode: return L("Passcode required after a restart.")
            case .pattern: return L("Pattern required after a restart.")
            }
        }
    }

    /// At a login service, the first login of a boot (issue 32): the Unix password, not the passcode.
    public static var passwordRequiredAfterRestart: String { L("Password required after a restart.") }

    // MARK: the finger

    /// TEXT_INFO notices (PAM_SILENT suppresses them).
    public static var skippedRemote: String { L("Fingerprint skipped: remote session.") }
    public static var skippedLid: String { L("Fingerprint skipped: the lid is closed.") }

    /// ERROR_MSG, after each wrong finger.
    public static func notRecognised(triesLeft: Int) -> String {
        L("Fingerprint not recognised. 1 try left.", plural: "Fingerprint not recognised. {count} tries left.", count: triesLeft)
    }

    public static var tooManyWrongFingers: String { L("Fingerprint not recognised.") }

    /// TEXT_INFO: the reader asks for another touch.
    public static func retry(_ reason: RetryReason) -> String {
        switch reason {
        case .general: return L("Try again: touch the reader once more.")
        case .tooShort: return L("Try again: the touch was too short.")
        case .centerFinger: return L("Try again: centre your finger on the reader.")
        case .removeFinger: return L("Try again: lift your finger and touch again.")
        }
    }

    public static var readerUnavailable: String { L("Fingerprint reader not available.") }
    public static var timedOut: String { L("No touch in time.") }
    public static var nothingEnrolled: String { L("No fingerprint enrolled.") }
}

/// "4 min", "1 h 5 min", "30 s": time left, rounded up to the minute past one minute, in the
/// user's language.
public func describeTimeLeft(_ raw: Int64) -> String {
    // Clamped: a corrupt timestamp in the store must not overflow (and trap) inside sudo.
    let seconds = Int(min(max(raw, 0), 100 * 366 * 86400))
    // TRANSLATORS: units of the time left ("30 s", "4 min", "2 h"); abbreviations are fine.
    if seconds < 60 { return L("{count} s", plural: "{count} s", count: max(seconds, 1)) }
    let minutes = seconds / 60 + (seconds % 60 == 0 ? 0 : 1)
    if minutes < 60 { return L("{count} min", plural: "{count} min", count: minutes) }
    let hours = minutes / 60, rest = minutes % 60
    let h = L("{count} h", plural: "{count} h", count: hours)
    guard rest > 0 else { return h }
    // TRANSLATORS: hours and minutes of the time left: {hours} is e.g. "1 h", {minutes} "5 min".
    return L("{hours} {minutes}", ["hours": h, "minutes": L("{count} min", plural: "{count} min", count: rest)])
}

/// "72h", "3d", "15m", "90s" (as require_passcode= writes them), in the user's language.
public func describeAge(_ seconds: Int) -> String {
    // TRANSLATORS: how long the passcode was not entered: days, hours, minutes, seconds
    // ("3d", "72h", "15m", "90s" in English: the units of require_passcode=).
    if seconds % 86400 == 0 && seconds >= 86400 { return L("{count}d", plural: "{count}d", count: seconds / 86400) }
    if seconds % 3600 == 0 && seconds >= 3600 { return L("{count}h", plural: "{count}h", count: seconds / 3600) }
    if seconds % 60 == 0 && seconds >= 60 { return L("{count}m", plural: "{count}m", count: seconds / 60) }
    return L("{count}s", plural: "{count}s", count: seconds)
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation in this library).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(ofText: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}

extension Substring {
    /// The first range of `target` in this text, compared Character by Character as
    /// `firstRange(of:)` compares them, without the _StringProcessing module, which the module's
    /// targets do not import (Package.swift, moduleSwiftSettings). nil for an empty `target`.
    func firstRange(ofText target: String) -> Range<Index>? {
        guard !target.isEmpty else { return nil }
        var start = startIndex
        while start < endIndex {
            if self[start...].starts(with: target) { return start..<index(start, offsetBy: target.count) }
            start = index(after: start)
        }
        return nil
    }
}
