/// Lockouts, as pure functions of a user's record and the time, so the module, the CLI's
/// `status` and the tests agree on them. This is the only implementation of the waits: the
/// store's atomic reservation (Store.reservePasscodeAttempt) reads the counter inside its write
/// transaction and asks `passcode(failures:failureAt:threshold:now:)` too.
///
/// - Biometric lockout: `bio_lockout` consecutive failed matches lock the finger until a
///   passcode succeeds (or `biounlock reset`). Under policy=biometrics there is no biounlock
///   passcode, so it also lifts `bio_unlock_time` after the last failed match.
/// - Passcode lockout: from the `passcode_lockout`-th consecutive wrong passcode on, each one
///   starts a wait: 1 min, 5 min, 15 min, then 60 min each. While it runs, no passcode is checked
///   (no Argon2id work): the time left is said, and text typed at the prompt is handed on to the
///   password (PAM_AUTHINFO_UNAVAIL); the finger and the Unix password still work.
/// Counters live in the store, so both survive reboots.
public enum Lockouts {
    public enum State: Equatable, Sendable {
        case open
        /// Locked; `until` is when it lifts by itself (nil: only a passcode or an admin lifts it).
        case locked(until: Int64?)
    }

    public static func biometric(_ record: UserRecord, options: Options, now: Int64) -> State {
        guard record.biometricFailures >= options.biometricLockout else { return .open }
        guard options.policy == .biometrics else { return .locked(until: nil) }
        let until = saturatingSum(record.biometricFailureAt ?? 0, Int64(options.biometricUnlockSeconds))
        return now < until ? .locked(until: until) : .open
    }

    /// Waits after the n-th consecutive wrong passcode past the threshold.
    public static let passcodeWaits: [Int64] = [60, 5 * 60, 15 * 60, 60 * 60]

    public static func passcodeWait(afterFailures failures: Int, threshold: Int) -> Int64 {
        guard failures >= threshold else { return 0 }
        let index = min(failures - threshold, passcodeWaits.count - 1)
        return passcodeWaits[max(0, index)]
    }

    public static func passcode(_ record: UserRecord, options: Options, now: Int64) -> State {
        passcode(failures: record.passcodeFailures, failureAt: record.passcodeFailureAt, threshold: options.passcodeLockout, now: now)
    }

    /// The passcode lockout from the stored counter and clock (a missing clock counts as 0, as
    /// loadUser reads it).
    public static func passcode(failures: Int, failureAt: Int64?, threshold: Int, now: Int64) -> State {
        let wait = passcodeWait(afterFailures: failures, threshold: threshold)
        guard wait > 0 else { return .open }
        let until = saturatingSum(failureAt ?? 0, wait)
        return now < until ? .locked(until: until) : .open
    }

    /// `a + b` for b >= 0, stopping at Int64.max instead of wrapping: a stored time near
    /// Int64.max (a damaged store, a clock set far ahead) must lock until the end of time, never
    /// wrap around to a negative end that reads as "open" (SQL, which once decided this too,
    /// turned the overflow into a REAL and said "locked": status and the module disagreed).
    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? Int64.min : Int64.max) : sum
    }
}

/// Why the passcode is required before the finger may be used again (or nil).
public enum PasscodeRequirement {
    public static func reason(_ record: UserRecord, options: Options, now: Int64, bootID: String?) -> Reason? {
        let rules = options.requirePasscode
        if rules != .none && record.passcodeSuccessAt == nil { return .passcodeRequiredFirstUse }
        if rules.afterBoot {
            // An unreadable boot id counts as a new boot: fail towards the passcode.
            guard let bootID, record.passcodeBootID == bootID else { return .passcodeRequiredAfterBoot }
        }
        if rules.afterEnrolmentChange, record.passcodeEnrolmentVersion != record.enrolmentVersion {
            return .passcodeRequiredAfterEnrolment
        }
        if let maximum = rules.maximumAgeSeconds {
            guard let last = record.passcodeSuccessAt, now &- last <= Int64(maximum) else { return .passcodeRequiredAfterIdle }
        }
        return nil
    }
}
