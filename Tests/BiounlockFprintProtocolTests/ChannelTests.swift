import XCTest
import Glibc
import BiounlockFprintProtocol

/// The framed channel over a real socketpair: bounded waits, bounded frames, no SIGPIPE.
final class ChannelTests: XCTestCase {
    var a: FrameChannel!
    var b: FrameChannel!

    override func setUp() {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds), 0)
        a = FrameChannel(fd: fds[0])
        b = FrameChannel(fd: fds[1])
    }

    func soon(_ ms: Int64 = 2000) -> Int64 { monotonicMilliseconds() + ms }

    func testFramesGoBothWays() {
        XCTAssertNoThrow(try a.send(FprintRequest.enumerate.payload, until: soon()).get())
        XCTAssertEqual(try b.receive(until: soon()).get(), FprintRequest.enumerate.payload)
        let large = FprintResponse.enrolled(print: [UInt8](repeating: 7, count: FprintProtocol.maximumPrintLength)).payload
        let sender = Thread { _ = self.b.send(large, until: self.soon(5000)) }
        sender.start()
        XCTAssertEqual(try a.receive(until: soon(5000)).get(), large, "a frame larger than the socket buffer")
    }

    /// Silence ends at the deadline (a hang would stop the suite here: the deadline is the
    /// channel's own bound), and a frame that comes before the deadline is received.
    func testSilenceEndsAtTheDeadline() {
        XCTAssertEqual(a.receive(until: soon(200)).failureValue, .timedOut)
        XCTAssertEqual(a.receive(until: monotonicMilliseconds() - 1).failureValue, .timedOut, "a passed deadline")
        let sender = Thread { usleep(200_000); _ = self.b.send(FprintResponse.hello.payload, until: self.soon()) }
        sender.start()
        XCTAssertEqual(try a.receive(until: soon(30_000)).get(), FprintResponse.hello.payload, "waited for it")
    }

    func testPeerGoneIsClosedNotASignal() {
        b.close()
        XCTAssertEqual(a.receive(until: soon()).failureValue, .closed)
        // Would raise SIGPIPE (and kill this test process) without MSG_NOSIGNAL.
        XCTAssertEqual(a.send([1, 2, 3], until: soon()).failureValue, .closed)
    }

    func testOversizedFrameIsRefusedBeforeReadingIt() {
        let announce: [UInt8] = [0x7f, 0xff, 0xff, 0xff]
        XCTAssertEqual(announce.withUnsafeBytes { send(b.fd, $0.baseAddress, 4, Int32(MSG_NOSIGNAL)) }, 4)
        XCTAssertEqual(a.receive(until: soon()).failureValue, .tooLarge)
        XCTAssertEqual(a.receive(until: soon()).failureValue, .malformed, "the stream is not read on after that")
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
