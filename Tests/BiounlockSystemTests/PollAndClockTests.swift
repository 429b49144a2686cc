import XCTest
@testable import BiounlockSystem

/// A clock the test moves.
final class ManualClock: Clock, @unchecked Sendable {
    var milliseconds: Int64 = 1_000
    func now() -> Int64 { milliseconds / 1000 }
    func monotonicMilliseconds() -> Int64 { milliseconds }
}

final class PollAndClockTests: XCTestCase {
    func testDeadlineRemainingAndPassed() {
        let clock = ManualClock()
        let deadline = Deadline.after(milliseconds: 500, clock: clock)
        XCTAssertEqual(deadline.remaining(clock: clock), 500)
        clock.milliseconds += 499
        XCTAssertEqual(deadline.remaining(clock: clock), 1)
        XCTAssertFalse(deadline.hasPassed(clock: clock))
        clock.milliseconds += 1
        XCTAssertTrue(deadline.hasPassed(clock: clock))
        clock.milliseconds += 10_000
        XCTAssertEqual(deadline.remaining(clock: clock), 0, "never negative")
    }

    func testDeadlinesFarAwayAreClampedNotTrapped() {
        let clock = ManualClock()
        XCTAssertEqual(Deadline.after(milliseconds: .max, clock: clock).remaining(clock: clock), Int32.max)
        XCTAssertEqual(Deadline(milliseconds: .min).remaining(clock: clock), 0)
        XCTAssertTrue(Deadline.never.isUnbounded)
        XCTAssertEqual(Deadline.never.pollTimeout, -1)
        XCTAssertEqual(Deadline(milliseconds: 0).pollTimeout, 0, "passed: poll once without waiting")
    }

    func testPollTimesOutWithNothingToReadAndSeesWhatArrives() throws {
        let pair = try FileDescriptor.localStreamPair()
        XCTAssertNil(try Poll.wait(pair.first.descriptor, for: .readable, until: Deadline(milliseconds: 0)))
        XCTAssertEqual(try Poll.wait(pair.first.descriptor, for: .writable, until: .after(milliseconds: 5_000)), .writable)
        try pair.second.descriptor.writeAll([42])
        let events = try XCTUnwrap(try Poll.wait(pair.first.descriptor, for: .readable, until: .after(milliseconds: 5_000)))
        XCTAssertTrue(events.contains(.readable))
    }

    func testPollReportsEachRequestAndSkipsAMissingDescriptor() throws {
        let a = try FileDescriptor.localStreamPair()
        let b = try FileDescriptor.localStreamPair()
        try b.second.descriptor.writeAll([1])
        let events = try XCTUnwrap(try Poll.wait([Poll.Request(a.first.descriptor, .readable), Poll.Request(nil, .readable),
                                                  Poll.Request(b.first.descriptor, .readable)], until: .after(milliseconds: 5_000)))
        XCTAssertEqual(events.count, 3)
        XCTAssertTrue(events[0].isEmpty)
        XCTAssertTrue(events[1].isEmpty, "a nil descriptor is never ready")
        XCTAssertTrue(events[2].contains(.readable))
    }

    func testAHungUpPeerIsReportedNotWaitedFor() throws {
        let pair = try FileDescriptor.localStreamPair()
        let mine = pair.releaseFirst()
        defer { mine.close() }
        let events = try XCTUnwrap(try Poll.wait(mine, for: .readable, until: .never))
        XCTAssertFalse(events.isDisjoint(with: [.readable, .hangUp]))
    }

    func testTheSystemClockIsMonotonicAndTheFreeFunctionIsIt() {
        let clock = SystemClock()
        let a = clock.monotonicMilliseconds()
        let b = monotonicMilliseconds()
        let c = clock.monotonicMilliseconds()
        XCTAssertLessThanOrEqual(a, b)
        XCTAssertLessThanOrEqual(b, c)
        XCTAssertGreaterThan(clock.now(), 1_700_000_000)
    }

    func testCalendarTimeIsTotal() {
        XCTAssertEqual(CalendarTime.utc(0), CalendarTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        XCTAssertEqual(CalendarTime.utc(1_764_571_800)?.year, 2025)
        XCTAssertNil(CalendarTime.utc(.max), "past what glibc can express: nil, no trap")
        XCTAssertEqual(CalendarTime.seconds(utcYear: 1970, month: 1, day: 2), 86_400)
    }
}
