import BiounlockSystem
import BiounlockCore
import BiounlockFprintProtocol

/// A reader owned by the fprintd daemon (sensor=fprintd), reached through the `biounlock-fprintd`
/// helper, which is the D-Bus client (BiounlockDBus). This side loads no D-Bus and no GLib: the
/// host never does. fprintd keeps the prints (the ones GNOME Settings, KDE and `fprintd-enroll` make); the
/// store holds none for this backend, and biounlock's counters, lockouts and audit apply as for
/// any sensor.
///
/// Each instance is one helper that has claimed one fprintd device for one user, from `open` to
/// `close`. Every exchange is bounded by the caller's deadline; a helper that does not answer in
/// time is killed, and fprintd then releases the device itself (its client vanished). fprintd
/// missing or not running, the device claimed by another client, the daemon quitting mid-verify,
/// a disconnected reader: all "unavailable", never a failed match, never a success.
public final class FprintdSensor: FingerprintSensor {
    /// The device, and the user's fingers on it when it was claimed.
    public let device: FprintdReader
    let helper: HelperProcess
    let logger: Logger?
    private var usable = true
    /// A verify whose answer has not been read yet (a key interrupted the wait at a type-or-touch
    /// prompt); the next verify call waits for the same touch.
    private var pendingLimit: Int64?

    private init(helper: HelperProcess, device: FprintdReader, logger: Logger?) {
        self.helper = helper
        self.device = device
        self.logger = logger
    }

    deinit { close() }

    public enum Opened {
        case opened(FprintdSensor)
        /// fprintd holds no print of the user (on the named device, or on any).
        case nothingEnrolled(String)
        case unavailable(SensorUnavailable)
    }

    /// Starts fprintd's client (`fprintd_helper`, biounlock-fprintd) with a clean environment
    /// (HelperLaunch), and only for a `unix:path=` bus whose directory is root's (whoever can
    /// write it could put their own "fprintd" there and answer every VerifyStart with a match);
    /// `first` is sent with the start, before the helper's greeting is read.
    static func launch(_ options: Options, diagnostics: HelperLaunch.Diagnostics, deadline: Int64,
                       first: FprintRequest? = nil) -> Result<HelperProcess, SensorUnavailable> {
        guard let socket = unixBusPath(options.fprintdBus) else {
            return .failure(SensorUnavailable("fprintd_bus refused: not a unix:path= address"))
        }
        if let problem = TrustedFiles.checkDirectory(TrustedFiles.parentDirectory(of: socket)) {
            return .failure(SensorUnavailable("fprintd_bus directory refused: \(problem)"))
        }
        return HelperLaunch.fprintd(options, diagnostics: diagnostics).flatMap { LibfprintSensor.start($0, deadline: deadline, first: first) }
    }

    /// Starts the helper and claims a device for `user`: for verification the one holding the
    /// user's prints (or the one `fprint_device` names); for enrolment the named or default one.
    /// The claim request goes with the start (see LibfprintSensor.start).
    static func open(_ options: Options, user: String, purpose: FprintdPurpose, diagnostics: HelperLaunch.Diagnostics,
                     logger: Logger?, limitMilliseconds: Int64 = LibfprintSensor.openMilliseconds) -> Opened {
        let deadline = monotonicMilliseconds() &+ limitMilliseconds
        let request = FprintRequest.fprintdClaim(bus: options.fprintdBus, user: user, selector: fprintdSelector(options), purpose: purpose)
        let helper: HelperProcess
        switch launch(options, diagnostics: diagnostics, deadline: deadline, first: request) {
        case .success(let h): helper = h
        case .failure(let why): return .unavailable(why)
        }
        switch LibfprintSensor.answer(helper, deadline: deadline) {
        case .success(.fprintdClaimed(let device)):
            return .opened(FprintdSensor(helper: helper, device: device, logger: logger))
        case .success(.failure(let f)):
            helper.shutdown(graceMilliseconds: LibfprintSensor.closeMilliseconds)
            return f.kind == .noUsablePrint ? .nothingEnrolled(f.description) : .unavailable(SensorUnavailable(f.description))
        case .success(let other):
            helper.kill()
            return .unavailable(SensorUnavailable("helper answered fprintd claim with \(other.label)"))
        case .failure(let why):
            helper.kill()
            return .unavailable(why)
        }
    }

    /// `fprint_device` as fprintd knows devices: an object path, its last element, or
    /// `fprintd/N` (as `biounlock sensors` shows them).
    static func fprintdSelector(_ options: Options) -> String {
        guard let selector = options.fprintDevice else { return "" }
        return selector.hasPrefix("fprintd/") ? String(selector.dropFirst("fprintd/".count)) : selector
    }

    /// Every fprintd device and each user's fingers on it (nothing is claimed), one helper for all:
    /// one list per user, in the order of `users`. (Not a dictionary keyed by name: String keys
    /// compare by Unicode equivalence, and two accounts' names may be equivalent.)
    static func list(_ options: Options, users: [String], diagnostics: HelperLaunch.Diagnostics) -> Result<[[FprintdReader]], SensorUnavailable> {
        let deadline = monotonicMilliseconds() &+ LibfprintSensor.openMilliseconds &+ Int64(min(users.count, 1000)) &* 200
        let helper: HelperProcess
        switch launch(options, diagnostics: diagnostics, deadline: deadline) {
        case .success(let h): helper = h
        case .failure(let why): return .failure(why)
        }
        defer { helper.shutdown(graceMilliseconds: LibfprintSensor.closeMilliseconds) }
        var out: [[FprintdReader]] = []
        for user in users {
            switch LibfprintSensor.exchange(helper, .fprintdList(bus: options.fprintdBus, user: user), deadline: deadline) {
            case .success(.fprintdReaders(let list)): out.append(list)
            case .success(.failure(let f)): return .failure(SensorUnavailable(f.description))
            case .success(let other): return .failure(SensorUnavailable("helper answered fprintd list with \(other.label)"))
            case .failure(let why): return .failure(why)
            }
        }
        return .success(out)
    }

