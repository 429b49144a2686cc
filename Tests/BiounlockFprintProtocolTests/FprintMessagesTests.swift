import XCTest
import BiounlockFprintProtocol

/// The helper protocol: every message round-trips, and nothing malformed parses (or traps).
final class FprintMessagesTests: XCTestCase {
    let reader = ReaderDescription(driver: "virtual_device", device: "0", name: "Virtual device for debugging",
                                   enrolStages: 5, features: [.verify, .identify], scanType: "press")
    let print = Array("FP3".utf8) + [1, 2, 3, 4]
    let fprintdReader = FprintdReader(path: "/net/reactivated/Fprint/Device/0", name: "Virtual device for debugging",
                                      scanType: "swipe", enrolStages: 5, fingers: [7, 2])

    var requests: [FprintRequest] {
        [.enumerate, .open(selector: "", preferred: []), .open(selector: "virtual_device/0", preferred: [reader.ref]),
         .enrol(finger: 7, timeoutMilliseconds: 60_000), .verify(prints: [print, [1]], timeoutMilliseconds: 1234),
         .verify(prints: [], timeoutMilliseconds: 0), .delete(print: print), .close,
         .fprintdList(bus: "unix:path=/run/dbus/system_bus_socket", user: "alice"),
         .fprintdClaim(bus: "unix:path=/tmp/b", user: "alice", selector: "", purpose: .verify),
         .fprintdClaim(bus: "unix:path=/tmp/b", user: "bob", selector: "/net/reactivated/Fprint/Device/1", purpose: .enrol),
         .fprintdVerify(timeoutMilliseconds: 9750), .fprintdEnrol(finger: 7, timeoutMilliseconds: 60_000),
         .fprintdDelete(finger: 0), .fprintdDelete(finger: 10)]
    }

    var responses: [FprintResponse] {
        [.hello, .devices([]), .devices([reader, reader]), .opened(reader), .enrolStage(done: 2, total: 5),
         .enrolRetry(code: 3), .enrolled(print: print), .printRejected(index: 1, problem: .otherReader),
         .verified(.match(index: 0)), .verified(.noMatch), .verified(.retry(code: 2)), .verified(.timedOut),
         .deleted, .closed, .failure(FprintFailure(.device, domain: .device, code: 0x100, "verify failed: removed")),
         .fprintdReaders([]), .fprintdReaders([fprintdReader, FprintdReader(path: "/p", name: "", scanType: "press", enrolStages: 0, fingers: [])]),
         .fprintdClaimed(fprintdReader), .fprintdEnrolled]
    }

    func testEveryMessageRoundTrips() {
        for r in requests { XCTAssertEqual(FprintRequest(payload: r.payload), r, "\(r)") }
        for r in responses { XCTAssertEqual(FprintResponse(payload: r.payload), r, "\(r)") }
    }

    func testEveryTruncationAndEveryExtraByteIsRefused() {
        for r in requests {
            let p = r.payload
            for n in 0..<p.count { XCTAssertNil(FprintRequest(payload: Array(p.prefix(n))), "\(r) cut at \(n)") }
            XCTAssertNil(FprintRequest(payload: p + [0]), "\(r) with a trailing byte")
        }
        for r in responses {
            let p = r.payload
            for n in 0..<p.count { XCTAssertNil(FprintResponse(payload: Array(p.prefix(n))), "\(r) cut at \(n)") }
            XCTAssertNil(FprintResponse(payload: p + [0]), "\(r) with a trailing byte")
        }
    }

    func testAnotherVersionOrAnUnknownTagIsRefused() {
        var p = FprintRequest.enumerate.payload
        p[0] = FprintProtocol.version &+ 1
        XCTAssertNil(FprintRequest(payload: p))
        XCTAssertNil(FprintRequest(payload: [FprintProtocol.version, 99]))
        XCTAssertNil(FprintResponse(payload: [FprintProtocol.version, 1]), "a request tag is not a response")
        XCTAssertNil(FprintResponse(payload: [FprintProtocol.version, 250]))
    }

