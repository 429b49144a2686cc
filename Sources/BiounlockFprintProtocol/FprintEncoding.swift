/// The wire form of FprintMessages.swift's requests and responses (Wire.swift's primitives): tags,
/// encode, and decode that refuses anything malformed or out of range instead of trapping.
enum RequestTag: UInt8 {
    case enumerate = 1, open = 2, enrol = 3, verify = 4, delete = 5, close = 6
    case fprintdList = 20, fprintdClaim, fprintdVerify, fprintdEnrol, fprintdDelete
}

enum ResponseTag: UInt8 {
    case hello = 100, devices, opened, enrolStage, enrolRetry, enrolled, printRejected, verified, deleted, closed, failure
    case fprintdReaders = 120, fprintdClaimed, fprintdEnrolled
}

enum OutcomeTag: UInt8 {
    case match = 1, noMatch, retry, timedOut
}

extension FprintRequest {
    /// The payload (without the frame's length prefix).
    public var payload: [UInt8] {
        var w = WireWriter()
        w.u8(FprintProtocol.version)
        switch self {
        case .enumerate:
            w.u8(RequestTag.enumerate.rawValue)
        case .open(let selector, let preferred):
            w.u8(RequestTag.open.rawValue)
            w.string(selector)
            w.u32(UInt32(clamping: min(preferred.count, FprintProtocol.maximumPrints)))
            for r in preferred.prefix(FprintProtocol.maximumPrints) { w.string(r.driver); w.string(r.device) }
        case .enrol(let finger, let timeout):
            w.u8(RequestTag.enrol.rawValue)
            w.u8(finger)
            w.u32(timeout)
        case .verify(let prints, let timeout):
            w.u8(RequestTag.verify.rawValue)
            w.u32(timeout)
            w.u32(UInt32(clamping: prints.count))
            for p in prints { w.data(p) }
        case .delete(let print):
            w.u8(RequestTag.delete.rawValue)
            w.data(print)
        case .close:
            w.u8(RequestTag.close.rawValue)
        case .fprintdList(let bus, let user):
            w.u8(RequestTag.fprintdList.rawValue)
            w.string(bus); w.string(user)
        case .fprintdClaim(let bus, let user, let selector, let purpose):
            w.u8(RequestTag.fprintdClaim.rawValue)
            w.string(bus); w.string(user); w.string(selector); w.u8(purpose.rawValue)
        case .fprintdVerify(let timeout):
            w.u8(RequestTag.fprintdVerify.rawValue)
            w.u32(timeout)
        case .fprintdEnrol(let finger, let timeout):
            w.u8(RequestTag.fprintdEnrol.rawValue)
            w.u8(finger); w.u32(timeout)
        case .fprintdDelete(let finger):
            w.u8(RequestTag.fprintdDelete.rawValue)
            w.u8(finger)
        }
        return w.bytes
    }

    /// Parses a payload; nil for anything malformed, of another version, or over a limit.
    public init?(payload: [UInt8]) {
        var r = WireReader(payload)
        guard r.u8() == FprintProtocol.version, let tag = r.u8().flatMap(RequestTag.init(rawValue:)) else { return nil }
        switch tag {
        case .enumerate:
            self = .enumerate
        case .open:
            guard let selector = r.string(), let n = r.count(limit: FprintProtocol.maximumPrints) else { return nil }
            var preferred: [ReaderRef] = []
            for _ in 0..<n {
                guard let driver = r.string(), let device = r.string() else { return nil }
                preferred.append(ReaderRef(driver: driver, device: device))
            }
            self = .open(selector: selector, preferred: preferred)
        case .enrol:
            guard let finger = r.u8(), let timeout = r.u32() else { return nil }
            self = .enrol(finger: finger, timeoutMilliseconds: timeout)
        case .verify:
            guard let timeout = r.u32(), let n = r.count(limit: FprintProtocol.maximumPrints) else { return nil }
            var prints: [[UInt8]] = []
            for _ in 0..<n {
                // Oversized prints are refused here; short or foreign ones are reported per print.
                guard let p = r.data(limit: FprintProtocol.maximumPrintLength) else { return nil }
                prints.append(p)
            }
            self = .verify(prints: prints, timeoutMilliseconds: timeout)
        case .delete:
            guard let p = r.data(limit: FprintProtocol.maximumPrintLength) else { return nil }
            self = .delete(print: p)
        case .close:
            self = .close
        case .fprintdList:
            guard let bus = r.string(), let user = r.string() else { return nil }
            self = .fprintdList(bus: bus, user: user)
        case .fprintdClaim:
            guard let bus = r.string(), let user = r.string(), let selector = r.string(),
                  let purpose = r.u8().flatMap(FprintdPurpose.init(rawValue:)) else { return nil }
            self = .fprintdClaim(bus: bus, user: user, selector: selector, purpose: purpose)
        case .fprintdVerify:
            guard let timeout = r.u32() else { return nil }
            self = .fprintdVerify(timeoutMilliseconds: timeout)
        case .fprintdEnrol:
            guard let finger = r.u8(), let timeout = r.u32() else { return nil }
            self = .fprintdEnrol(finger: finger, timeoutMilliseconds: timeout)
        case .fprintdDelete:
            guard let finger = r.u8() else { return nil }
            self = .fprintdDelete(finger: finger)
        }
        guard r.isAtEnd else { return nil }
    }
}

