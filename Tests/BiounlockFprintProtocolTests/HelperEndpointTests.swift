import BiounlockSystem
import XCTest
import Glibc
import BiounlockFprintProtocol
import TestSupport

/// The helpers' end of the channel (HelperEndpoint), served on a thread over a real socketpair
/// as biounlock-fprint and biounlock-fprintd serve fd 3: the greeting, each request handed on in
/// order, and the three ends of the loop (the handler's `close`, something unreadable, the
/// spawner hanging up).
final class HelperEndpointTests: XCTestCase {
    var spawner: FrameChannel!
    var endpoint: HelperEndpoint!

    override func setUp() {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds), 0)
        spawner = FrameChannel(fd: fds[0])
        endpoint = HelperEndpoint(fd: fds[1])
    }

    override func tearDown() {
        spawner.close()
        endpoint.close()
    }

    func soon() -> Int64 { monotonicMilliseconds() + 5000 }

    /// Serves on a thread; the requests the handler saw, once the loop has ended.
    func serve(until done: XCTestExpectation, _ handle: @escaping (FprintRequest, HelperEndpoint) -> Bool) -> () -> [FprintRequest] {
        let seen = Locked<[FprintRequest]>([])
        let handed = HandedOver(self.endpoint!)
        Thread {
            let endpoint = handed.value
            endpoint.serve { request in
                seen.mutate { $0.append(request) }
                return handle(request, endpoint)
            }
            done.fulfill()
        }.start()
        return { seen.value }
    }

    func response(_ channel: FrameChannel) -> FprintResponse? {
        (try? channel.receive(until: soon()).get()).flatMap(FprintResponse.init(payload:))
    }

    func testRequestsInOrderUntilTheHandlersClose() {
        let done = expectation(description: "the loop ended")
        let seen = serve(until: done) { request, endpoint in
            if request == .close { endpoint.reply(.closed); return false }
            endpoint.reply(.failure(FprintFailure(.badRequest, "not here")))
            return true
        }
        XCTAssertEqual(response(spawner), .hello, "the greeting first")
        XCTAssertNoThrow(try spawner.send(FprintRequest.enumerate.payload, until: soon()).get())
        XCTAssertEqual(response(spawner), .failure(FprintFailure(.badRequest, "not here")))
        XCTAssertNoThrow(try spawner.send(FprintRequest.close.payload, until: soon()).get())
        XCTAssertEqual(response(spawner), .closed)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(seen(), [.enumerate, .close])
        XCTAssertFalse(endpoint.peerAlive)
    }

    func testSomethingUnreadableIsAnsweredAndEndsTheLoop() {
        let done = expectation(description: "the loop ended")
        let seen = serve(until: done) { _, _ in true }
        XCTAssertEqual(response(spawner), .hello)
        XCTAssertNoThrow(try spawner.send([FprintProtocol.version &+ 1, 100], until: soon()).get())
        guard case .failure(let f)? = response(spawner) else { return XCTFail("no failure answered") }
        XCTAssertEqual(f.kind, .badRequest)
        XCTAssertTrue(f.description.contains("protocol version"), f.description)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(seen(), [])
    }

    func testTheSpawnerHangingUpEndsTheLoop() {
        let done = expectation(description: "the loop ended")
        _ = serve(until: done) { _, _ in true }
        XCTAssertEqual(response(spawner), .hello)
        spawner.close()
        wait(for: [done], timeout: 10)
    }
}
