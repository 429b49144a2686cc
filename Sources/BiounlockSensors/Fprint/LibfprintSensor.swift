import BiounlockSystem
import BiounlockCore
import BiounlockFprintProtocol

/// A libfprint-2 reader, driven through the `biounlock-fprint` helper process (see HelperProcess
/// and BiounlockFprintProtocol). This side loads no libfprint and no GLib: the host never does.
///
/// Each instance is one helper with one open reader, from `open` to `close`. Every request is
/// bounded by the caller's deadline; a helper that does not answer in time is killed, and the
/// result is a timeout or "unavailable", never a match.
public final class LibfprintSensor: FingerprintSensor {
    /// Longest wait for the helper to start and open the reader (USB readers take a moment).
    public static let openMilliseconds: Int64 = 5000
    /// What the helper gets less than our deadline for a touch, to cancel libfprint and answer
    /// "timed out" before we stop waiting and kill it.
    static let cancelMarginMilliseconds: Int64 = 250
    /// Longest wait for the helper to close the reader and exit.
    static let closeMilliseconds: Int64 = 2000

    let helper: HelperProcess
    /// The open reader.
    public let reader: ReaderDescription
    let logger: Logger?
    private var usable = true
    /// Fingers whose stored print was already reported as unusable (one log line each).
    private var reported: Set<Int> = []

    private init(helper: HelperProcess, reader: ReaderDescription, logger: Logger?) {
        self.helper = helper
        self.reader = reader
        self.logger = logger
    }

    deinit { close() }

    /// Starts the helper and opens a reader: the one `fprint_device` names, else the first one
    /// any of `preferred` was taken on, else the first reader found.
    static func open(_ options: Options, preferred: [ReaderRef], diagnostics: HelperLaunch.Diagnostics,
                     logger: Logger?, limitMilliseconds: Int64 = LibfprintSensor.openMilliseconds) -> Result<LibfprintSensor, SensorUnavailable> {
        let deadline = monotonicMilliseconds() &+ limitMilliseconds
        let helper: HelperProcess
        switch start(options, diagnostics: diagnostics, deadline: deadline) {
        case .success(let h): helper = h
        case .failure(let why): return .failure(why)
        }
        let request = FprintRequest.open(selector: options.fprintDevice ?? "", preferred: preferred)
        switch exchange(helper, request, deadline: deadline) {
        case .success(.opened(let reader)):
            return .success(LibfprintSensor(helper: helper, reader: reader, logger: logger))
        case .success(.failure(let failure)):
            helper.shutdown(graceMilliseconds: closeMilliseconds)
            return .failure(SensorUnavailable(failure.description))
        case .success(let other):
            helper.kill()
            return .failure(SensorUnavailable("helper answered open with \(other.label)"))
        case .failure(let why):
            helper.kill()
            return .failure(why)
        }
    }

    /// Spawns the libfprint helper and waits for its `hello`.
    static func start(_ options: Options, diagnostics: HelperLaunch.Diagnostics, deadline: Int64) -> Result<HelperProcess, SensorUnavailable> {
        HelperLaunch.make(options, diagnostics: diagnostics).flatMap { start($0, deadline: deadline) }
    }

    /// Spawns a helper, sends `first` at once (the helper reads it as soon as it has greeted:
    /// no round trip is spent on the greeting), and waits for its `hello`.
    static func start(_ launch: HelperLaunch, deadline: Int64, first: FprintRequest? = nil) -> Result<HelperProcess, SensorUnavailable> {
        let helper: HelperProcess
        switch HelperProcess.spawn(launch) {
        case .success(let h): helper = h
        case .failure(let why): return .failure(why)
        }
        if let first, case .failure(let why) = helper.send(first, until: deadline) {
            helper.kill()
            return .failure(why)
        }
        switch helper.receive(until: deadline) {
        case .success(.hello):
            return .success(helper)
        case .success(let other):
            helper.kill()
            return .failure(SensorUnavailable("helper \(launch.path) did not greet (sent \(other.label))"))
        case .failure(let f):
            helper.kill()
            // A helper of another protocol version sends frames we cannot parse: "malformed".
            return .failure(SensorUnavailable("helper \(launch.path) did not start: \(f)"))
        }
    }

