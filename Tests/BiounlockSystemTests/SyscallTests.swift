import Foundation
import Glibc
import XCTest
@testable import BiounlockSystem

/// The funnel: failures become an Errno naming the call; EINTR is retried; in fault builds a
/// schedule can fail or shorten a call.
final class SyscallTests: XCTestCase {
    func testAFailedCallIsAnErrnoNamingTheCall() {
        XCTAssertThrowsError(try FileDescriptor.open("/nonexistent-biounlock/x", .readOnly).close()) { error in
            guard let e = error as? Errno else { return XCTFail("not an Errno: \(error)") }
            XCTAssertEqual(e.code, .noSuchFileOrDirectory)
            XCTAssertEqual(e.call, "open")
            XCTAssertEqual(e.description, "open: No such file or directory")
            XCTAssertEqual(e.message, "No such file or directory")
        }
    }

    func testAWrapperCanNameTheCallMorePrecisely() {
        let bad = FileDescriptor(rawValue: -1)
        XCTAssertThrowsError(try bad.duplicate(atLeast: 10).close()) { error in
            XCTAssertEqual(error as? Errno, Errno(.badDescriptor, call: "fcntl(F_DUPFD_CLOEXEC)"))
        }
        XCTAssertThrowsError(try bad.setNonBlocking()) { error in
            XCTAssertEqual((error as? Errno)?.call, "fcntl(O_NONBLOCK)")
        }
    }

    func testCodesComeFromTheHeaders() {
        XCTAssertEqual(Errno.Code.interrupted.rawValue, EINTR)
        XCTAssertEqual(Errno.Code.wouldBlock.rawValue, EAGAIN)
        XCTAssertEqual(Errno.Code.noSpace.rawValue, ENOSPC)
        XCTAssertEqual(Errno.Code.tooManySymbolicLinks.rawValue, ELOOP)
        XCTAssertFalse(Errno.Code(rawValue: 99_999).description.isEmpty, "an unknown code still has a text")
    }

    func testReadAllStopsOneByteOverTheLimit() throws {
        let pair = try FileDescriptor.localStreamPair()
        try pair.second.descriptor.writeAll(Array(repeating: 7, count: 100))
        try pair.second.descriptor.shutdownWriting()
        XCTAssertEqual(try pair.first.descriptor.readAll(upTo: 10).count, 11)
        XCTAssertEqual(try pair.first.descriptor.readAll(upTo: 1000).count, 89, "the rest, then the end of the file")
    }

    /// The buffer starts at the size the caller expects and grows when the file is longer (a
    /// /proc file's fstat size is 0; a file can grow between fstat and read), never past the limit.
    func testReadAllGrowsPastWhatWasExpected() throws {
        let content = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for (expected, limit) in [(0, 20_000), (1, 20_000), (9_999, 20_000), (10_000, 20_000), (50_000, 20_000), (-5, 20_000),
                                  (Int.max, 20_000), (0, 10_000), (0, 9_999), (3, 4_096)] {
            let pair = try FileDescriptor.localStreamPair()
            try pair.second.descriptor.writeAll(content)
            try pair.second.descriptor.shutdownWriting()
            let read = try pair.first.descriptor.readAll(upTo: limit, expected: expected)
            XCTAssertEqual(read, Array(content.prefix(limit + 1)), "expected \(expected), limit \(limit)")
        }
        let proc = try FileDescriptor.open("/proc/self/stat", .readOnly)
        XCTAssertEqual(try proc.descriptor.status().size, 0, "a /proc file says it is empty")
        XCTAssertGreaterThan(try proc.descriptor.readAll(upTo: 64 * 1024, expected: 0).count, 20, "and is read all the same")
    }

