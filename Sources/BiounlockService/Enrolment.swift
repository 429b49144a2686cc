import Synchronization
import BiounlockSystem
import BiounlockCore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockServiceProtocol

/// What an enrolment reports, in order: `ready` once the reader is open, `stage` per touch
/// taken, `retry` per touch that did not count, then one `finished`.
public enum EnrolEvent: Equatable, Sendable {
    case ready(total: Int)
    case stage(done: Int, total: Int)
    case retry(ManagerAPI.RetryCode)
    case finished(EnrolOutcome)
}

public enum EnrolOutcome: Equatable, Sendable {
    /// The template to store (for sensor=fprintd: a marker without data, fprintd keeps the print;
    /// `fprintdPrints` is the set fprintd holds afterwards, FprintdPrints' text, nil if unlisted).
    case enrolled(Template, fprintdPrints: String?)
    case failed(String)
    case cancelled
}

/// A running enrolment the service can stop.
public protocol EnrolmentControl: AnyObject, Sendable {
    /// Stops it; `finished(.cancelled)` follows (unless it had finished already).
    func cancel()
}

public struct EnrolRequest: Equatable, Sendable {
    public let user: String
    public let finger: Finger
    public let seconds: UInt32
    public init(user: String, finger: Finger, seconds: UInt32) { self.user = user; self.finger = finger; self.seconds = seconds }
}

/// Starts enrolments. `events` is called from another thread, in order, ending with `finished`.
public protocol EnrolmentRunner: Sendable {
    func start(_ request: EnrolRequest, events: @escaping @Sendable (EnrolEvent) -> Void) -> Result<EnrolmentControl, SensorUnavailable>
}

/// The real one: `biounlockd --enrol-worker` takes the touches with the sensor layer the CLI
/// uses (the simulated sensor; libfprint and fprintd through biounlock-fprint), and a thread of
/// the service reads its reports.
public struct WorkerEnrolmentRunner: EnrolmentRunner {
    let launch: WorkerLaunch
    public init(launch: WorkerLaunch) { self.launch = launch }

    public func start(_ request: EnrolRequest, events: @escaping @Sendable (EnrolEvent) -> Void) -> Result<EnrolmentControl, SensorUnavailable> {
        let worker: HelperProcess
        switch launch.spawn("--enrol-worker", sensitive: false) {
        case .success(let w): worker = w
        case .failure(let why): return .failure(why)
        }
        let payload = WorkerMessages.enrolRequest(user: request.user, finger: request.finger, seconds: request.seconds, words: launch.optionWords)
        if case .failure(let f) = worker.channel.send(payload, until: monotonicMilliseconds() &+ 5000) {
            worker.kill()
            return .failure(SensorUnavailable("the enrolment worker did not take the request: \(f)"))
        }
        let control = WorkerEnrolment(worker: worker)
        // The worker ends by its own deadline; the service allows for the reader's opening too.
        let deadline = monotonicMilliseconds() &+ Int64(request.seconds) * 1000 &+ 30_000
        do throws(Errno) {
            try Threads.detach { control.supervise(until: deadline, events: events) }
        } catch {
            control.cancel()
            worker.kill()
            return .failure(SensorUnavailable(error))
        }
        return .success(control)
    }
}

/// One worker and its reports. Cancelling sends SIGKILL to the worker only while it is known not
/// to be reaped (both under one lock), so the signal can never reach a recycled pid.
final class WorkerEnrolment: EnrolmentControl, @unchecked Sendable {
    private let worker: HelperProcess
    private struct State { var reaped = false; var cancelled = false }
    private let state = Mutex(State())

    init(worker: HelperProcess) { self.worker = worker }

    func cancel() {
        state.withLock { s in
            guard !s.reaped else { return }
            s.cancelled = true
            try? Signal.kill.send(to: worker.pid)
        }
    }

    func supervise(until deadline: Int64, events: @Sendable (EnrolEvent) -> Void) {
        let outcome = readReports(until: deadline, events: events)
        let cancelled = state.withLock { s -> Bool in
            worker.kill()
            s.reaped = true
            return s.cancelled
        }
        // A template that arrived stands even if a cancel came after it; anything else that
        // ended after a cancel was the cancel.
        if let outcome, case .enrolled = outcome {
            events(.finished(outcome))
        } else {
            events(.finished(cancelled ? .cancelled : (outcome ?? .failed("the enrolment worker ended without a result"))))
        }
    }

    private func readReports(until deadline: Int64, events: @Sendable (EnrolEvent) -> Void) -> EnrolOutcome? {
        while true {
            let frame: [UInt8]
            switch worker.channel.receive(until: deadline) {
            case .success(let f): frame = f
            case .failure(.timedOut): return .failed("no touch in time")
            case .failure: return nil // killed (cancelled) or died
            }
            var r = WireReader(frame)
            switch r.u8().flatMap(WorkerMessages.EnrolKind.init(rawValue:)) {
            case .ready?:
                events(.ready(total: Int(r.u32() ?? 0)))
            case .stage?:
                let done = Int(r.u32() ?? 0), total = Int(r.u32() ?? 0)
                events(.stage(done: done, total: total))
            case .retry?:
                events(.retry(ManagerAPI.RetryCode(rawValue: r.string() ?? "") ?? .general))
            case .done?:
                guard let sensorName = r.string(), let sensor = SensorKind(rawValue: sensorName), sensor != .auto,
                      let fingerCode = r.u8(), let finger = Finger(rawValue: Int(fingerCode)),
                      let data = r.data(limit: FprintProtocol.maximumPrintLength), let driver = r.string(), let device = r.string(),
                      let high = r.u32(), let low = r.u32(), let hasPrints = r.u8(), let prints = r.string() else {
                    return .failed("the enrolment worker sent a malformed template")
                }
                let created = Int64(bitPattern: UInt64(high) << 32 | UInt64(low))
                return .enrolled(Template(finger: finger, sensor: sensor, data: data, driver: driver, device: device, created: created),
                                 fprintdPrints: hasPrints == 1 ? prints : nil)
            case .failed?:
                return .failed(r.string() ?? "enrolment failed")
            case nil:
                return .failed("the enrolment worker sent nonsense")
            }
        }
    }
}