extension ReaderDescription {
    func write(_ w: inout WireWriter) {
        w.string(driver); w.string(device); w.string(name)
        w.u32(UInt32(clamping: enrolStages)); w.u32(features.rawValue); w.string(scanType)
    }

    static func read(_ r: inout WireReader) -> ReaderDescription? {
        guard let driver = r.string(), let device = r.string(), let name = r.string(),
              let stages = r.u32(), let features = r.u32(), let scanType = r.string(),
              let enrolStages = Int(exactly: stages), enrolStages <= 1000 else { return nil }
        return ReaderDescription(driver: driver, device: device, name: name, enrolStages: enrolStages,
                                 features: ReaderFeatures(rawValue: features), scanType: scanType)
    }
}

extension FprintdReader {
    func write(_ w: inout WireWriter) {
        w.string(path); w.string(name); w.string(scanType); w.u32(UInt32(clamping: enrolStages))
        let fingers = self.fingers.prefix(FprintProtocol.maximumPrints)
        w.u32(UInt32(clamping: fingers.count))
        for f in fingers { w.u8(f) }
    }

    static func read(_ r: inout WireReader) -> FprintdReader? {
        guard let path = r.string(), let name = r.string(), let scanType = r.string(),
              let stages = r.u32().flatMap({ Int(exactly: $0) }), stages <= 1000,
              let n = r.count(limit: FprintProtocol.maximumPrints) else { return nil }
        var fingers: [UInt8] = []
        for _ in 0..<n {
            guard let f = r.u8() else { return nil }
            fingers.append(f)
        }
        return FprintdReader(path: path, name: name, scanType: scanType, enrolStages: stages, fingers: fingers)
    }
}

extension FprintResponse {
    public var payload: [UInt8] {
        var w = WireWriter()
        w.u8(FprintProtocol.version)
        switch self {
        case .hello:
            w.u8(ResponseTag.hello.rawValue)
        case .devices(let list):
            w.u8(ResponseTag.devices.rawValue)
            let bounded = list.prefix(FprintProtocol.maximumDevices)
            w.u32(UInt32(clamping: bounded.count))
            for d in bounded { d.write(&w) }
        case .opened(let d):
            w.u8(ResponseTag.opened.rawValue)
            d.write(&w)
        case .enrolStage(let done, let total):
            w.u8(ResponseTag.enrolStage.rawValue)
            w.u32(UInt32(clamping: done)); w.u32(UInt32(clamping: total))
        case .enrolRetry(let code):
            w.u8(ResponseTag.enrolRetry.rawValue)
            w.u32(UInt32(clamping: code))
        case .enrolled(let print):
            w.u8(ResponseTag.enrolled.rawValue)
            w.data(print)
        case .printRejected(let index, let problem):
            w.u8(ResponseTag.printRejected.rawValue)
            w.u32(UInt32(clamping: index)); w.u8(problem.rawValue)
        case .verified(let outcome):
            w.u8(ResponseTag.verified.rawValue)
            switch outcome {
            case .match(let index): w.u8(OutcomeTag.match.rawValue); w.u32(UInt32(clamping: index))
            case .noMatch: w.u8(OutcomeTag.noMatch.rawValue); w.u32(0)
            case .retry(let code): w.u8(OutcomeTag.retry.rawValue); w.u32(UInt32(clamping: code))
            case .timedOut: w.u8(OutcomeTag.timedOut.rawValue); w.u32(0)
            }
        case .deleted:
            w.u8(ResponseTag.deleted.rawValue)
        case .closed:
            w.u8(ResponseTag.closed.rawValue)
        case .failure(let f):
            w.u8(ResponseTag.failure.rawValue)
            w.u8(f.kind.rawValue); w.u8(f.domain.rawValue); w.i32(f.code); w.string(f.message)
        case .fprintdReaders(let list):
            w.u8(ResponseTag.fprintdReaders.rawValue)
            let bounded = list.prefix(FprintProtocol.maximumDevices)
            w.u32(UInt32(clamping: bounded.count))
            for d in bounded { d.write(&w) }
        case .fprintdClaimed(let d):
            w.u8(ResponseTag.fprintdClaimed.rawValue)
            d.write(&w)
        case .fprintdEnrolled:
            w.u8(ResponseTag.fprintdEnrolled.rawValue)
        }
        return w.bytes
    }

