import BiounlockCore
import BiounlockFprintProtocol
import BiounlockSystem

// What the two helper-backed readers (LibfprintSensor, FprintdSensor) share: waiting for a
// verify's answer, reading the answers that mean the same for both, and an enrolment's exchange.
// Each reader keeps what differs: which match it accepts, and what an enrolment gives back.

/// How a wait for a verify's answer ended.
enum VerifyWait {
    /// An answer (final or not) from the helper.
    case answer(FprintResponse)
    /// The caller's key or its own earlier limit (`waitUntil`): the verify goes on in the helper
    /// and its answer waits in the socket for the next call.
    case interrupted
    /// The helper is silent past the reader's limit or broke the channel: the reader is to be
    /// abandoned (the helper killed), with this result -- a timeout or unavailable, never a match.
    case broken(VerifyResult)
}

extension HelperProcess {
    /// Waits for the next answer to a verify sent with reader limit `limit`, for at most
    /// `waitUntil` when it comes first, or until a byte on `interrupt`.
    func awaitVerifyAnswer(limit: Int64, waitUntil: Deadline?, interrupt: Int32?, deadline: Deadline,
                           silence: String) -> VerifyWait {
        let waitLimit = min(waitUntil?.milliseconds ?? Int64.max, limit)
        if interrupt != nil || waitLimit < limit {
            switch channel.waitReadable(orInterrupt: interrupt, until: waitLimit) {
            case .interrupted: return .interrupted
            case .ready: break
            case .timedOut where waitLimit < limit: return .interrupted
            case .timedOut, .failed:
                return .broken(deadline.hasPassed() ? .timedOut : .unavailable(SensorUnavailable(silence)))
            }
        }
        switch receive(until: limit) {
        case .success(let response): return .answer(response)
        case .failure(let f): return .broken(deadline.hasPassed() ? .timedOut : .unavailable(SensorUnavailable("helper: \(f)")))
        }
    }

    /// Sends the enrolment `request` makes for the reader's share of `deadline` (less the cancel
    /// margin), passes its stages and retries to `progress`, and returns its final answer.
    /// A failure the helper reported is `.failure(_, abandon: false)`; a silent or broken helper
    /// is `abandon: true` (the reader is to be abandoned).
    func enrol(deadline: Deadline, progress: (EnrollEvent) -> Void,
               _ request: (_ timeoutMilliseconds: UInt32) -> FprintRequest) -> Result<FprintResponse, EnrolFailure> {
        let remaining = Int64(deadline.remaining())
        guard remaining > LibfprintSensor.cancelMarginMilliseconds else {
            return .failure(EnrolFailure(SensorUnavailable("no time left"), abandon: false))
        }
        let sent = request(UInt32(clamping: remaining - LibfprintSensor.cancelMarginMilliseconds))
        let result = LibfprintSensor.exchange(self, sent, deadline: monotonicMilliseconds() &+ remaining) { event in
            switch event {
            case .enrolStage(let done, let total): progress(.stage(done: done, of: total))
            case .enrolRetry(let code): progress(.retry(RetryReason(code: code)))
            default: break
            }
        }
        switch result {
        case .success(.failure(let failure)):
            return .failure(EnrolFailure(SensorUnavailable(failure.kind == .timedOut ? "no touch in time" : failure.description),
                                         abandon: false))
        case .success(let answer): return .success(answer)
        case .failure(let why): return .failure(EnrolFailure(why, abandon: true))
        }
    }
}

struct EnrolFailure: Error {
    let reason: SensorUnavailable
    let abandon: Bool
    init(_ reason: SensorUnavailable, abandon: Bool) { self.reason = reason; self.abandon = abandon }
}

extension FprintResponse {
    /// A final verify answer as both readers read it, or nil for a match (each reader checks its
    /// own) and for an answer that does not belong to a verify. A failure -- removed, busy,
    /// claimed elsewhere, daemon gone, no usable print -- is unavailable, never a failed match.
    var verifyResult: VerifyResult? {
        switch self {
        case .verified(.noMatch): return .noMatch
        case .verified(.retry(let code)): return .retry(RetryReason(code: code))
        case .verified(.timedOut): return .timedOut
        case .failure(let failure): return .unavailable(SensorUnavailable(failure.description))
        default: return nil
        }
    }
}
