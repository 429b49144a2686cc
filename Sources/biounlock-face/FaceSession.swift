import BiounlockFaceProtocol
import BiounlockSystem
import CCamera
import CFaceEngine

/// The model files biounlock-face loads, in the directory `face_models=` names
/// (default /usr/share/biounlock/face; scripts/deps and scripts/package fetch them).
enum ModelFiles {
    static let landmarks = "shape_predictor_5_face_landmarks.dat"
    static let network = "dlib_face_recognition_resnet_model_v1.dat"

    /// Security choice: dlib's deserialisation trusts its input, so the directory and both files
    /// must be root-owned, not writable by group or others, and not symbolic links; anything else
    /// is refused before dlib reads a byte.
    static func check(_ directory: String) -> String? {
        if let problem = TrustedFiles.checkDirectory(directory) { return problem.description }
        for name in [landmarks, network] {
            if let problem = TrustedFiles.checkRegularFile(directory + "/" + name) { return problem.description }
        }
        return nil
    }
}

/// The loaded models (one per process; loading takes about half a second).
final class Engine {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { bu_face_engine_free(pointer) }

    static func load(_ directory: String) -> Result<Engine, FaceFailure> {
        if let problem = ModelFiles.check(directory) { return .failure(FaceFailure(.models, "face models refused: \(problem)")) }
        var error = [CChar](repeating: 0, count: 256)
        guard let engine = bu_face_engine_load(directory + "/" + ModelFiles.landmarks, directory + "/" + ModelFiles.network,
                                               &error, error.count) else {
            return .failure(FaceFailure(.models, "face models unreadable: \(text(error))"))
        }
        return .success(Engine(engine))
    }

    enum Found {
        case face(FaceDescriptor, faces: Int)
        case problem(FrameProblem, String?)
    }

    /// Frames whose mean brightness is below this (of 255) are "dark": nothing to look for.
    static let darkMean = 8

    /// The descriptor of the largest face in a greyscale image.
    func describe(_ pixels: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int) -> Found {
        guard width >= Int(BU_FACE_MIN_SIDE), height >= Int(BU_FACE_MIN_SIDE), width <= Int(BU_FACE_MAX_SIDE),
              height <= Int(BU_FACE_MAX_SIDE), stride >= width else {
            return .problem(.badFrame, "a frame of \(width)x\(height)")
        }
        // Dark: sampled mean brightness (every 4th pixel of every 4th row).
        var sum = 0, count = 0
        for y in Swift.stride(from: 0, to: height, by: 4) {
            for x in Swift.stride(from: 0, to: width, by: 4) {
                sum += Int(pixels[y * stride + x]); count += 1
            }
        }
        if count > 0 && sum / count < Engine.darkMean { return .problem(.dark, nil) }
        var values = [Float](repeating: 0, count: FaceProtocol.descriptorLength)
        var found = bu_face_found()
        var error = [CChar](repeating: 0, count: 256)
        // Faces smaller than ~80 px are found only in an upsampled image (twice the work).
        let upsample: Int32 = min(width, height) < 400 ? 1 : 0
        let status = bu_face_describe(pointer, pixels, Int32(width), Int32(height), Int32(stride), upsample, 0,
                                      &values, &found, &error, error.count)
        switch status {
        case BU_FACE_FOUND:
            guard let d = FaceDescriptor(values) else { return .problem(.badFrame, "the network gave a non-finite descriptor") }
            return .face(d, faces: Int(found.faces))
        case BU_FACE_NONE: return .problem(.noFace, nil)
        case BU_FACE_BAD_IMAGE: return .problem(.badFrame, text(error))
        default: return .problem(.badFrame, "dlib: \(text(error))")
        }
    }
}

func text(_ buffer: [CChar]) -> String {
    buffer.withUnsafeBufferPointer { p in
        p.baseAddress.flatMap { CString.text($0, maximumLength: p.count) } ?? ""
    }
}

/// One open camera and the models. Every request runs to completion before the next is read.
final class FaceSession {
    let peer: Int32
    let send: (FaceResponse) -> Void
    let warn: (String) -> Void
    private var camera: OpaquePointer?
    private var engine: Engine?
    private var jpeg: [UInt8] = []
    /// Least time between two frames looked at (a descriptor costs 50-300 ms of one core; a
    /// camera gives 30 frames a second, most of which would be the same face).
    static let frameIntervalMilliseconds: Int64 = 150
    /// Longest wait for one frame before the camera counts as stalled for that frame.
    static let frameWaitMilliseconds: Int64 = 1000