    func testLimitsAreEnforcedOnReading() {
        // More prints than allowed.
        var w = WireWriter()
        w.u8(FprintProtocol.version); w.u8(4); w.u32(1000); w.u32(UInt32(FprintProtocol.maximumPrints + 1))
        for _ in 0...FprintProtocol.maximumPrints { w.data(print) }
        XCTAssertNil(FprintRequest(payload: w.bytes))
        // A print over the size limit.
        XCTAssertNil(FprintRequest(payload: FprintRequest.delete(print: [UInt8](repeating: 0x46, count: FprintProtocol.maximumPrintLength + 1)).payload))
        // A length field that claims more than the message holds.
        var lying = WireWriter()
        lying.u8(FprintProtocol.version); lying.u8(5); lying.u32(UInt32.max)
        XCTAssertNil(FprintRequest(payload: lying.bytes))
        // A count field of 4 billion.
        var counting = WireWriter()
        counting.u8(FprintProtocol.version); counting.u8(101); counting.u32(UInt32.max)
        XCTAssertNil(FprintResponse(payload: counting.bytes))
    }

    /// Seeded mutations (the same on every run) of every message -- a byte changed, inserted or
    /// removed: whatever still parses re-encodes to a message that parses, and is stable from
    /// then on. (scripts/fuzz's fprint target searches the helper's replies further.)
    func testSeededMutationsParseToStableMessages() {
        var generator = SeededGenerator(seed: 0x6670_7269_6e74_3121)
        var parsed = 0, refused = 0
        let seeds = requests.map(\.payload) + responses.map(\.payload)
        for _ in 0..<6000 {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0...bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where at < bytes.count: bytes[at] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: at)
                default: if at < bytes.count { bytes.remove(at: at) }
                }
            }
            var any = false
            if let r = FprintRequest(payload: bytes) {
                any = true
                let again = FprintRequest(payload: r.payload)
                XCTAssertNotNil(again, "\(bytes)")
                XCTAssertEqual(again.flatMap { FprintRequest(payload: $0.payload) }, again, "\(bytes)")
            }
            if let r = FprintResponse(payload: bytes) {
                any = true
                let again = FprintResponse(payload: r.payload)
                XCTAssertNotNil(again, "\(bytes)")
                XCTAssertEqual(again.flatMap { FprintResponse(payload: $0.payload) }, again, "\(bytes)")
            }
            if any { parsed += 1 } else { refused += 1 }
        }
        XCTAssertGreaterThan(parsed, 100, "the mutations reach messages that still parse")
        XCTAssertGreaterThan(refused, 100, "and ones that do not")
    }

    func testFramesSplitAcrossReadsAndOversizedFrames() {
        var buffer = FrameBuffer()
        let a = FrameBuffer.frame(FprintResponse.hello.payload)
        let b = FrameBuffer.frame(FprintResponse.enrolled(print: print).payload)
        let stream = a + b
        for byte in stream.prefix(a.count - 1) {
            XCTAssertEqual(buffer.next(), .needMore)
            buffer.append([byte][...])
        }
        XCTAssertEqual(buffer.next(), .needMore)
        buffer.append(stream[(a.count - 1)...])
        XCTAssertEqual(buffer.next(), .frame(FprintResponse.hello.payload))
        XCTAssertEqual(buffer.next(), .frame(FprintResponse.enrolled(print: print).payload))
        XCTAssertEqual(buffer.next(), .needMore)

        var big = FrameBuffer(limit: 16)
        big.append([0, 0, 0, 17][...])
        XCTAssertEqual(big.next(), .tooLarge(17))
        var huge = FrameBuffer()
        huge.append([0xff, 0xff, 0xff, 0xff][...])
        XCTAssertEqual(huge.next(), .tooLarge(UInt32.max))
    }

    func testPrintChecksComeBeforeLibfprint() {
        XCTAssertEqual(PrintProblem.check([]), .truncated)
        XCTAssertEqual(PrintProblem.check(Array("FP".utf8)), .truncated, "fp_print_deserialize would abort on this")
        XCTAssertEqual(PrintProblem.check(Array("FP3".utf8)), .truncated)
        XCTAssertEqual(PrintProblem.check(Array("daemon-right-index".utf8)), .notFP3, "a simulated sensor's id is foreign")
        XCTAssertEqual(PrintProblem.check(Array("FP2abc".utf8)), .notFP3)
        XCTAssertEqual(PrintProblem.check([UInt8](repeating: 0x46, count: FprintProtocol.maximumPrintLength + 1)), .tooLarge)
        XCTAssertNil(PrintProblem.check(Array("FP3x".utf8)), "length and magic are fine; libfprint judges the rest")
    }

    func testFeatureNames() {
        XCTAssertEqual(ReaderFeatures([.identify, .verify, .storageDelete]).names, ["verify", "identify", "storage-delete"])
    }
}

/// SplitMix64: a fixed seed gives the same sequence on every run and machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
