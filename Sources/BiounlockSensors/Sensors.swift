import BiounlockSystem
import BiounlockCore
import BiounlockFprintProtocol

/// Where the libfprint helper's own warnings go. Every caller says so (there is no default): a
/// helper writing to the host's stderr would print on the user's terminal inside sudo, and one
/// writing to syslog hides its problems from an admin at the CLI.
public enum HelperDiagnostics: Sendable {
    /// Syslog (authpriv); its stderr is /dev/null. For the PAM module, whose host's stderr is the
    /// user's terminal or nothing.
    case syslog
    /// The caller's stderr (the CLI at an admin's terminal).
    case stderr
}

/// Opens the reader that `sensor=` names.
public struct Sensors: SensorProvider {
    let logger: Logger?
    let diagnostics: HelperDiagnostics

    public init(logger: Logger?, helperDiagnostics: HelperDiagnostics) {
        self.logger = logger
        self.diagnostics = helperDiagnostics
    }

    public func open(_ options: Options) -> Result<FingerprintSensor, SensorUnavailable> {
        open(options, for: [])
    }

    public func open(_ options: Options, for templates: [Template]) -> Result<FingerprintSensor, SensorUnavailable> {
        openReader(options, for: templates).map(\.sensor)
    }

    /// Opens a reader for verifying `user` (the policy chain's way in), with the camera beside it
    /// when the chain gave the user's face (Face/BiometricReader.swift).
    public func openReader(for user: UserRecord, options: Options) -> UserReader {
        FaceReaders.combine(openFingerReader(for: user, options: options), user: user, options: options,
                            diagnostics: diagnostics, logger: logger)
    }

    /// The finger's reader for `user`. With sensor=fprintd the store holds no templates: fprintd
    /// says which fingers the user has, and on which device.
    func openFingerReader(for user: UserRecord, options: Options) -> UserReader {
        let options = Sensors.resolved(options)
        guard options.sensor == .fprintd else {
            let templates = user.templates.filter { $0.sensor == options.sensor }
            guard !templates.isEmpty else { return .nothingEnrolled }
            switch open(options, for: templates) {
            case .success(let sensor): return .ready(sensor, templates)
            case .failure(let why): return .unavailable(why)
            }
        }
        // Starting the helper, reaching fprintd and claiming the device are bounded by the touch
        // timeout too (and never more than 5 s), as for libfprint.
        let limit = min(LibfprintSensor.openMilliseconds, Int64(options.timeoutSeconds) * 1000)
        switch FprintdSensor.open(options, user: user.name, purpose: .verify, diagnostics: diagnostics, logger: logger,
                                  limitMilliseconds: limit) {
        case .opened(let sensor): return .ready(sensor, sensor.templates)
        case .nothingEnrolled(let why):
            logger?.log(.info, "nothing enrolled in fprintd for \(sanitizedForLog(user.name)): \(sanitizedForLog(why))")
            return .nothingEnrolled
        case .unavailable(let why): return .unavailable(why)
        }
    }

    /// Options whose `sensor` is a backend (auto resolved), for callers that built Options by hand.
    static func resolved(_ options: Options) -> Options {
        options.sensor == .auto ? SensorSelection.resolve(options) : options
    }

    /// Claims an fprintd device for enrolling or deleting `user`'s prints (`biounlock enrol` and
    /// `unenrol` with sensor=fprintd): the one `fprint_device` names, else fprintd's default.
    public func openFprintd(_ options: Options, user: String) -> Result<FprintdSensor, SensorUnavailable> {
        switch FprintdSensor.open(options, user: user, purpose: .enrol, diagnostics: diagnostics, logger: logger) {
        case .opened(let sensor): return .success(sensor)
        case .nothingEnrolled(let why): return .failure(SensorUnavailable(why))
        case .unavailable(let why): return .failure(why)
        }
    }

    /// What fprintd holds for `user`: each device and the user's fingers on it.
    public func fprintdFingers(_ options: Options, user: String) -> Result<[FprintdReader], SensorUnavailable> {
        FprintdSensor.list(options, users: [user], diagnostics: diagnostics).map { $0.first ?? [] }
    }

    /// The same for several users through one helper (`biounlock status` and `list`): one list per
    /// user, in the order of `users`.
    public func fprintdFingers(_ options: Options, users: [String]) -> Result<[[FprintdReader]], SensorUnavailable> {
        FprintdSensor.list(options, users: users, diagnostics: diagnostics)
    }

    /// Opens a reader and says which one it is (the CLI shows it and uses its enrolment stages).
    public func openReader(_ options: Options, for templates: [Template] = []) -> Result<OpenReader, SensorUnavailable> {
        let options = Sensors.resolved(options)
        switch options.sensor {
        case .simulated:
            guard let path = options.simSocket else {
                return .failure(SensorUnavailable("sensor=simulated needs sim_socket=PATH"))
            }
            return SimulatedSensor.listen(at: path).map { OpenReader(sensor: $0, info: SimulatedSensor.info(socket: path)) }
        case .libfprint:
            // Nothing of libfprint is loaded here: the helper process does that.
            // Starting the helper and opening the reader is bounded by the touch timeout too, so a
            // wedged reader never holds a login longer than `timeout` would.
            let limit = min(LibfprintSensor.openMilliseconds, Int64(options.timeoutSeconds) * 1000)
            return LibfprintSensor.open(options, preferred: Sensors.readers(of: templates), diagnostics: diagnostics,
                                        logger: logger, limitMilliseconds: limit)
                .map { OpenReader(sensor: $0, info: $0.reader.info) }
        case .fprintd, .auto:
            // fprintd claims a device for a user: openReader(for:) and openFprintd(_:user:).
            return .failure(SensorUnavailable("sensor=fprintd opens a device for a user"))
        }
    }

