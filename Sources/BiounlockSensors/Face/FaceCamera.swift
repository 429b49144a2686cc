import BiounlockCore
import BiounlockFaceProtocol
import BiounlockFprintProtocol
import BiounlockSystem

/// The camera, driven through the `biounlock-face` helper process (BiounlockFaceProtocol). This
/// side loads no dlib, no BLAS and opens no camera: the host never does.
///
/// One instance is one helper with the models loaded and the camera open, from `open` to
/// `close`. Every wait is bounded by the caller's deadline; a helper that does not answer in
/// time is killed, and the result is a timeout or "unavailable", never a match.
public final class FaceCamera {
    /// Longest wait for the helper to start, load the models (about 0.6 s) and open the camera.
    public static let openMilliseconds: Int64 = 5000
    /// What the helper gets less than our deadline, so that it answers "timed out" first.
    static let marginMilliseconds: Int64 = 250
    static let closeMilliseconds: Int64 = 1000
    /// Frames with a face, none the user's, that make one failed attempt (about 1.5 s of frames).
    public static let attemptFrames = 10

    let helper: HelperProcess
    /// The open camera (nil while a camera started with `start` is still opening).
    public private(set) var camera: CameraDescription?
    /// Started with `start`: the helper's hello and its answer to `open` are still to come, by
    /// `openLimit` (monotonic ms).
    private var opening: (greeted: Bool, limit: Int64, allowRGB: Bool)?
    private var usable = true
    /// A verify sent and not answered yet (the wait was interrupted).
    private var pending: (limit: Int64, count: Int)?

    private init(helper: HelperProcess, camera: CameraDescription?) {
        self.helper = helper
        self.camera = camera
    }

    /// Starts the helper and asks it to open the camera without waiting for either: the models
    /// load (about 0.6 s) while the prompt is already up. The first `verify` waits for the
    /// answers, within `limitMilliseconds` from now; a failure then is "unavailable".
    public static func start(_ options: Options, diagnostics: HelperDiagnostics,
                             limitMilliseconds: Int64 = FaceCamera.openMilliseconds) -> Result<FaceCamera, SensorUnavailable> {
        let launch: HelperLaunch
        switch FaceCamera.launch(options, diagnostics: diagnostics) {
        case .success(let l): launch = l
        case .failure(let why): return .failure(why)
        }
        let helper: HelperProcess
        switch HelperProcess.spawn(launch, limit: FaceProtocol.maximumFrameLength) {
        case .success(let h): helper = h
        case .failure(let why): return .failure(why)
        }
        let limit = monotonicMilliseconds() &+ limitMilliseconds
        let request = FaceRequest.open(camera: options.faceSimSocket ?? options.faceCamera, simulated: options.faceSimSocket != nil,
                                       allowRGB: options.faceAllowRGB, models: options.faceModels)
        // The socket's buffer takes the request while the helper starts.
        if case .failure(let f) = helper.channel.send(request.payload, until: limit) {
            helper.kill()
            return .failure(SensorUnavailable("face helper: \(f)"))
        }
        let camera = FaceCamera(helper: helper, camera: nil)
        camera.opening = (false, limit, options.faceAllowRGB)
        return .success(camera)
    }

    /// Reads the hello and the open's answer of a camera made by `start`, as they come: nil
    /// once open, a verdict otherwise (`.waiting` when the wait ended first).
    private func advanceOpening(interrupt: Int32?, waitUntil: Deadline?) -> Verdict? {
        while let state = opening {
            let waitLimit = min(waitUntil?.milliseconds ?? Int64.max, state.limit)
            switch helper.channel.waitReadable(orInterrupt: interrupt, until: waitLimit) {
            case .interrupted: return .waiting
            case .timedOut where waitLimit < state.limit: return .waiting
            case .ready: break
            case .timedOut, .failed:
                abandon()
                return .unavailable(SensorUnavailable("the camera did not open in time"))
            }
            switch FaceCamera.receive(helper, until: state.limit) {
            case .success(.hello) where !state.greeted:
                opening = (true, state.limit, state.allowRGB)
            case .success(.opened(let c)) where state.greeted && (c.greyscale || state.allowRGB):
                camera = c
                opening = nil
            case .success(.failure(let failure)) where state.greeted:
                abandon()
                return .unavailable(SensorUnavailable(failure.message))
            case .success(let other):
                abandon()
                return .unavailable(SensorUnavailable("face helper sent \(other.label) while opening"))
            case .failure(let f):
                abandon()
                return .unavailable(SensorUnavailable("face helper did not start: \(f)"))
            }
        }
        return nil
    }

    deinit { close() }