    /// Waits for the final response to a request already sent; events are passed to `event`.
    static func answer(_ helper: HelperProcess, deadline: Int64, event: (FprintResponse) -> Void = { _ in }) -> Result<FprintResponse, SensorUnavailable> {
        while true {
            switch helper.receive(until: deadline) {
            case .success(let response):
                if response.isFinal { return .success(response) }
                event(response)
            case .failure(.timedOut):
                return .failure(SensorUnavailable("the reader did not answer in time"))
            case .failure(let f):
                return .failure(SensorUnavailable("helper: \(f)"))
            }
        }
    }

    /// Sends one request and returns its final response; events are passed to `event`.
    static func exchange(_ helper: HelperProcess, _ request: FprintRequest, deadline: Int64,
                         event: (FprintResponse) -> Void = { _ in }) -> Result<FprintResponse, SensorUnavailable> {
        if case .failure(let why) = helper.send(request, until: deadline) { return .failure(why) }
        return answer(helper, deadline: deadline, event: event)
    }

    public func close() {
        guard usable else { return }
        usable = false
        // A verify still running in the helper (Enter was pressed at type-or-touch) would delay a
        // polite close by up to its timeout: release the reader at once by ending the helper.
        if pendingVerify != nil {
            pendingVerify = nil
            helper.kill()
            return
        }
        helper.shutdown(graceMilliseconds: LibfprintSensor.closeMilliseconds)
    }

    /// After a match: the helper closes the reader and exits while the caller records the
    /// success; `close` waits for it. (A verify still pending is ended in `close`, by a kill.)
    public func startClosing() {
        guard usable, pendingVerify == nil else { return }
        helper.startClosing()
    }

    /// Ends the helper at once after a broken exchange (deadline passed, bad message).
    private func abandon() {
        usable = false
        helper.kill()
    }

    // MARK: verify

    /// The prints worth sending: libfprint's, not visibly broken, taken on this reader; the
    /// store's order (oldest enrolment first), so a VERIFY-only reader uses the first finger.
    func candidates(_ templates: [Template]) -> [Template] {
        var out: [Template] = []
        for t in templates where t.sensor == .libfprint {
            if let problem = PrintProblem.check(t.data) {
                report(t.finger, "stored print for \(t.finger.name) is \(problem); enrol it again")
                continue
            }
            // Older rows may lack the reader; the helper checks fp_print_compatible either way.
            if !t.driver.isEmpty && (t.driver != reader.driver || t.device != reader.device) {
                report(t.finger, "stored print for \(t.finger.name) was taken on \(sanitizedForLog(t.driver))/\(sanitizedForLog(t.device)), not on this reader (\(sanitizedForLog(reader.driver))/\(sanitizedForLog(reader.device)))")
                continue
            }
            out.append(t)
            if out.count == FprintProtocol.maximumPrints { break }
        }
        return out
    }

    private func report(_ finger: Finger, _ message: String) {
        guard !reported.contains(finger.rawValue) else { return }
        reported.insert(finger.rawValue)
        logger?.log(.warning, message)
    }

    /// A verify sent to the helper whose answer has not been read yet (the wait was interrupted
    /// by a key at a type-or-touch prompt); the next verify call waits for the same touch.
    private var pendingVerify: (prints: [Template], limit: Int64)?