    init(peer: Int32, send: @escaping (FaceResponse) -> Void, warn: @escaping (String) -> Void) {
        self.peer = peer; self.send = send; self.warn = warn
    }

    func close() {
        if let camera { bu_camera_close(camera) }
        camera = nil
    }

    func open(camera path: String, simulated: Bool, allowRGB: Bool, models: String) {
        guard camera == nil else { return send(.failure(FaceFailure(.badRequest, "a camera is already open"))) }
        if engine == nil {
            switch Engine.load(models) {
            case .success(let e): engine = e
            case .failure(let f): return send(.failure(f))
            }
        }
        var opened: OpaquePointer?
        var info = bu_camera_info()
        var error = [CChar](repeating: 0, count: 256)
        let status = simulated
            ? bu_camera_open_simulated(path, &opened, &info, &error, error.count)
            : bu_camera_open_v4l2(path, allowRGB ? 1 : 0, &opened, &info, &error, error.count)
        guard status == BU_CAMERA_OK, let opened else {
            switch status {
            case BU_CAMERA_REFUSED: return send(.failure(FaceFailure(.notInfrared, text(error))))
            case BU_CAMERA_GONE: return send(.failure(FaceFailure(.noCamera, text(error))))
            default: return send(.failure(FaceFailure(.other, text(error))))
            }
        }
        camera = opened
        let description = withUnsafeBytes(of: info.driver) { d in withUnsafeBytes(of: info.card) { c in withUnsafeBytes(of: info.format) { f in
            CameraDescription(driver: cText(d), card: cText(c), path: path, format: cText(f), width: Int(info.width),
                              height: Int(info.height), greyscale: info.greyscale != 0)
        } } }
        send(.opened(description))
    }

    enum Look {
        case found(FaceDescriptor, faces: Int)
        case nothing(FrameProblem)
        case gone(String)
        case peerGone
    }

    /// Waits for the next frame (at most `frameWaitMilliseconds`, never past `deadline`) and
    /// looks for a face in it. A peer that went away (EOF, or a `close` sent while we look) ends it.
    func look(until deadline: Int64) -> Look {
        guard let camera, let engine else { return .gone("no camera is open") }
        if peerClosedOrSpoke() { return .peerGone }
        let wait = min(FaceSession.frameWaitMilliseconds, max(0, deadline &- monotonicMilliseconds()))
        var frame = bu_frame()
        var error = [CChar](repeating: 0, count: 256)
        switch bu_camera_capture(camera, Int32(wait), &frame, &error, error.count) {
        case BU_CAMERA_OK: break
        case BU_CAMERA_TIMEOUT: return .nothing(.stalled)
        case BU_CAMERA_GONE: return .gone(text(error))
        default: return .gone(text(error))
        }
        switch frame.kind {
        case BU_FRAME_GREY:
            guard let pixels = frame.pixels, frame.height > 0,
                  frame.length >= Int(frame.stride) * Int(frame.height - 1) + Int(frame.width) else {
                warn("a frame shorter than its size")
                return .nothing(.badFrame)
            }
            return result(engine.describe(pixels, width: Int(frame.width), height: Int(frame.height), stride: Int(frame.stride)))
        case BU_FRAME_JPEG:
            guard let pixels = frame.pixels else { return .nothing(.badFrame) }
            if jpeg.isEmpty { jpeg = [UInt8](repeating: 0, count: Int(BU_CAMERA_MAX_SIDE) * 2048) }
            var w: Int32 = 0, h: Int32 = 0
            let decoded = jpeg.withUnsafeMutableBufferPointer { out in
                bu_face_decode_jpeg(pixels, frame.length, out.baseAddress, out.count, &w, &h, &error, error.count)
            }
            guard decoded == 0 else {
                warn("an MJPEG frame that does not decode: \(text(error))")
                return .nothing(.badFrame)
            }
            return jpeg.withUnsafeBufferPointer { p in
                guard let base = p.baseAddress else { return .nothing(.badFrame) }
                return result(engine.describe(base, width: Int(w), height: Int(h), stride: Int(w)))
            }
        default:
            let problem = withUnsafeBytes(of: frame.problem) { cText($0) }
            warn("a frame that cannot be used: \(problem)")
            return .nothing(.badFrame)
        }
    }

