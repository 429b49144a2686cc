import BiounlockSystem
import XCTest
import Foundation
import BiounlockCore
import BiounlockSensors

/// The simulated sensor over its real control socket, with the finger in another thread.
final class SimulatedSensorTests: XCTestCase {
    var dir = ""
    var socket: String { dir + "/s" }
    let enrolled = [Template(finger: .rightIndex, sensor: .simulated, data: Array("alice-ri".utf8), created: 0)]

    override func setUpWithError() throws {
        var template = Array("/tmp/bu-sim.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func listen() throws -> SimulatedSensor {
        switch SimulatedSensor.listen(at: socket) {
        case .success(let s): return s
        case .failure(let e): throw e
        }
    }

    /// Sends commands one after another from a background thread.
    func touch(_ commands: [SimCommand], after delayMs: Int = 0) -> XCTestExpectation {
        let done = expectation(description: "finger")
        let path = socket
        Thread.detachNewThread {
            usleep(UInt32(delayMs * 1000))
            for c in commands { _ = SimulatedFinger.send(c, to: path, waitMilliseconds: 3000) }
            done.fulfill()
        }
        return done
    }

    func testVerifyResultsForEachCommand() throws {
        let sensor = try listen()
        defer { sensor.close() }
        let finger = touch([.scan(Array("alice-ri".utf8)), .scan(Array("mallory".utf8)), .retry(2), .error(4), .unplug])
        let deadline = Deadline.after(milliseconds: 5000)
        XCTAssertEqual(sensor.verify(against: enrolled, deadline: deadline), .match(.rightIndex))
        XCTAssertEqual(sensor.verify(against: enrolled, deadline: deadline), .noMatch)
        XCTAssertEqual(sensor.verify(against: enrolled, deadline: deadline), .retry(.centerFinger))
        XCTAssertEqual(sensor.verify(against: enrolled, deadline: deadline), .unavailable(SensorUnavailable("simulated device error 4")))
        XCTAssertEqual(sensor.verify(against: enrolled, deadline: deadline), .unavailable(SensorUnavailable("reader unplugged")))
        wait(for: [finger], timeout: 10)
    }

    /// Silence ends the wait at the deadline (a hang fails through `bounded`), and the wait is
    /// real: a touch that comes while the reader waits, well before its deadline, is taken.
    func testSilenceEndsAtTheDeadlineAndATouchBeforeItIsTaken() throws {
        let sensor = try listen()
        defer { sensor.close() }
        let enrolled = self.enrolled
        XCTAssertEqual(bounded { sensor.verify(against: enrolled, deadline: .after(milliseconds: 300)) }, .timedOut)
        XCTAssertEqual(bounded { sensor.verify(against: enrolled, deadline: Deadline(milliseconds: 0)) }, .timedOut, "a passed deadline")
        let finger = touch([.scan(Array("alice-ri".utf8))], after: 300)
        XCTAssertEqual(bounded { sensor.verify(against: enrolled, deadline: .after(milliseconds: 30_000)) }, .match(.rightIndex))
        wait(for: [finger], timeout: 10)
    }

    func testSleepNeverOutlastsTheDeadline() throws {
        let sensor = try listen()
        defer { sensor.close() }
        let finger = touch([.sleep(milliseconds: 60_000), .scan(Array("alice-ri".utf8))])
        XCTAssertEqual(sensor.verify(against: enrolled, deadline: .after(milliseconds: 500)), .timedOut)
        sensor.close()
        wait(for: [finger], timeout: 10)
    }

    func testGarbageConnectionsAreIgnored() throws {
        let sensor = try listen()
        defer { sensor.close() }
        let path = socket
        let done = expectation(description: "garbage then scan")
        Thread.detachNewThread {
            // A raw client that writes junk and never half-closes, then a valid touch.
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_un(); addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
            _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            _ = "HELLO\u{0}\u{ff}".withCString { write(fd, $0, 7) }
            usleep(200_000)
            close(fd)
            _ = SimulatedFinger.send(.scan(Array("alice-ri".utf8)), to: path, waitMilliseconds: 3000)
            done.fulfill()
        }
        XCTAssertEqual(sensor.verify(against: enrolled, deadline: .after(milliseconds: 5000)), .match(.rightIndex))
        wait(for: [done], timeout: 10)
    }

    func testEnrolmentTakesFiveTouchesOfOneFinger() throws {
        let sensor = try listen()
        defer { sensor.close() }
        let id = Array("bob-lt".utf8)
        let finger = touch([.scan(id), .scan(Array("other".utf8)), .retry(1), .scan(id), .scan(id), .scan(id), .scan(id)])
        var events: [EnrollEvent] = []
        let result = sensor.enroll(finger: .leftThumb, deadline: .after(milliseconds: 10_000)) { events.append($0) }
        XCTAssertEqual(try result.get().data, id)
        XCTAssertEqual(try result.get().finger, .leftThumb)
        XCTAssertEqual(events, [.stage(done: 1, of: 5), .differentFinger, .retry(.tooShort), .stage(done: 2, of: 5),
                                .stage(done: 3, of: 5), .stage(done: 4, of: 5), .stage(done: 5, of: 5)])
        wait(for: [finger], timeout: 10)
    }

    func testSocketIsRootOnlyAndRemovedOnClose() throws {
        let sensor = try listen()
        var st = stat()
        XCTAssertEqual(lstat(socket, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        sensor.close()
        XCTAssertNotEqual(lstat(socket, &st), 0)
    }

    func testUnsafeDirectoryOrPathIsRefused() throws {
        chmod(dir, 0o777)
        XCTAssertThrowsError(try listen())
        chmod(dir, 0o700)
        _ = FileManager.default.createFile(atPath: socket, contents: Data("x".utf8))
        XCTAssertThrowsError(try listen(), "a regular file at the socket path is not ours to remove")
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket))
        unlink(socket)
        let long = dir + "/" + String(repeating: "x", count: 120)
        if case .success = SimulatedSensor.listen(at: long) { XCTFail("path longer than sun_path must be refused") }
    }

    func testFingerWithNoSensorFailsInBoundedTime() {
        if case .success = SimulatedFinger.send(.unplug, to: socket, waitMilliseconds: 200) { XCTFail("nobody listens") }
    }
}

/// Where a thread leaves its result for the test.
final class ResultBox<T> { var value: T? }

extension XCTestCase {
    /// Runs `body` on a thread of its own and returns its result, or nil (and a failure) when it
    /// has not returned within `limit` seconds: a hang fails the test, not the whole suite. The
    /// limit is a hang guard, far above any deadline under test -- never an assertion on time.
    func bounded<T>(_ limit: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line, _ body: @escaping () -> T) -> T? {
        let done = expectation(description: "returned")
        let box = ResultBox<T>()
        Thread.detachNewThread {
            box.value = body()
            done.fulfill()
        }
        wait(for: [done], timeout: limit)
        return box.value
    }
}
