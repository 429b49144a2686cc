import BiounlockFprintProtocol

/// The protocol between biounlock (the PAM module or the CLI) and `biounlock-face`, the helper
/// process that alone loads dlib and a BLAS and reads the camera.
///
/// Transport and framing are the fingerprint helper's (BiounlockFprintProtocol: a socketpair,
/// fd 3 in the helper, 4-byte big-endian lengths, `WireWriter`/`WireReader`); the payloads are
/// `[version][tag][fields…]` with tags of their own. A frame of another version, an unknown tag,
/// trailing bytes or any bound exceeded makes the message invalid and the connection is dropped.
///
/// Conversation: the helper speaks first (`hello`). Then one request at a time; an enrolment
/// gets `enrolFrame`/`enrolRetry` events before its final answer; every request gets exactly
/// one final response (its result or `failure`). `close` (or EOF) ends the helper.
///
/// No image ever crosses this socket: the helper reads the camera itself and sends back
/// descriptors (128 floats) and decisions.
public enum FaceProtocol {
    public static let version: UInt8 = 1
    /// Largest frame either side accepts (a verify carries at most `maximumDescriptors`).
    public static let maximumFrameLength = 64 * 1024
    /// Floats in one descriptor (dlib's ResNet face descriptor).
    public static let descriptorLength = 128
    /// Most descriptors in one verify request or one enrolment.
    public static let maximumDescriptors = 32
    /// Most frames one enrolment takes.
    public static let maximumEnrolFrames = 16
    public static let maximumStringLength = FprintProtocol.maximumStringLength
}

/// One face descriptor: 128 floats, finite.
public struct FaceDescriptor: Equatable, Sendable {
    public let values: [Float]

    public init?(_ values: [Float]) {
        guard values.count == FaceProtocol.descriptorLength, values.allSatisfy(\.isFinite) else { return nil }
        self.values = values
    }

    /// Euclidean distance (dlib's measure: two images of one person are usually under 0.6).
    public func distance(to other: FaceDescriptor) -> Double {
        var sum = 0.0
        for i in 0..<FaceProtocol.descriptorLength {
            let d = Double(values[i]) - Double(other.values[i])
            sum += d * d
        }
        return sum.squareRoot()
    }

    func write(_ w: inout WireWriter) {
        for v in values { w.u32(v.bitPattern) }
    }

    static func read(_ r: inout WireReader) -> FaceDescriptor? {
        var values: [Float] = []
        values.reserveCapacity(FaceProtocol.descriptorLength)
        for _ in 0..<FaceProtocol.descriptorLength {
            guard let bits = r.u32() else { return nil }
            values.append(Float(bitPattern: bits))
        }
        return FaceDescriptor(values)
    }
}

/// A user's enrolled face as the store keeps it (`templates.data` of a row with sensor `face`):
/// the magic `BUF1`, a count, then that many descriptors as big-endian float bits.
public enum FaceTemplateData {
    static let magic: [UInt8] = Array("BUF1".utf8)

    public static func encode(_ descriptors: [FaceDescriptor]) -> [UInt8] {
        var w = WireWriter()
        for b in magic { w.u8(b) }
        let bounded = descriptors.prefix(FaceProtocol.maximumDescriptors)
        w.u8(UInt8(bounded.count))
        for d in bounded { d.write(&w) }
        return w.bytes
    }

    /// nil for anything but a whole, well-formed template (never a partial one).
    public static func decode(_ bytes: [UInt8]) -> [FaceDescriptor]? {
        var r = WireReader(bytes)
        for b in magic { guard r.u8() == b else { return nil } }
        guard let n = r.u8(), n >= 1, Int(n) <= FaceProtocol.maximumDescriptors else { return nil }
        var out: [FaceDescriptor] = []
        for _ in 0..<n {
            guard let d = FaceDescriptor.read(&r) else { return nil }
            out.append(d)
        }
        return r.isAtEnd ? out : nil
    }
}