    private func result(_ found: Engine.Found) -> Look {
        switch found {
        case .face(let d, let faces): return .found(d, faces: faces)
        case .problem(let p, let detail):
            if let detail { warn("frame not used: \(detail)") }
            return .nothing(p)
        }
    }

    /// Whether the spawner closed its end, or sent something (it sends nothing while a request
    /// runs, but `close`): either way the request in progress stops.
    private func peerClosedOrSpoke() -> Bool {
        guard let events = try? Poll.wait(FileDescriptor(rawValue: peer), for: .readable, until: Deadline(milliseconds: 0)) else { return false }
        return !events.isEmpty
    }

    /// Sleeps until `next` (monotonic ms), waking early when the peer speaks or goes.
    private func pace(until next: Int64) {
        let wait = next &- monotonicMilliseconds()
        guard wait > 0 else { return }
        _ = try? Poll.wait(FileDescriptor(rawValue: peer), for: .readable, until: Deadline(milliseconds: next))
    }

    // MARK: verify

    func verify(descriptors: [FaceDescriptor], thresholdMilli: Int, attemptFrames: Int, timeoutMilliseconds: UInt32) {
        guard camera != nil else { return send(.failure(FaceFailure(.notOpen, "no camera is open"))) }
        guard !descriptors.isEmpty else { return send(.failure(FaceFailure(.badRequest, "no face to compare with"))) }
        let deadline = monotonicMilliseconds() &+ Int64(timeoutMilliseconds)
        let threshold = Double(thresholdMilli) / 1000
        var seen = 0
        var nearest = Double.infinity
        var last: FrameProblem = .noFace
        while monotonicMilliseconds() < deadline {
            let started = monotonicMilliseconds()
            switch look(until: deadline) {
            case .peerGone: return
            case .gone(let why): return send(.failure(FaceFailure(.noCamera, why)))
            case .nothing(let problem): last = problem
            case .found(let face, _):
                var best = Double.infinity
                var index = 0
                for (i, d) in descriptors.enumerated() {
                    let distance = face.distance(to: d)
                    if distance < best { best = distance; index = i }
                }
                if best <= threshold {
                    return send(.verified(.match(index: index, distanceMilli: Int(best * 1000))))
                }
                seen += 1
                nearest = min(nearest, best)
                if seen >= attemptFrames {
                    return send(.verified(.noMatch(distanceMilli: Int(min(nearest, 100) * 1000))))
                }
            }
            pace(until: started &+ FaceSession.frameIntervalMilliseconds)
        }
        send(.verified(.timedOut(last)))
    }

    // MARK: enrol

    func enrol(frames: Int, thresholdMilli: Int, timeoutMilliseconds: UInt32) {
        guard camera != nil else { return send(.failure(FaceFailure(.notOpen, "no camera is open"))) }
        let deadline = monotonicMilliseconds() &+ Int64(timeoutMilliseconds)
        let threshold = Double(thresholdMilli) / 1000
        var taken: [FaceDescriptor] = []
        var lastRetry: FrameProblem = .none
        while taken.count < frames {
            guard monotonicMilliseconds() < deadline else {
                return send(.failure(FaceFailure(.timedOut, "no face in time (\(taken.count)/\(frames) frames taken)")))
            }
            let started = monotonicMilliseconds()
            switch look(until: deadline) {
            case .peerGone: return
            case .gone(let why): return send(.failure(FaceFailure(.noCamera, why)))
            case .nothing(let problem):
                // One event per change of reason, not one per frame.
                if problem != lastRetry { send(.enrolRetry(problem)) }
                lastRetry = problem
            case .found(let face, let faces):
                // One face in view, and the same one throughout: another face (or two in view)
                // would make a template that matches someone else.
                if faces > 1 || (taken.first.map { face.distance(to: $0) > threshold } ?? false) {
                    if lastRetry != .otherFace { send(.enrolRetry(.otherFace)) }
                    lastRetry = .otherFace
                } else {
                    taken.append(face)
                    lastRetry = .none
                    send(.enrolFrame(done: taken.count, total: frames))
                }
            }
            // Frames a little apart, so that they differ a little.
            pace(until: started &+ 2 * FaceSession.frameIntervalMilliseconds)
        }
        send(.enrolled(taken))
    }
}

/// A NUL-terminated C char array (a struct field) as text.
func cText(_ raw: UnsafeRawBufferPointer) -> String {
    let bytes = raw.prefix { $0 != 0 }
    return String(decoding: bytes, as: UTF8.self)
}