/// The worker's side (`biounlockd --enrol-worker`): one request, the sensor layer's enrolment
/// with its progress as frames, then the template (or why not), exit.
public enum EnrolWorker {
    public static func run(channel: FrameChannel, logger: Logger) -> Int32 {
        guard case .success(let request) = channel.receive(until: monotonicMilliseconds() &+ 10_000) else { return 1 }
        var r = WireReader(request)
        guard r.u8() == WorkerMessages.version, let user = r.string(), let code = r.u8(), let finger = Finger(rawValue: Int(code)),
              let seconds = r.u32(), let count = r.count(limit: 64) else {
            return fail(channel, "malformed request")
        }
        var words: [String] = []
        for _ in 0..<count {
            guard let w = r.string() else { return fail(channel, "malformed request") }
            words.append(w)
        }
        let options: Options
        switch Configuration.load(arguments: words) {
        case .failure(let f): return fail(channel, "\(f)")
        case .success(let loaded): options = loaded.options
        }
        let deadline = Deadline.after(milliseconds: Int64(seconds) * 1000)
        let sensors = Sensors(logger: logger, helperDiagnostics: .syslog)
        let progress: (EnrollEvent) -> Void = { event in
            var w = WireWriter()
            switch event {
            case .stage(let done, let total):
                w.u8(WorkerMessages.EnrolKind.stage.rawValue); w.u32(UInt32(clamping: done)); w.u32(UInt32(clamping: total))
            case .retry(let reason):
                w.u8(WorkerMessages.EnrolKind.retry.rawValue); w.string(retryCode(reason).rawValue)
            case .differentFinger:
                w.u8(WorkerMessages.EnrolKind.retry.rawValue); w.string(ManagerAPI.RetryCode.differentFinger.rawValue)
            }
            _ = channel.send(w.bytes, until: monotonicMilliseconds() &+ 5000)
        }
        let result: Result<Template, SensorUnavailable>
        var prints: String?
        if options.sensor == .fprintd {
            let reader: FprintdSensor
            switch sensors.openFprintd(options, user: user) {
            case .success(let s): reader = s
            case .failure(let why): return fail(channel, "fprintd not available: \(why)")
            }
            ready(channel, total: reader.device.enrolStages)
            result = reader.enroll(finger: finger, deadline: deadline, progress: progress)
            reader.close()
            if case .success = result, case .success(let devices) = sensors.fprintdFingers(options, user: user) {
                prints = FprintdPrints.text(devices.flatMap(\.templates))
            }
        } else {
            let reader: OpenReader
            switch sensors.openReader(options) {
            case .success(let o): reader = o
            case .failure(let why): return fail(channel, "reader not available: \(why)")
            }
            ready(channel, total: reader.info.enrolStages)
            result = reader.sensor.enroll(finger: finger, deadline: deadline, progress: progress)
            reader.sensor.close()
        }
        switch result {
        case .failure(let why):
            return fail(channel, why.description)
        case .success(let t):
            var w = WireWriter()
            w.u8(WorkerMessages.EnrolKind.done.rawValue)
            w.string(t.sensor.rawValue)
            w.u8(UInt8(clamping: t.finger.rawValue))
            w.data(t.data)
            w.string(t.driver)
            w.string(t.device)
            let created = UInt64(bitPattern: t.created)
            w.u32(UInt32(truncatingIfNeeded: created >> 32)); w.u32(UInt32(truncatingIfNeeded: created))
            w.u8(prints == nil ? 0 : 1)
            w.string(prints ?? "")
            _ = channel.send(w.bytes, until: monotonicMilliseconds() &+ 5000)
            return 0
        }
    }

    static func ready(_ channel: FrameChannel, total: Int) {
        var w = WireWriter()
        w.u8(WorkerMessages.EnrolKind.ready.rawValue)
        w.u32(UInt32(clamping: total))
        _ = channel.send(w.bytes, until: monotonicMilliseconds() &+ 5000)
    }

    static func fail(_ channel: FrameChannel, _ why: String) -> Int32 {
        var w = WireWriter()
        w.u8(WorkerMessages.EnrolKind.failed.rawValue)
        w.string(why)
        _ = channel.send(w.bytes, until: monotonicMilliseconds() &+ 5000)
        return 1
    }

    static func retryCode(_ reason: RetryReason) -> ManagerAPI.RetryCode {
        switch reason {
        case .general: return .general
        case .tooShort: return .tooShort
        case .centerFinger: return .centerFinger
        case .removeFinger: return .removeFinger
        }
    }
}