/// What the helper found about the open camera.
public struct CameraDescription: Equatable, Sendable {
    /// V4L2's driver name ("uvcvideo"), or "simulated".
    public var driver: String
    /// V4L2's card name (the camera's product name).
    public var card: String
    /// The device path, or the simulated camera's socket.
    public var path: String
    /// The pixel format in use ("GREY", "Y16 ", "YUYV", "MJPG", "SIM").
    public var format: String
    public var width: Int
    public var height: Int
    /// Greyscale frames: an infrared camera. A colour camera is used only with face_allow_rgb=yes.
    public var greyscale: Bool

    public init(driver: String, card: String, path: String, format: String, width: Int, height: Int, greyscale: Bool) {
        self.driver = driver; self.card = card; self.path = path; self.format = format
        self.width = width; self.height = height; self.greyscale = greyscale
    }

    func write(_ w: inout WireWriter) {
        w.string(driver); w.string(card); w.string(path); w.string(format)
        w.u32(UInt32(clamping: width)); w.u32(UInt32(clamping: height)); w.u8(greyscale ? 1 : 0)
    }

    static func read(_ r: inout WireReader) -> CameraDescription? {
        guard let driver = r.string(), let card = r.string(), let path = r.string(), let format = r.string(),
              let w = r.u32(), let h = r.u32(), w <= 65536, h <= 65536, let grey = r.u8(), grey <= 1 else { return nil }
        return CameraDescription(driver: driver, card: card, path: path, format: format, width: Int(w), height: Int(h), greyscale: grey == 1)
    }
}

/// Why a frame gave no usable face (enrolment retries; the last reason of a verify that ran out of time).
public enum FrameProblem: UInt8, Equatable, Sendable, CustomStringConvertible {
    case none = 0
    case noFace = 1
    /// The frame is (nearly) black: a covered lens, or an infrared emitter that is off.
    case dark = 2
    /// The frame could not be used (short, damaged, wrong size or format).
    case badFrame = 3
    /// The camera gave no frame in time.
    case stalled = 4
    /// Enrolment: this frame's face is not the one the enrolment started with.
    case otherFace = 5

    public var description: String {
        switch self {
        case .none: return "no problem"
        case .noFace: return "no face in view"
        case .dark: return "dark frames"
        case .badFrame: return "frames that cannot be used"
        case .stalled: return "no frames from the camera"
        case .otherFace: return "another face"
        }
    }
}

public enum FaceRequest: Equatable, Sendable {
    /// Opens the camera and loads the models. `camera` is a V4L2 device path, or with
    /// `simulated` the simulated camera's control socket; `models` the directory with the two
    /// model files (root-owned, checked by the helper).
    case open(camera: String, simulated: Bool, allowRGB: Bool, models: String)
    /// Takes `frames` frames with one face each; answered by events and `enrolled`.
    case enrol(frames: Int, thresholdMilli: Int, timeoutMilliseconds: UInt32)
    /// Looks for a face within `thresholdMilli`/1000 of one of `descriptors` until the timeout;
    /// a face seen in `attemptFrames` frames without a match ends it as `noMatch`.
    case verify(descriptors: [FaceDescriptor], thresholdMilli: Int, attemptFrames: Int, timeoutMilliseconds: UInt32)
    /// Closes the camera and exits.
    case close
}

public enum FaceOutcome: Equatable, Sendable {
    /// A face within the threshold of the descriptor at `index`.
    case match(index: Int, distanceMilli: Int)
    /// A face was seen in `attemptFrames` frames and none matched (the nearest, for the log).
    case noMatch(distanceMilli: Int)
    /// No decision before the timeout, and the last reason there was none.
    case timedOut(FrameProblem)
}

public struct FaceFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: UInt8, Sendable {
        /// The camera is missing or went away (unplugged).
        case noCamera = 1
        /// The camera offers no greyscale format and face_allow_rgb is off.
        case notInfrared = 2
        /// The models are missing, untrusted or damaged.
        case models = 3
        case notOpen = 4
        case badRequest = 5
        case timedOut = 6
        case other = 7
    }

    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
    public var description: String { message }
}