    /// Security choice: the helper's environment is built from nothing, as the fprint helper's
    /// (HelperLaunch.make): nothing of sudo's caller reaches dlib or OpenBLAS. OPENBLAS_NUM_THREADS=1:
    /// a descriptor at a time needs no thread pool (and none is left spinning in a login).
    static func launch(_ options: Options, diagnostics: HelperDiagnostics) -> Result<HelperLaunch, SensorUnavailable> {
        if let problem = TrustedFiles.checkExecutable(options.faceHelper) {
            return .failure(SensorUnavailable("face_helper refused: \(problem)"))
        }
        if let socket = options.faceSimSocket, let problem = TrustedFiles.checkDirectory(TrustedFiles.parentDirectory(of: socket)) {
            return .failure(SensorUnavailable("face_sim_socket directory refused: \(problem)"))
        }
        let environment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"]
        let arguments = diagnostics == .syslog ? ["--serve", "--syslog"] : ["--serve"]
        return .success(HelperLaunch(path: options.faceHelper, arguments: arguments, environment: environment,
                                     stderrToNull: diagnostics == .syslog))
    }

    /// Starts the helper, loads the models and opens the camera `face_camera` (or the simulated
    /// one) names, within `limitMilliseconds`.
    public static func open(_ options: Options, diagnostics: HelperDiagnostics,
                            limitMilliseconds: Int64 = FaceCamera.openMilliseconds) -> Result<FaceCamera, SensorUnavailable> {
        let deadline = monotonicMilliseconds() &+ limitMilliseconds
        let launch: HelperLaunch
        switch FaceCamera.launch(options, diagnostics: diagnostics) {
        case .success(let l): launch = l
        case .failure(let why): return .failure(why)
        }
        let helper: HelperProcess
        switch HelperProcess.spawn(launch, limit: FaceProtocol.maximumFrameLength) {
        case .success(let h): helper = h
        case .failure(let why): return .failure(why)
        }
        switch receive(helper, until: deadline) {
        case .success(.hello): break
        case .success(let other):
            helper.kill()
            return .failure(SensorUnavailable("face helper did not greet (sent \(other.label))"))
        case .failure(let f):
            helper.kill()
            return .failure(SensorUnavailable("face helper \(launch.path) did not start: \(f)"))
        }
        let request = FaceRequest.open(camera: options.faceSimSocket ?? options.faceCamera, simulated: options.faceSimSocket != nil,
                                       allowRGB: options.faceAllowRGB, models: options.faceModels)
        switch exchange(helper, request, deadline: deadline) {
        case .success(.opened(let camera)):
            // The helper refuses colour cameras unless allowed; a greyscale answer is checked again here.
            guard camera.greyscale || options.faceAllowRGB else {
                helper.kill()
                return .failure(SensorUnavailable("the camera is not an infrared one and face_allow_rgb is off"))
            }
            return .success(FaceCamera(helper: helper, camera: camera))
        case .success(.failure(let failure)):
            helper.shutdown(graceMilliseconds: closeMilliseconds)
            return .failure(SensorUnavailable(failure.message))
        case .success(let other):
            helper.kill()
            return .failure(SensorUnavailable("face helper answered open with \(other.label)"))
        case .failure(let why):
            helper.kill()
            return .failure(why)
        }
    }

    static func receive(_ helper: HelperProcess, until deadline: Int64) -> Result<FaceResponse, FrameChannel.Failure> {
        switch helper.channel.receive(until: deadline) {
        case .success(let payload):
            guard let response = FaceResponse(payload: payload) else {
                helper.channel.markBroken()
                return .failure(.malformed)
            }
            return .success(response)
        case .failure(let f): return .failure(f)
        }
    }

    /// Sends one request and returns its final response; events go to `event`.
    static func exchange(_ helper: HelperProcess, _ request: FaceRequest, deadline: Int64,
                         event: (FaceResponse) -> Void = { _ in }) -> Result<FaceResponse, SensorUnavailable> {
        if case .failure(let f) = helper.channel.send(request.payload, until: deadline) {
            return .failure(SensorUnavailable("face helper: \(f)"))
        }
        while true {
            switch receive(helper, until: deadline) {
            case .success(let response):
                if response.isFinal { return .success(response) }
                event(response)
            case .failure(.timedOut): return .failure(SensorUnavailable("the camera did not answer in time"))
            case .failure(let f): return .failure(SensorUnavailable("face helper: \(f)"))
            }
        }
    }

    /// The descriptor on which a verify's answer arrives (for a caller that waits on several).
    public var descriptor: Int32 { helper.channel.fd }

    public enum Verdict: Equatable {
        case matched
        case notRecognised
        /// No decision (no face, dark, stalled) until the deadline.
        case timedOut(FrameProblem)
        case unavailable(SensorUnavailable)
        /// The wait ended first (`waitUntil`, or the interrupt): the helper goes on looking.
        case waiting
    }