    func testReadAtAnOffsetLeavesTheFilePositionAlone() throws {
        let path = NSTemporaryDirectory() + "/pread-\(getpid())"
        defer { unlink(path) }
        let file = try FileDescriptor.open(path, .readWrite, options: [.create, .exclusive], permissions: 0o600)
        try file.descriptor.writeAll(Array(0..<200))
        XCTAssertEqual(try file.descriptor.read(count: 5, atFileOffset: 10), [10, 11, 12, 13, 14])
        XCTAssertEqual(try file.descriptor.read(count: 50, atFileOffset: 190), Array(190..<200), "fewer at the end of the file")
        XCTAssertEqual(try file.descriptor.read(count: 5, atFileOffset: 500), [])
        XCTAssertEqual(lseek(file.rawValue, 0, SEEK_CUR), 200, "pread moves no file position")
        XCTAssertThrowsError(try Faults.run(FaultSchedule([FaultRule(.pread, .fail(.ioError))])) { () throws(Errno) -> [UInt8] in
            try file.descriptor.read(count: 5, atFileOffset: 0)
        })
        let short = try Faults.run(FaultSchedule([FaultRule(.pread, .short(1), count: 3)])) { () throws(Errno) -> [UInt8] in
            try file.descriptor.read(count: 5, atFileOffset: 0)
        }
        XCTAssertEqual(short.result, [0, 1, 2, 3, 4], "goes on after short reads")
        XCTAssertEqual(short.injected.count, 3)
    }

    func testExtendedAttributes() throws {
        let path = NSTemporaryDirectory() + "/xattr-\(getpid())"
        defer { unlink(path) }
        let file = try FileDescriptor.open(path, .readWrite, options: [.create, .exclusive], permissions: 0o600)
        XCTAssertNil(try file.descriptor.extendedAttribute("user.biounlock.test", maximumLength: 64), "none by that name")
        try file.descriptor.setExtendedAttribute("user.biounlock.test", to: Array("boot-1".utf8))
        XCTAssertEqual(try file.descriptor.extendedAttribute("user.biounlock.test", maximumLength: 64), Array("boot-1".utf8))
        try file.descriptor.setExtendedAttribute("user.biounlock.test", to: Array("2".utf8))
        XCTAssertEqual(try file.descriptor.extendedAttribute("user.biounlock.test", maximumLength: 64), Array("2".utf8), "replaced")
        try file.descriptor.setExtendedAttribute("user.biounlock.test", to: Array(repeating: 7, count: 100))
        XCTAssertThrowsError(try file.descriptor.extendedAttribute("user.biounlock.test", maximumLength: 64)) { error in
            XCTAssertEqual((error as? Errno)?.code, .resultTooLarge, "longer than asked for")
        }
    }

    func testAClosedPeerIsBrokenPipeNotASignal() throws {
        let pair = try FileDescriptor.localStreamPair()
        let mine = pair.releaseFirst()   // the second end is closed now
        defer { mine.close() }
        XCTAssertThrowsError(try mine.send([1, 2, 3], flags: [.noSignal])) { error in
            XCTAssertEqual((error as? Errno)?.code, .brokenPipe)
            XCTAssertEqual((error as? Errno)?.call, "send")
        }
    }