public enum FaceResponse: Equatable, Sendable {
    case hello
    case opened(CameraDescription)
    /// Enrolment progress: `done` of `total` frames.
    case enrolFrame(done: Int, total: Int)
    /// A frame did not count, and why.
    case enrolRetry(FrameProblem)
    case enrolled([FaceDescriptor])
    case verified(FaceOutcome)
    case closed
    case failure(FaceFailure)

    public var isFinal: Bool {
        switch self {
        case .enrolFrame, .enrolRetry: return false
        default: return true
        }
    }

    public var label: String {
        switch self {
        case .hello: return "hello"
        case .opened: return "opened"
        case .enrolFrame: return "enrolFrame"
        case .enrolRetry: return "enrolRetry"
        case .enrolled: return "enrolled"
        case .verified: return "verified"
        case .closed: return "closed"
        case .failure: return "failure"
        }
    }
}

// MARK: encoding

enum FaceRequestTag: UInt8 { case open = 1, enrol, verify, close }
enum FaceResponseTag: UInt8 { case hello = 100, opened, enrolFrame, enrolRetry, enrolled, verified, closed, failure }
enum FaceOutcomeTag: UInt8 { case match = 1, noMatch, timedOut }

extension FaceRequest {
    public var payload: [UInt8] {
        var w = WireWriter()
        w.u8(FaceProtocol.version)
        switch self {
        case .open(let camera, let simulated, let allowRGB, let models):
            w.u8(FaceRequestTag.open.rawValue)
            w.string(camera); w.u8(simulated ? 1 : 0); w.u8(allowRGB ? 1 : 0); w.string(models)
        case .enrol(let frames, let threshold, let timeout):
            w.u8(FaceRequestTag.enrol.rawValue)
            w.u8(UInt8(clamping: frames)); w.u32(UInt32(clamping: threshold)); w.u32(timeout)
        case .verify(let descriptors, let threshold, let attemptFrames, let timeout):
            w.u8(FaceRequestTag.verify.rawValue)
            w.u32(UInt32(clamping: threshold)); w.u8(UInt8(clamping: attemptFrames)); w.u32(timeout)
            let bounded = descriptors.prefix(FaceProtocol.maximumDescriptors)
            w.u8(UInt8(bounded.count))
            for d in bounded { d.write(&w) }
        case .close:
            w.u8(FaceRequestTag.close.rawValue)
        }
        return w.bytes
    }

    public init?(payload: [UInt8]) {
        var r = WireReader(payload)
        guard r.u8() == FaceProtocol.version, let tag = r.u8().flatMap(FaceRequestTag.init(rawValue:)) else { return nil }
        switch tag {
        case .open:
            guard let camera = r.string(), let simulated = r.u8(), simulated <= 1, let rgb = r.u8(), rgb <= 1,
                  let models = r.string() else { return nil }
            self = .open(camera: camera, simulated: simulated == 1, allowRGB: rgb == 1, models: models)
        case .enrol:
            guard let frames = r.u8(), frames >= 1, Int(frames) <= FaceProtocol.maximumEnrolFrames,
                  let threshold = r.u32(), threshold <= 2000, let timeout = r.u32() else { return nil }
            self = .enrol(frames: Int(frames), thresholdMilli: Int(threshold), timeoutMilliseconds: timeout)
        case .verify:
            guard let threshold = r.u32(), threshold <= 2000, let attempt = r.u8(), attempt >= 1,
                  let timeout = r.u32(), let n = r.u8(), Int(n) <= FaceProtocol.maximumDescriptors else { return nil }
            var descriptors: [FaceDescriptor] = []
            for _ in 0..<n {
                guard let d = FaceDescriptor.read(&r) else { return nil }
                descriptors.append(d)
            }
            self = .verify(descriptors: descriptors, thresholdMilli: Int(threshold), attemptFrames: Int(attempt), timeoutMilliseconds: timeout)
        case .close:
            self = .close
        }
        guard r.isAtEnd else { return nil }
    }
}

