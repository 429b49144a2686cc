/// The protocol between biounlock (the PAM module or the CLI) and its fingerprint helpers:
/// `biounlock-fprint`, the process that alone loads libfprint-2, and `biounlock-fprintd`,
/// fprintd's client.
///
/// Transport: one AF_UNIX stream socket (a socketpair; fd 3 in the helper). Each message is one
/// frame: a 4-byte big-endian length, then the payload `[version][tag][fields…]`. Integers are
/// big-endian; byte strings and text are length-prefixed; every length is bounded (below) and
/// checked on reading. A frame of another version, an unknown tag, trailing bytes or any bound
/// exceeded makes the whole message invalid: the reader drops the connection.
///
/// Conversation: the helper speaks first (`hello`). Then strictly one request at a time; each
/// request gets zero or more events (`enrolStage`, `enrolRetry`, `printRejected`) and exactly
/// one final response (its result or `failure`). `close` (or EOF) ends the helper.
///
/// Two families of requests: `enumerate`/`open`/`enrol`/`verify`/`delete` drive libfprint
/// directly (sensor=libfprint); the `fprintd*` requests talk to the fprintd daemon over D-Bus
/// (sensor=fprintd), which keeps the prints itself. Each family has its own helper program, which
/// answers the other family's requests with `badRequest`.
public enum FprintProtocol {
    /// Bumped on any incompatible change; both sides refuse a peer with another version.
    public static let version: UInt8 = 1
    /// Largest frame either side accepts. A request carries at most `maximumPrints` prints.
    public static let maximumFrameLength = 4 * 1024 * 1024
    /// Largest serialized print accepted (real FP3 prints are a few KiB to a few tens of KiB).
    public static let maximumPrintLength = 256 * 1024
    /// Most prints in one verify request (a user has at most one per finger).
    public static let maximumPrints = 10
    /// Longest text field (driver names, ids, error messages).
    public static let maximumStringLength = 1024
    /// Most readers reported by `enumerate`.
    public static let maximumDevices = 32
    /// The file descriptor on which the helper finds its end of the socket.
    public static let helperDescriptor: Int32 = 3
}

/// A reader's identity as libfprint reports it (driver name, device id), also stored with each print.
public struct ReaderRef: Equatable, Sendable {
    public var driver: String
    public var device: String
    public init(driver: String, device: String) { self.driver = driver; self.device = device }

    /// Whether `fprint_device=` / `--device` names this reader: its driver, its device id, or both
    /// as "driver/id". The one rule: the helper applies it when it opens a reader, the CLI when it
    /// filters `biounlock sensors` for `enable` (through ReaderInfo.matches).
    public func matches(_ selector: String) -> Bool {
        driver == selector || device == selector || "\(driver)/\(device)" == selector
    }
}

/// What a reader can do. Our own stable bits, translated from libfprint's FpDeviceFeature by the helper.
public struct ReaderFeatures: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let capture = ReaderFeatures(rawValue: 1 << 0)
    public static let identify = ReaderFeatures(rawValue: 1 << 1)
    public static let verify = ReaderFeatures(rawValue: 1 << 2)
    public static let storage = ReaderFeatures(rawValue: 1 << 3)
    public static let storageList = ReaderFeatures(rawValue: 1 << 4)
    public static let storageDelete = ReaderFeatures(rawValue: 1 << 5)
    public static let storageClear = ReaderFeatures(rawValue: 1 << 6)
    public static let duplicatesCheck = ReaderFeatures(rawValue: 1 << 7)

    /// Names in a fixed order, for `biounlock sensors`.
    public static let names: [(ReaderFeatures, String)] = [
        (.verify, "verify"), (.identify, "identify"), (.capture, "capture"), (.storage, "storage"),
        (.storageList, "storage-list"), (.storageDelete, "storage-delete"), (.storageClear, "storage-clear"),
        (.duplicatesCheck, "duplicates-check"),
    ]

    public var names: [String] { ReaderFeatures.names.filter { contains($0.0) }.map(\.1) }
}