    /// The user's fingers on the claimed device, as the chain's templates (no data: fprintd keeps it).
    public var templates: [Template] { device.templates }

    public func close() {
        guard usable else { return }
        usable = false
        // A verify still waiting in the helper ends at once: the helper watches for our request
        // and stops it (VerifyStop, Release) before it answers `closed`.
        pendingLimit = nil
        helper.shutdown(graceMilliseconds: LibfprintSensor.closeMilliseconds)
    }

    /// After a match: the helper releases the device (fprintd's Release) and exits while the
    /// caller records the success; `close` waits for it, so the device is free before the
    /// transaction returns.
    public func startClosing() {
        guard usable else { return }
        helper.startClosing()
    }

    private func abandon() {
        usable = false
        pendingLimit = nil
        helper.kill()
    }

    // MARK: verify

    public func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult {
        guard usable else { return .unavailable(SensorUnavailable("the reader was closed after an earlier failure")) }
        let limit: Int64
        if let waiting = pendingLimit {
            limit = waiting
        } else {
            let remaining = Int64(deadline.remaining())
            guard remaining > LibfprintSensor.cancelMarginMilliseconds else { return .timedOut }
            limit = monotonicMilliseconds() &+ remaining
            let request = FprintRequest.fprintdVerify(timeoutMilliseconds: UInt32(clamping: remaining - LibfprintSensor.cancelMarginMilliseconds))
            if case .failure(let why) = helper.send(request, until: limit) {
                abandon()
                return .unavailable(why)
            }
            pendingLimit = limit
        }
        // The wait may end before the reader's own limit (the caller puts up a prompt meanwhile);
        // the verification goes on in fprintd and its answer waits in the socket.
        let response: FprintResponse
        switch helper.awaitVerifyAnswer(limit: limit, waitUntil: waitUntil, interrupt: interrupt, deadline: deadline,
                                        silence: "fprintd did not answer in time") {
        case .answer(let r): response = r
        case .interrupted: return .interrupted
        case .broken(let result):
            abandon()
            return result
        }
        pendingLimit = nil
        if case .verified(.match(let number)) = response {
            // fprintd decided; the finger is only what it said it verified (0: it did not say).
            let finger = Finger(rawValue: number) ?? device.fingers.first.flatMap { Finger(rawValue: Int($0)) } ?? .default
            return .match(finger)
        }
        if let result = response.verifyResult { return result }
        abandon()
        return .unavailable(SensorUnavailable("helper answered fprintd verify with \(response.label)"))
    }

    // MARK: enrol and delete

    /// Enrols `finger` in fprintd (EnrollStart): fprintd stores the print. The template returned
    /// carries no data and is not for the store.
    public func enroll(finger: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable> {
        guard usable else { return .failure(SensorUnavailable("the reader was closed after an earlier failure")) }
        let result = helper.enrol(deadline: deadline, progress: progress) {
            FprintRequest.fprintdEnrol(finger: UInt8(clamping: finger.rawValue), timeoutMilliseconds: $0)
        }
        switch result {
        case .success(.fprintdEnrolled):
            return .success(Template(finger: finger, sensor: .fprintd, data: [], driver: "fprintd", device: device.shortName,
                                     created: SystemClock().now()))
        case .success(let other):
            abandon()
            return .failure(SensorUnavailable("helper answered fprintd enrol with \(other.label)"))
        case .failure(let failure):
            if failure.abandon { abandon() }
            return .failure(failure.reason)
        }
    }

    /// Deletes `finger` (nil: every finger) of the claimed user from fprintd.
    public func delete(_ finger: Finger?) -> Result<Void, SensorUnavailable> {
        guard usable else { return .failure(SensorUnavailable("the reader was closed after an earlier failure")) }
        let request = FprintRequest.fprintdDelete(finger: UInt8(clamping: finger?.rawValue ?? 0))
        switch LibfprintSensor.exchange(helper, request, deadline: monotonicMilliseconds() &+ 10_000) {
        case .success(.deleted): return .success(())
        case .success(.failure(let f)): return .failure(SensorUnavailable(f.description))
        case .success(let other):
            abandon()
            return .failure(SensorUnavailable("helper answered fprintd delete with \(other.label)"))
        case .failure(let why):
            abandon()
            return .failure(why)
        }
    }
}

extension FprintdReader {
    /// The user's fingers on this device as templates without data (for the chain and for
    /// `biounlock status`): driver `fprintd`, device the path's last element, no enrolment time.
    public var templates: [Template] {
        fingers.compactMap { Finger(rawValue: Int($0)) }.map {
            Template(finger: $0, sensor: .fprintd, data: [], driver: "fprintd", device: shortName, created: 0)
        }
    }

    /// As `biounlock sensors` shows a reader: driver `fprintd`, device the path's last element.
    public var info: ReaderInfo {
        ReaderInfo(driver: "fprintd", device: shortName, name: name, enrolStages: enrolStages, features: ["verify"], scanType: scanType)
    }
}
