import BiounlockCore
import BiounlockFaceProtocol
import BiounlockSystem

/// The fingerprint reader and the camera as one reader for the chain's FingerSession: a touch or
/// the user's face, whichever comes first, while the prompt is up (the chain never waits for
/// either before the user may type). Either may be missing: a user with a face and no finger
/// gets the camera alone.
///
/// Rules (docs/DESIGN.md, "The face"):
/// - the camera looks until the reader's deadline; a face seen in `FaceCamera.attemptFrames`
///   frames that is not the user's ends it for this transaction (`faceNotRecognised`: counted by
///   FingerSession as a wrong finger is), so one sudo costs at most one failed face attempt;
/// - a camera that goes away, stalls or shows only dark frames is "no face": the reader goes on;
/// - both are released together (FingerSession.release).
public final class BiometricReader: FingerprintSensor, FaceWatching {
    private var finger: FingerprintSensor?
    private let camera: FaceCamera
    private let faces: [FaceDescriptor]
    private let threshold: Int
    private let logger: Logger?
    private var faceActive = true
    /// While both wait, the reader is asked in slices this long, so that the camera's answer and
    /// a key at the prompt are seen within it (the reader's own wait takes one descriptor to wake).
    static let sliceMilliseconds: Int64 = 100

    init(finger: FingerprintSensor?, camera: FaceCamera, faces: [FaceDescriptor], threshold: Int, logger: Logger?) {
        self.finger = finger; self.camera = camera; self.faces = faces; self.threshold = threshold; self.logger = logger
    }

    public var watchesFace: Bool { faceActive }
    public var watchesFinger: Bool { finger != nil }

    public func verify(against templates: [Template], deadline: Deadline, interrupt: Int32?, waitUntil: Deadline?) -> VerifyResult {
        while true {
            guard faceActive else {
                guard let finger else { return .timedOut }
                return finger.verify(against: templates, deadline: deadline, interrupt: interrupt, waitUntil: waitUntil)
            }
            guard let finger else {
                // The camera alone.
                if let result = face(camera.verify(against: faces, threshold: threshold, deadline: deadline, interrupt: interrupt, waitUntil: waitUntil)) {
                    return result
                }
                continue
            }
            // Both: has the camera answered? (a wait of a millisecond: a check)
            if let result = face(camera.verify(against: faces, threshold: threshold, deadline: deadline, interrupt: nil,
                                               waitUntil: Deadline(milliseconds: monotonicMilliseconds() &+ 1))) {
                if case .interrupted = result {} else { return result }
            }
            guard faceActive else { continue }
            let end = min(waitUntil?.milliseconds ?? deadline.milliseconds, deadline.milliseconds)
            let slice = Deadline(milliseconds: min(end, monotonicMilliseconds() &+ BiometricReader.sliceMilliseconds))
            switch finger.verify(against: templates, deadline: deadline, interrupt: camera.descriptor, waitUntil: slice) {
            case .interrupted:
                if let interrupt, (try? Poll.wait(FileDescriptor(rawValue: interrupt), for: .readable, until: Deadline(milliseconds: 0))).flatMap({ $0 }).map({ !$0.isEmpty }) ?? false {
                    return .interrupted
                }
                if monotonicMilliseconds() >= end { return .interrupted }
            case .unavailable(let why):
                // The reader went away: the camera goes on alone.
                logger?.log(.notice, "reader failed, the camera goes on: \(why)")
                finger.close()
                self.finger = nil
            case let other:
                return other
            }
        }
    }

    /// What the camera's verdict means for the session; nil to go on waiting (the camera is then
    /// done, or still looking behind an interrupted wait: `.interrupted` is returned for that).
    private func face(_ verdict: FaceCamera.Verdict) -> VerifyResult? {
        switch verdict {
        case .matched:
            faceActive = false
            return .faceMatched
        case .notRecognised:
            stopFace()
            return .faceNotRecognised
        case .waiting:
            return .interrupted
        case .timedOut(let problem):
            if problem != .none && problem != .noFace { logger?.log(.notice, "no face in time: \(problem)") }
            stopFace()
            return finger == nil ? .timedOut : nil
        case .unavailable(let why):
            logger?.log(.notice, "camera unavailable: \(why)")
            stopFace()
            return finger == nil ? .unavailable(why) : nil
        }
    }

    private func stopFace() {
        faceActive = false
        camera.close()
    }

    public func enroll(finger f: Finger, deadline: Deadline, progress: (EnrollEvent) -> Void) -> Result<Template, SensorUnavailable> {
        guard let finger else { return .failure(SensorUnavailable("no fingerprint reader")) }
        return finger.enroll(finger: f, deadline: deadline, progress: progress)
    }

    public func close() {
        finger?.close()
        finger = nil
        faceActive = false
        camera.close()
    }
}

/// The face beside the reader the chain opened (Sensors.openReader(for:options:)).
enum FaceReaders {
    /// `reader` (the finger's, as the backend opened it) with the camera added when the user has
    /// a usable face template (the chain reads them only when the face may be used now).
    static func combine(_ reader: UserReader, user: UserRecord, options: Options, diagnostics: HelperDiagnostics,
                        logger: Logger?) -> UserReader {
        guard options.face, !user.faceTemplates.isEmpty else { return reader }
        var faces: [FaceDescriptor] = []
        for t in user.faceTemplates {
            guard let d = FaceTemplateData.decode(t.data) else {
                logger?.log(.warning, "the face enrolled for \(sanitizedForLog(user.name)) is damaged; enrol it again")
                continue
            }
            faces += d
        }
        guard !faces.isEmpty else { return reader }
        // A finger that is ready is not delayed by a camera that is not: its open shares the touch timeout.
        let limit = min(FaceCamera.openMilliseconds, Int64(options.timeoutSeconds) * 1000)
        let camera: FaceCamera
        // Started, not waited for: the models load while the prompt is up (FaceCamera.start).
        switch FaceCamera.start(options, diagnostics: diagnostics, limitMilliseconds: limit) {
        case .success(let c): camera = c
        case .failure(let why):
            logger?.log(.notice, "camera unavailable for \(sanitizedForLog(user.name)): \(why)")
            return reader
        }
        let faceList = Array(faces.prefix(32))
        switch reader {
        case .ready(let sensor, let templates):
            return .ready(BiometricReader(finger: sensor, camera: camera, faces: faceList, threshold: options.faceThresholdMilli, logger: logger), templates)
        case .nothingEnrolled, .unavailable:
            if case .unavailable(let why) = reader { logger?.log(.notice, "reader unavailable, the camera alone: \(why)") }
            return .ready(BiometricReader(finger: nil, camera: camera, faces: faceList, threshold: options.faceThresholdMilli, logger: logger), [])
        }
    }
}