/// One reader found by the helper.
public struct ReaderDescription: Equatable, Sendable {
    public var driver: String
    public var device: String
    public var name: String
    public var enrolStages: Int
    public var features: ReaderFeatures
    /// "press" or "swipe".
    public var scanType: String

    public init(driver: String, device: String, name: String, enrolStages: Int, features: ReaderFeatures, scanType: String) {
        self.driver = driver; self.device = device; self.name = name
        self.enrolStages = enrolStages; self.features = features; self.scanType = scanType
    }

    public var ref: ReaderRef { ReaderRef(driver: driver, device: device) }
}

/// One fprintd device as the helper saw it over D-Bus, with the user's fingers on it.
public struct FprintdReader: Equatable, Sendable {
    /// The device's D-Bus object path (`/net/reactivated/Fprint/Device/N`).
    public var path: String
    /// fprintd's `name` property (the driver's product name).
    public var name: String
    /// "press" or "swipe".
    public var scanType: String
    /// Touches one enrolment takes; fprintd knows it only while the device is claimed (0 otherwise).
    public var enrolStages: Int
    /// The user's enrolled fingers on this device (libfprint finger numbers, 1 = left thumb … 10 =
    /// right little), in fprintd's order; at most 10.
    public var fingers: [UInt8]

    public init(path: String, name: String, scanType: String, enrolStages: Int, fingers: [UInt8]) {
        self.path = path; self.name = name; self.scanType = scanType; self.enrolStages = enrolStages; self.fingers = fingers
    }

    /// The last element of the object path ("0" for /net/reactivated/Fprint/Device/0).
    public var shortName: String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// What an fprintd device is claimed for: verification picks the device holding the user's
/// prints; enrolment and deletion the one the selector names, else fprintd's default device.
public enum FprintdPurpose: UInt8, Equatable, Sendable {
    case verify = 1
    case enrol = 2
}

public enum FprintRequest: Equatable, Sendable {
    /// List the readers (does not open them).
    case enumerate
    /// Open one reader: `selector` names it (driver, device id, or "driver/id"); when empty, the
    /// first reader in `preferred` that is present, else the first reader.
    case open(selector: String, preferred: [ReaderRef])
    /// Enrol a finger (libfprint's FpFinger number) on the open reader.
    case enrol(finger: UInt8, timeoutMilliseconds: UInt32)
    /// One touch, compared with `prints` (serialized FP3 prints).
    case verify(prints: [[UInt8]], timeoutMilliseconds: UInt32)
    /// Delete a print from the open reader's own storage.
    case delete(print: [UInt8])
    /// Close the reader (fprintd: stop what runs and release the device) and exit.
    case close

    /// fprintd: the devices and, for each, the fingers `user` has enrolled on it. Nothing is
    /// claimed. `bus` is the D-Bus address (`unix:path=...`), never taken from the environment.
    case fprintdList(bus: String, user: String)
    /// fprintd: claims a device for `user` (see FprintdPurpose; `selector` names a device by its
    /// object path or its last element). Answered by `fprintdClaimed`; for a verification, the
    /// device is verifying by then (`close` stops it when no `fprintdVerify` follows).
    case fprintdClaim(bus: String, user: String, selector: String, purpose: FprintdPurpose)
    /// fprintd: waits for one touch on the claimed device (VerifyStart "any" on first use, then
    /// the same verification goes on after a retry). `verified(.match(index:))` carries the
    /// matched finger's number, 0 when fprintd did not say which. A match ends the helper's use
    /// of the device: it is being released already, and only `close` follows.
    case fprintdVerify(timeoutMilliseconds: UInt32)
    /// fprintd: enrols a finger (libfprint number) on the claimed device; answered by
    /// `enrolStage`/`enrolRetry` events and `fprintdEnrolled`.
    case fprintdEnrol(finger: UInt8, timeoutMilliseconds: UInt32)
    /// fprintd: deletes one finger (0: every finger) of the claimed device's user; `deleted`.
    case fprintdDelete(finger: UInt8)
}

/// Why a print was not used.
public enum PrintProblem: UInt8, Error, Equatable, Sendable, CustomStringConvertible {
    /// Three bytes or fewer (libfprint would abort the process on it).
    case truncated = 1
    /// Does not start with libfprint's `FP3` magic: not a libfprint print.
    case notFP3 = 2
    /// Larger than `FprintProtocol.maximumPrintLength`.
    case tooLarge = 3
    /// libfprint could not read it (corrupt).
    case unreadable = 4
    /// Taken on another reader (fp_print_compatible said no).
    case otherReader = 5

