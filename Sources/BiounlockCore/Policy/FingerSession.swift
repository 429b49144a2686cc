import BiounlockSystem

/// One use of the reader in one transaction: the prints it may match, the reader's deadline, the
/// wrong fingers so far, and the counting of each one. It reports what happened at the reader,
/// one event at a time, and releases the reader as soon as it is done with it; the prompts around
/// it (PolicyChain+Asking) decide what to show and when to stop.
///
/// Counting: a wrong finger is counted in the store (atomically, durably) before the next touch
/// is taken; a wrong finger that cannot be counted ends the session, so that a store that cannot
/// be written never buys unlimited guesses.
final class FingerSession {
    enum Event: Equatable {
        case matched(Finger)
        /// The camera saw the user's face.
        case matchedFace
        /// A face that is not the user's, counted as a wrong finger is; the camera is done.
        case faceNotRecognised(triesLeft: Int)
        /// A wrong finger, counted; the reader waits for another touch.
        case notRecognised(triesLeft: Int)
        /// The reader asked for another touch (never a failure).
        case retry(RetryReason)
        /// The wait ended (a key was pressed, or the wait limit passed) before the reader
        /// answered; the reader still waits for the touch.
        case waiting
        /// The reader is done and released.
        case ended(End)
    }

    enum End: Equatable {
        /// `max_tries` wrong fingers.
        case exhausted
        /// The wrong finger that reached `bio_lockout`.
        case locked
        /// The reader failed (unplugged, busy, an error).
        case unavailable
        /// A wrong finger that could not be counted.
        case uncounted
        case timedOut

        var reason: Reason {
            switch self {
            case .exhausted: return .wrongFinger
            case .locked: return .biometricsLocked
            case .unavailable: return .readerUnavailable
            case .uncounted: return .storeUnavailable
            case .timedOut: return .timedOut
            }
        }
    }

    private let sensor: FingerprintSensor
    private let templates: [Template]
    /// The touch must come by then (`timeout`, from when the reader was opened).
    let deadline: Deadline
    private let user: String
    /// Let go after a match (nothing is counted after it), so that the chain closes the store
    /// while the reader is released (PolicyChain.run).
    private var store: AuthStore?
    private let options: Options
    private let clock: Clock
    private let logger: Logger
    private var wrong = 0
    /// Why the reader is done, once it ended by itself.
    private(set) var end: End?
    private var released = false
    /// A match: the reader's release has started (`release` waits for its end).
    private var closing = false

    /// Whether the reader still waits for a touch.
    var isOpen: Bool { !released && !closing }

    /// The camera beside (or instead of) the reader, when the face is used in this transaction.
    var face: FaceWatching? { (sensor as? FaceWatching).flatMap { $0.watchesFace ? $0 : nil } }

    init(sensor: FingerprintSensor, templates: [Template], user: String, store: AuthStore, options: Options, clock: Clock, logger: Logger) {
        self.sensor = sensor; self.templates = templates; self.user = user; self.store = store
        self.options = options; self.clock = clock; self.logger = logger
        deadline = Deadline.after(milliseconds: Int64(options.timeoutSeconds) * 1000, clock: clock)
    }

    deinit { release() }

    /// Waits for what the reader does next, at most until `waitUntil` (nil: the reader's own
    /// deadline) or until `interrupt` is readable.
    func next(waitUntil: Deadline? = nil, interrupt: Int32? = nil) -> Event {
        guard isOpen else { return .ended(end ?? .timedOut) }
        switch sensor.verify(against: templates, deadline: deadline, interrupt: interrupt, waitUntil: waitUntil) {
        case .interrupted:
            return .waiting
        case .match(let finger):
            // The reader's release starts now and is waited for in `release`, which the chain
            // calls once the success is recorded: the helper releases the reader (fprintd's
            // Release, libfprint's close) while the store writes, and the reader is free before
            // the transaction returns either way.
            closing = true
            sensor.startClosing()
            store = nil
            return .matched(finger)
        case .faceMatched:
            release()
            return .matchedFace
        case .faceNotRecognised:
            // Counted as a wrong finger is (bio_lockout, max_tries), once per transaction: the
            // camera stops after one such attempt (BiounlockSensors' BiometricReader).
            switch countFailure() {
            case .some(let end): return finish(end)
            case .none: return .faceNotRecognised(triesLeft: options.maxTries - wrong)
            }
        case .retry(let reason):
            return .retry(reason)
        case .unavailable(let why):
            logger.log(.notice, "reader failed for \(user): \(why)")
            return finish(.unavailable)
        case .timedOut:
            return finish(.timedOut)
        case .noMatch:
            if let end = countFailure() { return finish(end) }
            return .notRecognised(triesLeft: options.maxTries - wrong)
        }
    }

    /// Counts one failed biometric attempt; the end it brings, or nil to go on.
    private func countFailure() -> End? {
        wrong += 1
        let consecutive: Int
        do {
            // No store (never after a match, which ends the counting): not counted, as a
            // failed write is -- the session ends.
            guard let store else { throw StoreFailure("the store was closed") }
            consecutive = try store.recordBiometricFailure(user: user, at: clock.now())
        } catch {
            logger.log(.error, "cannot record failed match for \(user): \(error)")
            return .uncounted
        }
        if consecutive >= options.biometricLockout { return .locked }
        if wrong >= options.maxTries { return .exhausted }
        return nil
    }

    private func finish(_ end: End) -> Event {
        self.end = end
        release()
        return .ended(end)
    }

    /// Releases the reader, once (a match, an end, text typed at the prompt, the transaction over).
    func release() {
        guard !released else { return }
        released = true
        sensor.close()
    }
}