    func testOwnedDescriptorsAreCloseOnExecAndClosedOnce() throws {
        let raw: Int32
        do {
            let file = try FileDescriptor.open("/dev/null", .readOnly)
            raw = file.rawValue
            XCTAssertEqual(fcntl(raw, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
        }
        XCTAssertEqual(fcntl(raw, F_GETFD), -1, "closed when its owner went away")
        XCTAssertEqual(errno, EBADF)
    }

    func testProcessStateDoesNotTouchThisTestsProcess() {
        // Only reads: the watchdog and the signal resets belong to the checker's own process.
        XCTAssertEqual(ProcessIdentity.processID, getpid())
        XCTAssertEqual(ProcessIdentity.realUserID, getuid())
    }
}

#if BIOUNLOCK_FAULTS
/// Fault injection through the funnel (debug and fuzz builds only).
final class FaultTests: XCTestCase {
    override func tearDown() { Faults.remove() }

    func testEINTRIsRetriedTransparently() throws {
        let pair = try FileDescriptor.localStreamPair()
        try pair.second.descriptor.writeAll([1, 2, 3])
        var buffer = [UInt8](repeating: 0, count: 8)
        let (n, injected) = try Faults.run(FaultSchedule([FaultRule(.read, .fail(.interrupted), count: 3)])) { () throws(Errno) -> Int in
            try pair.first.descriptor.read(into: &buffer)
        }
        XCTAssertEqual(n, 3, "the read succeeded after three interruptions")
        XCTAssertEqual(Array(buffer.prefix(3)), [1, 2, 3])
        XCTAssertEqual(injected.map(\.number), [0, 1, 2])
        XCTAssertEqual(Faults.injected, [], "the schedule is gone after run")
    }

    func testConnectIsNotRetriedAfterEINTR() throws {
        // A connect interrupted goes on in the background: it reports EINPROGRESS instead.
        let socket = try FileDescriptor.localStreamSocket(nonBlocking: true)
        let address = try XCTUnwrap(LocalSocketAddress("/nonexistent-biounlock.sock"))
        Faults.install(FaultSchedule([FaultRule(.connect, .fail(.interrupted))]))
        XCTAssertThrowsError(try socket.descriptor.connect(to: address)) { error in
            XCTAssertEqual(error as? Errno, Errno(.inProgress, call: "connect"))
        }
        XCTAssertEqual(Faults.remove().count, 1)
    }

    func testAnInjectedErrorIsTheCallsErrno() throws {
        let pair = try FileDescriptor.localStreamPair()
        Faults.install(FaultSchedule([FaultRule(.write, .fail(.noSpace), skip: 1)]))
        XCTAssertEqual(try pair.first.descriptor.write([1]), 1, "the first write is let through")
        XCTAssertThrowsError(try pair.first.descriptor.write([2])) { error in
            XCTAssertEqual(error as? Errno, Errno(.noSpace, call: "write"))
        }
        XCTAssertEqual(try pair.first.descriptor.write([3]), 1, "count 1: the third goes through again")
        XCTAssertEqual(Faults.count(of: .write), 3)
    }

    func testAShortTransferMovesFewerBytes() throws {
        let pair = try FileDescriptor.localStreamPair()
        try pair.second.descriptor.writeAll(Array(repeating: 9, count: 20))
        try pair.second.descriptor.shutdownWriting()
        Faults.install(FaultSchedule([FaultRule(.read, .short(7), count: 100)]))
        var buffer = [UInt8](repeating: 0, count: 64)
        XCTAssertEqual(try pair.first.descriptor.read(into: &buffer), 7)
        XCTAssertEqual(try pair.first.descriptor.readAll(upTo: 100).count, 13, "readAll goes on after short reads")
    }

    func testPollRetriesEINTRAndStillHonoursTheDeadline() throws {
        let pair = try FileDescriptor.localStreamPair()
        Faults.install(FaultSchedule([FaultRule(.poll, .fail(.interrupted), count: 5)]))
        XCTAssertNil(try Poll.wait(pair.first.descriptor, for: .readable, until: .after(milliseconds: 0)), "nothing to read: timed out")
        XCTAssertEqual(Faults.count(of: .poll), 6, "five interruptions, then the real poll")
    }

    func testFaultsApplyToTheInstallingThreadOnly() throws {
        Faults.install(FaultSchedule([FaultRule(.open, .fail(.tooManyOpenFiles), count: 100)]))
        final class Flag: @unchecked Sendable { var raised = false }  // written by the thread, read after done
        let otherThreadOpened = Flag()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            otherThreadOpened.raised = (try? FileDescriptor.open("/dev/null", .readOnly)) != nil
            done.signal()
        }
        thread.start()
        done.wait()
        XCTAssertTrue(otherThreadOpened.raised)
        XCTAssertThrowsError(try FileDescriptor.open("/dev/null", .readOnly).close())
    }

    func testAFuzzInputIsAlwaysAScheduleAndTheSameOne() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 3, 4, 5, 17, 256, 1000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let schedule = FaultSchedule(fuzzInput: bytes)
            XCTAssertEqual(schedule, FaultSchedule(fuzzInput: bytes), "deterministic")
            XCTAssertEqual(schedule.rules.count, min(length / 4, FaultSchedule.maximumFuzzRules))
            XCTAssertTrue(schedule.rules.allSatisfy { $0.count < 16 && $0.skip < 32 })
        }
        let one = FaultSchedule(fuzzInput: [0, 0, 2, 3])
        XCTAssertEqual(one.rules, [FaultRule(SystemCall.allCases[0], FaultSchedule.fuzzFaults[0], skip: 2, count: 3)])
    }

    func testRunRemovesTheScheduleWhenTheBodyThrows() {
        XCTAssertThrowsError(try Faults.run(FaultSchedule([FaultRule(.open, .fail(.ioError))])) { () throws(Errno) -> Void in
            _ = try FileDescriptor.open("/dev/null", .readOnly)
        })
        XCTAssertNoThrow(try FileDescriptor.open("/dev/null", .readOnly).close(), "no schedule after run")
    }
}

#endif