    public var description: String {
        switch self {
        case .truncated: return "truncated"
        case .notFP3: return "not a libfprint print"
        case .tooLarge: return "too large"
        case .unreadable: return "corrupt (libfprint cannot read it)"
        case .otherReader: return "taken on another reader"
        }
    }

    /// The problem with `bytes` that can be seen without libfprint, or nil.
    /// fp_print_deserialize asserts a length over 3 (aborting on less), so this runs first, always.
    public static func check(_ bytes: [UInt8]) -> PrintProblem? {
        if bytes.count <= 3 { return .truncated }
        if bytes.count > FprintProtocol.maximumPrintLength { return .tooLarge }
        if bytes[0] != UInt8(ascii: "F") || bytes[1] != UInt8(ascii: "P") || bytes[2] != UInt8(ascii: "3") { return .notFP3 }
        return nil
    }
}

public enum VerifyOutcome: Equatable, Sendable {
    /// The touch matched the print at this index of the request.
    case match(index: Int)
    case noMatch
    /// The reader wants another touch (libfprint's FpDeviceRetry code).
    case retry(code: Int)
    /// No touch before the request's timeout.
    case timedOut
}

public struct FprintFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: UInt8, Sendable {
        /// No reader present (or none matching the selector).
        case noReader = 1
        /// Several readers match the selector.
        case ambiguous = 2
        /// A request that needs an open reader came first.
        case notOpen = 3
        /// libfprint reported an error (domain and code below).
        case device = 4
        /// No touch before the timeout (enrolment).
        case timedOut = 5
        /// The request was malformed or not allowed now.
        case badRequest = 6
        /// None of the prints can be used on this reader.
        case noUsablePrint = 7
        /// Anything else.
        case other = 8
    }

    /// The GError domain a libfprint error came from.
    public enum Domain: UInt8, Sendable {
        case none = 0, device = 1, retry = 2, io = 3, other = 4
    }

    public var kind: Kind
    public var domain: Domain
    public var code: Int32
    /// Human-readable detail (libfprint's message or ours), never a template or secret.
    public var message: String

    public init(_ kind: Kind, domain: Domain = .none, code: Int32 = 0, _ message: String) {
        self.kind = kind; self.domain = domain; self.code = code; self.message = message
    }

    public var description: String {
        switch domain {
        case .none: return message
        case .device: return "\(message) (device error \(code))"
        case .retry: return "\(message) (retry \(code))"
        case .io: return "\(message) (I/O error \(code))"
        case .other: return "\(message) (error \(code))"
        }
    }
}

public enum FprintResponse: Equatable, Sendable {
    /// First frame from the helper: it runs and speaks this protocol version.
    case hello
    case devices([ReaderDescription])
    case opened(ReaderDescription)
    /// Enrolment progress: `done` of `total` stages.
    case enrolStage(done: Int, total: Int)
    /// Enrolment asked for another touch (FpDeviceRetry code).
    case enrolRetry(code: Int)
    case enrolled(print: [UInt8])
    /// The print at `index` of the verify request was not used.
    case printRejected(index: Int, problem: PrintProblem)
    case verified(VerifyOutcome)
    case deleted
    case closed
    case failure(FprintFailure)
    /// fprintd: the devices (`fprintdList`).
    case fprintdReaders([FprintdReader])
    /// fprintd: the device claimed, with the user's fingers and its enrolment stages.
    case fprintdClaimed(FprintdReader)
    /// fprintd: the finger was enrolled (fprintd stored it).
    case fprintdEnrolled

    /// Whether this ends the current request (events do not).
    public var isFinal: Bool {
        switch self {
        case .enrolStage, .enrolRetry, .printRejected: return false
        default: return true
        }
    }
}