    /// Starts (once) a verify against `templates` and waits for its answer until `waitUntil`, the
    /// deadline, or a byte on `interrupt`.
    public func verify(against templates: [FaceDescriptor], threshold: Int, deadline: Deadline, interrupt: Int32?,
                       waitUntil: Deadline?) -> Verdict {
        guard usable else { return .unavailable(SensorUnavailable("the camera was closed")) }
        if let verdict = advanceOpening(interrupt: interrupt, waitUntil: waitUntil) { return verdict }
        if pending == nil {
            let remaining = Int64(deadline.remaining())
            guard remaining > FaceCamera.marginMilliseconds else { return .timedOut(.none) }
            let request = FaceRequest.verify(descriptors: Array(templates.prefix(FaceProtocol.maximumDescriptors)), thresholdMilli: threshold,
                                             attemptFrames: FaceCamera.attemptFrames,
                                             timeoutMilliseconds: UInt32(clamping: remaining - FaceCamera.marginMilliseconds))
            let limit = monotonicMilliseconds() &+ remaining
            if case .failure(let f) = helper.channel.send(request.payload, until: limit) {
                abandon()
                return .unavailable(SensorUnavailable("face helper: \(f)"))
            }
            pending = (limit, min(templates.count, FaceProtocol.maximumDescriptors))
        }
        guard let (limit, count) = pending else { return .unavailable(SensorUnavailable("no verify")) }
        let waitLimit = min(waitUntil?.milliseconds ?? Int64.max, limit)
        switch helper.channel.waitReadable(orInterrupt: interrupt, until: waitLimit) {
        case .interrupted: return .waiting
        case .timedOut where waitLimit < limit: return .waiting
        case .ready: break
        case .timedOut, .failed:
            pending = nil
            abandon()
            return deadline.hasPassed() ? .timedOut(.none) : .unavailable(SensorUnavailable("the camera did not answer in time"))
        }
        let answer = FaceCamera.receive(helper, until: limit)
        pending = nil
        switch answer {
        case .success(.verified(.match(let index, _))) where index < count: return .matched
        case .success(.verified(.noMatch)): return .notRecognised
        case .success(.verified(.timedOut(let problem))): return .timedOut(problem)
        case .success(.failure(let failure)):
            abandon()
            return .unavailable(SensorUnavailable(failure.message))
        case .success(let other):
            abandon()
            return .unavailable(SensorUnavailable("face helper answered verify with \(other.label)"))
        case .failure(let f):
            abandon()
            return deadline.hasPassed() ? .timedOut(.none) : .unavailable(SensorUnavailable("face helper: \(f)"))
        }
    }

    /// Takes `frames` frames of one face (`biounlock enrol --face`), reporting each.
    public func enrol(frames: Int, threshold: Int, deadline: Deadline,
                      progress: (FaceResponse) -> Void) -> Result<[FaceDescriptor], SensorUnavailable> {
        guard usable else { return .failure(SensorUnavailable("the camera was closed")) }
        if case .unavailable(let why)? = advanceOpening(interrupt: nil, waitUntil: nil) { return .failure(why) }
        let remaining = Int64(deadline.remaining())
        let request = FaceRequest.enrol(frames: frames, thresholdMilli: threshold,
                                        timeoutMilliseconds: UInt32(clamping: max(0, remaining - FaceCamera.marginMilliseconds)))
        switch FaceCamera.exchange(helper, request, deadline: monotonicMilliseconds() &+ remaining, event: progress) {
        case .success(.enrolled(let descriptors)): return .success(descriptors)
        case .success(.failure(let f)): return .failure(SensorUnavailable(f.message))
        case .success(let other):
            abandon()
            return .failure(SensorUnavailable("face helper answered enrol with \(other.label)"))
        case .failure(let why):
            abandon()
            return .failure(why)
        }
    }

    public func close() {
        guard usable else { return }
        usable = false
        // A verify still running would delay a polite close: end the helper at once.
        if pending != nil || opening != nil {
            pending = nil
            opening = nil
            helper.kill()
            return
        }
        if case .success = helper.channel.send(FaceRequest.close.payload, until: monotonicMilliseconds() &+ FaceCamera.closeMilliseconds) {
            _ = FaceCamera.receive(helper, until: monotonicMilliseconds() &+ FaceCamera.closeMilliseconds)
        }
        helper.channel.close()
        if !helper.reap(until: monotonicMilliseconds() &+ FaceCamera.closeMilliseconds) { helper.kill() }
    }

    private func abandon() {
        usable = false
        helper.kill()
    }
}