    /// The distinct readers `templates` were taken on, in order.
    static func readers(of templates: [Template]) -> [ReaderRef] {
        var out: [ReaderRef] = []
        for t in templates where t.sensor == .libfprint && !t.driver.isEmpty {
            let ref = ReaderRef(driver: t.driver, device: t.device)
            if !out.contains(ref) { out.append(ref) }
        }
        return out
    }

    /// The readers present (`biounlock sensors`), without opening them.
    public func list(_ options: Options) -> Result<[ReaderInfo], SensorUnavailable> {
        let options = Sensors.resolved(options)
        switch options.sensor {
        case .fprintd, .auto:
            // The caller's own fingers are asked for too (fprintd needs a user); only the devices are used.
            return fprintdFingers(options, user: "").map { $0.map(\.info) }
        case .simulated:
            guard let path = options.simSocket else { return .success([]) }
            return .success([SimulatedSensor.info(socket: path)])
        case .libfprint:
            let deadline = monotonicMilliseconds() &+ LibfprintSensor.openMilliseconds
            let helper: HelperProcess
            switch LibfprintSensor.start(options, diagnostics: diagnostics, deadline: deadline) {
            case .success(let h): helper = h
            case .failure(let why): return .failure(why)
            }
            defer { helper.shutdown(graceMilliseconds: LibfprintSensor.closeMilliseconds) }
            switch LibfprintSensor.exchange(helper, .enumerate, deadline: deadline) {
            case .success(.devices(let list)): return .success(list.map(\.info))
            case .success(.failure(let f)): return .failure(SensorUnavailable(f.description))
            case .success(let other): return .failure(SensorUnavailable("helper answered enumerate with \(other.label)"))
            case .failure(let why): return .failure(why)
            }
        }
    }

    /// What happened to one print on the reader when it was unenrolled.
    public enum ReaderDeletion: Equatable, Sendable {
        case deleted(ReaderInfo)
        /// The reader keeps no prints of its own: nothing to delete there.
        case notKeptOnReader
        case failed(String)
    }

    /// Deletes libfprint `templates` from the reader's own storage, for readers that keep prints
    /// (match-on-chip). Other readers need nothing: the store held the only copy.
    public func deleteFromReader(_ templates: [Template], options: Options) -> [(Template, ReaderDeletion)] {
        let prints = templates.filter { $0.sensor == .libfprint }
        guard options.sensor == .libfprint, !prints.isEmpty else { return [] }
        let sensor: LibfprintSensor
        switch LibfprintSensor.open(options, preferred: Sensors.readers(of: prints), diagnostics: diagnostics, logger: logger) {
        case .success(let s): sensor = s
        case .failure(let why): return prints.map { ($0, .failed("reader not available: \(why)")) }
        }
        defer { sensor.close() }
        let info = sensor.reader.info
        let open = OpenReader(sensor: sensor, info: info)
        return prints.map { ($0, open.forget($0)) }
    }
}

/// An open reader and what it is.
public struct OpenReader {
    public let sensor: FingerprintSensor
    public let info: ReaderInfo

    /// Deletes `template` from this reader's own storage when it keeps prints (re-enrolment).
    public func forget(_ template: Template) -> Sensors.ReaderDeletion {
        guard let libfprint = sensor as? LibfprintSensor, template.sensor == .libfprint else { return .notKeptOnReader }
        guard template.driver.isEmpty || (template.driver == libfprint.reader.driver && template.device == libfprint.reader.device) else {
            return .failed("it was taken on \(sanitizedForLog(template.driver))/\(sanitizedForLog(template.device)), not on the reader in use; if that reader keeps prints of its own, the print stays there")
        }
        guard libfprint.reader.features.contains(.storageDelete) else { return .notKeptOnReader }
        switch libfprint.deleteFromReader(template, deadline: .after(milliseconds: 10_000)) {
        case .success: return .deleted(info)
        case .failure(let why): return .failed(why.description)
        }
    }
}

extension Sensors {
    /// What is wrong with a stored template before any reader sees it (for `biounlock status`):
    /// a libfprint print that is truncated, foreign (no FP3 magic) or oversized.
    public static func problem(with template: Template) -> String? {
        guard template.sensor == .libfprint else { return nil }
        return PrintProblem.check(template.data)?.description
    }
}

extension SimulatedSensor {
    static func info(socket: String) -> ReaderInfo {
        ReaderInfo(driver: "simulated", device: socket, name: "Simulated sensor (control socket)",
                   enrolStages: SimulatedSensor.enrollStages, features: ["verify"], scanType: "press")
    }
}

extension ReaderInfo {
    /// Whether `fprint_device=` / `--device` names this reader: the helper's rule (ReaderRef.matches).
    public func matches(_ selector: String) -> Bool {
        ReaderRef(driver: driver, device: device).matches(selector)
    }
}