    public func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult {
        guard usable else { return .unavailable(SensorUnavailable("the reader was closed after an earlier failure")) }
        let pending: (prints: [Template], limit: Int64)
        if let waiting = pendingVerify {
            pending = waiting
        } else {
            let prints = candidates(templates)
            guard !prints.isEmpty else {
                return .unavailable(SensorUnavailable("no enrolled print can be used on \(reader.driver)/\(reader.device)"))
            }
            let remaining = Int64(deadline.remaining())
            guard remaining > LibfprintSensor.cancelMarginMilliseconds else { return .timedOut }
            let helperTimeout = UInt32(clamping: remaining - LibfprintSensor.cancelMarginMilliseconds)
            pending = (prints, monotonicMilliseconds() &+ remaining)
            let request = FprintRequest.verify(prints: prints.map(\.data), timeoutMilliseconds: helperTimeout)
            if case .failure(let why) = helper.send(request, until: pending.limit) {
                abandon()
                return .unavailable(why)
            }
            pendingVerify = pending
        }
        let prints = pending.prints
        // The wait may end before the reader's own limit (the caller puts up a prompt meanwhile);
        // the verify goes on in the helper and its answer waits in the socket.
        while true {
            let response: FprintResponse
            switch helper.awaitVerifyAnswer(limit: pending.limit, waitUntil: waitUntil, interrupt: interrupt, deadline: deadline,
                                            silence: "the reader did not answer in time") {
            case .answer(let r): response = r
            case .interrupted: return .interrupted
            case .broken(let result):
                pendingVerify = nil
                abandon()
                return result
            }
            guard response.isFinal else {
                if case .printRejected(let index, let problem) = response, prints.indices.contains(index) {
                    report(prints[index].finger, "stored print for \(prints[index].finger.name) refused by the reader: \(problem); enrol it again")
                }
                continue
            }
            pendingVerify = nil
            if case .verified(.match(let index)) = response {
                // Only an index we sent is a match; anything else is a broken helper.
                guard prints.indices.contains(index) else {
                    abandon()
                    return .unavailable(SensorUnavailable("helper reported a match with an unknown print"))
                }
                return .match(prints[index].finger)
            }
            if let result = response.verifyResult { return result }
            abandon()
            return .unavailable(SensorUnavailable("helper answered verify with \(response.label)"))
        }
    }

    // MARK: enrol

    public func enroll(finger: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable> {
        guard usable else { return .failure(SensorUnavailable("the reader was closed after an earlier failure")) }
        let result = helper.enrol(deadline: deadline, progress: progress) {
            FprintRequest.enrol(finger: UInt8(clamping: finger.rawValue), timeoutMilliseconds: $0)
        }
        switch result {
        case .success(.enrolled(let print)):
            if let problem = PrintProblem.check(print) {
                return .failure(SensorUnavailable("the reader produced an unusable print (\(problem))"))
            }
            return .success(Template(finger: finger, sensor: .libfprint, data: print, driver: reader.driver,
                                     device: reader.device, created: SystemClock().now()))
        case .success(let other):
            abandon()
            return .failure(SensorUnavailable("helper answered enrol with \(other.label)"))
        case .failure(let failure):
            if failure.abandon { abandon() }
            return .failure(failure.reason)
        }
    }

    // MARK: on-reader storage

    /// Deletes `template` from the reader's own storage (readers with storage-delete).
    public func deleteFromReader(_ template: Template, deadline: Deadline) -> Result<Void, SensorUnavailable> {
        guard usable else { return .failure(SensorUnavailable("the reader was closed after an earlier failure")) }
        if let problem = PrintProblem.check(template.data) { return .failure(SensorUnavailable("stored print is \(problem)")) }
        switch LibfprintSensor.exchange(helper, .delete(print: template.data), deadline: monotonicMilliseconds() &+ Int64(deadline.remaining())) {
        case .success(.deleted): return .success(())
        case .success(.failure(let failure)): return .failure(SensorUnavailable(failure.description))
        case .success(let other):
            abandon()
            return .failure(SensorUnavailable("helper answered delete with \(other.label)"))
        case .failure(let why):
            abandon()
            return .failure(why)
        }
    }
}

extension ReaderDescription {
    var info: ReaderInfo {
        ReaderInfo(driver: driver, device: device, name: name, enrolStages: enrolStages, features: features.names, scanType: scanType)
    }
}

extension FprintResponse {
    /// A short name for messages about unexpected answers.
    var label: String {
        switch self {
        case .hello: return "hello"
        case .devices: return "devices"
        case .opened: return "opened"
        case .enrolStage: return "enrolStage"
        case .enrolRetry: return "enrolRetry"
        case .enrolled: return "enrolled"
        case .printRejected: return "printRejected"
        case .verified: return "verified"
        case .deleted: return "deleted"
        case .closed: return "closed"
        case .failure: return "failure"
        case .fprintdReaders: return "fprintdReaders"
        case .fprintdClaimed: return "fprintdClaimed"
        case .fprintdEnrolled: return "fprintdEnrolled"
        }
    }
}