extension FaceResponse {
    public var payload: [UInt8] {
        var w = WireWriter()
        w.u8(FaceProtocol.version)
        switch self {
        case .hello:
            w.u8(FaceResponseTag.hello.rawValue)
        case .opened(let camera):
            w.u8(FaceResponseTag.opened.rawValue)
            camera.write(&w)
        case .enrolFrame(let done, let total):
            w.u8(FaceResponseTag.enrolFrame.rawValue)
            w.u8(UInt8(clamping: done)); w.u8(UInt8(clamping: total))
        case .enrolRetry(let problem):
            w.u8(FaceResponseTag.enrolRetry.rawValue)
            w.u8(problem.rawValue)
        case .enrolled(let descriptors):
            w.u8(FaceResponseTag.enrolled.rawValue)
            let bounded = descriptors.prefix(FaceProtocol.maximumDescriptors)
            w.u8(UInt8(bounded.count))
            for d in bounded { d.write(&w) }
        case .verified(let outcome):
            w.u8(FaceResponseTag.verified.rawValue)
            switch outcome {
            case .match(let index, let distance):
                w.u8(FaceOutcomeTag.match.rawValue); w.u8(UInt8(clamping: index)); w.u32(UInt32(clamping: distance))
            case .noMatch(let distance):
                w.u8(FaceOutcomeTag.noMatch.rawValue); w.u8(0); w.u32(UInt32(clamping: distance))
            case .timedOut(let problem):
                w.u8(FaceOutcomeTag.timedOut.rawValue); w.u8(problem.rawValue); w.u32(0)
            }
        case .closed:
            w.u8(FaceResponseTag.closed.rawValue)
        case .failure(let f):
            w.u8(FaceResponseTag.failure.rawValue)
            w.u8(f.kind.rawValue); w.string(f.message)
        }
        return w.bytes
    }

    public init?(payload: [UInt8]) {
        var r = WireReader(payload)
        guard r.u8() == FaceProtocol.version, let tag = r.u8().flatMap(FaceResponseTag.init(rawValue:)) else { return nil }
        switch tag {
        case .hello:
            self = .hello
        case .opened:
            guard let camera = CameraDescription.read(&r) else { return nil }
            self = .opened(camera)
        case .enrolFrame:
            guard let done = r.u8(), let total = r.u8(), done <= total, Int(total) <= FaceProtocol.maximumEnrolFrames else { return nil }
            self = .enrolFrame(done: Int(done), total: Int(total))
        case .enrolRetry:
            guard let problem = r.u8().flatMap(FrameProblem.init(rawValue:)) else { return nil }
            self = .enrolRetry(problem)
        case .enrolled:
            guard let n = r.u8(), n >= 1, Int(n) <= FaceProtocol.maximumDescriptors else { return nil }
            var descriptors: [FaceDescriptor] = []
            for _ in 0..<n {
                guard let d = FaceDescriptor.read(&r) else { return nil }
                descriptors.append(d)
            }
            self = .enrolled(descriptors)
        case .verified:
            guard let kind = r.u8().flatMap(FaceOutcomeTag.init(rawValue:)), let small = r.u8(), let value = r.u32(),
                  value <= 100_000 else { return nil }
            switch kind {
            case .match:
                guard Int(small) < FaceProtocol.maximumDescriptors else { return nil }
                self = .verified(.match(index: Int(small), distanceMilli: Int(value)))
            case .noMatch:
                guard small == 0 else { return nil }
                self = .verified(.noMatch(distanceMilli: Int(value)))
            case .timedOut:
                guard let problem = FrameProblem(rawValue: small), value == 0 else { return nil }
                self = .verified(.timedOut(problem))
            }
        case .closed:
            self = .closed
        case .failure:
            guard let kind = r.u8().flatMap(FaceFailure.Kind.init(rawValue:)), let message = r.string() else { return nil }
            self = .failure(FaceFailure(kind, message))
        }
        guard r.isAtEnd else { return nil }
    }
}