    public init?(payload: [UInt8]) {
        var r = WireReader(payload)
        guard r.u8() == FprintProtocol.version, let tag = r.u8().flatMap(ResponseTag.init(rawValue:)) else { return nil }
        switch tag {
        case .hello:
            self = .hello
        case .devices:
            guard let n = r.count(limit: FprintProtocol.maximumDevices) else { return nil }
            var list: [ReaderDescription] = []
            for _ in 0..<n {
                guard let d = ReaderDescription.read(&r) else { return nil }
                list.append(d)
            }
            self = .devices(list)
        case .opened:
            guard let d = ReaderDescription.read(&r) else { return nil }
            self = .opened(d)
        case .enrolStage:
            guard let done = r.u32().flatMap({ Int(exactly: $0) }), let total = r.u32().flatMap({ Int(exactly: $0) }) else { return nil }
            self = .enrolStage(done: done, total: total)
        case .enrolRetry:
            guard let code = r.u32().flatMap({ Int(exactly: $0) }) else { return nil }
            self = .enrolRetry(code: code)
        case .enrolled:
            guard let p = r.data(limit: FprintProtocol.maximumPrintLength) else { return nil }
            self = .enrolled(print: p)
        case .printRejected:
            guard let index = r.u32().flatMap({ Int(exactly: $0) }), let problem = r.u8().flatMap(PrintProblem.init(rawValue:)) else { return nil }
            self = .printRejected(index: index, problem: problem)
        case .verified:
            guard let outcome = r.u8().flatMap(OutcomeTag.init(rawValue:)), let value = r.u32().flatMap({ Int(exactly: $0) }) else { return nil }
            switch outcome {
            case .match: self = .verified(.match(index: value))
            case .noMatch: self = .verified(.noMatch)
            case .retry: self = .verified(.retry(code: value))
            case .timedOut: self = .verified(.timedOut)
            }
        case .deleted:
            self = .deleted
        case .closed:
            self = .closed
        case .failure:
            guard let kind = r.u8().flatMap(FprintFailure.Kind.init(rawValue:)),
                  let domain = r.u8().flatMap(FprintFailure.Domain.init(rawValue:)),
                  let code = r.i32(), let message = r.string() else { return nil }
            self = .failure(FprintFailure(kind, domain: domain, code: code, message))
        case .fprintdReaders:
            guard let n = r.count(limit: FprintProtocol.maximumDevices) else { return nil }
            var list: [FprintdReader] = []
            for _ in 0..<n {
                guard let d = FprintdReader.read(&r) else { return nil }
                list.append(d)
            }
            self = .fprintdReaders(list)
        case .fprintdClaimed:
            guard let d = FprintdReader.read(&r) else { return nil }
            self = .fprintdClaimed(d)
        case .fprintdEnrolled:
            self = .fprintdEnrolled
        }
        guard r.isAtEnd else { return nil }
    }
}
