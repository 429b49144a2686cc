import Glibc

/// Time sources, injectable so that tests can move time.
public protocol Clock: Sendable {
    /// Seconds since the epoch (for stored dates and the audit log).
    func now() -> Int64
    /// Monotonic milliseconds (for deadlines; never goes backwards).
    func monotonicMilliseconds() -> Int64
}

/// The system's clocks: clock_gettime(CLOCK_REALTIME) and clock_gettime(CLOCK_MONOTONIC). The
/// one monotonic clock of biounlock: deadlines everywhere (Deadline, the helper protocols'
/// absolute milliseconds) are read from it.
public struct SystemClock: Clock {
    public init() {}

    /// clock_gettime(CLOCK_REALTIME), whole seconds.
    public func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }

    /// clock_gettime(CLOCK_MONOTONIC), in milliseconds.
    public func monotonicMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) &* 1000 &+ Int64(ts.tv_nsec) / 1_000_000
    }
}

/// SystemClock's monotonic milliseconds, for the absolute deadlines the helper protocols carry
/// (`Int64.max`: no bound, as `Deadline.never`).
public func monotonicMilliseconds() -> Int64 { SystemClock().monotonicMilliseconds() }

/// A point on the monotonic clock by which an operation must end.
public struct Deadline: Equatable, Hashable, Sendable {
    public let milliseconds: Int64
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// No bound: a poll until this deadline waits as long as it takes.
    public static let never = Deadline(milliseconds: .max)

    public var isUnbounded: Bool { milliseconds == .max }

    /// `milliseconds` from now; saturating, so a huge wait is a far deadline (or none), never a
    /// wrapped one in the past.
    public static func after(milliseconds: Int64, clock: Clock = SystemClock()) -> Deadline {
        let (sum, overflow) = clock.monotonicMilliseconds().addingReportingOverflow(milliseconds)
        return Deadline(milliseconds: overflow ? (milliseconds > 0 ? .max : .min) : sum)
    }

    /// Milliseconds left (0 when passed), clamped to what poll(2) accepts.
    public func remaining(clock: Clock = SystemClock()) -> Int32 {
        let now = clock.monotonicMilliseconds()
        guard milliseconds > now else { return 0 }
        let (left, overflow) = milliseconds.subtractingReportingOverflow(now)
        return overflow || left > Int64(Int32.max) ? Int32.max : Int32(left)
    }

    public func hasPassed(clock: Clock = SystemClock()) -> Bool { remaining(clock: clock) == 0 }

    /// poll(2)'s timeout for this deadline: -1 when unbounded, else the milliseconds left.
    var pollTimeout: Int32 { isUnbounded ? -1 : remaining() }
}

/// A UTC calendar date and time (gmtime_r, timegm), for ISO 8601 text without Foundation.
public struct CalendarTime: Equatable, Sendable {
    /// The year in full (Int: a stored time past the year 2^31 must not overflow).
    public var year: Int
    /// 1-12.
    public var month: Int
    /// 1-31.
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    /// gmtime_r: the UTC time of `seconds` since the epoch; nil when glibc cannot express it
    /// (past the year 2^31 + 1900).
    public static func utc(_ seconds: Int64) -> CalendarTime? {
        var t = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return nil }
        return CalendarTime(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// timegm: seconds since the epoch of midnight UTC on a date; the caller keeps the year
    /// within 1970...9999, month and day within their ranges.
    public static func seconds(utcYear year: Int32, month: Int32, day: Int32) -> Int64 {
        var t = tm()
        t.tm_year = year &- 1900
        t.tm_mon = month &- 1
        t.tm_mday = day
        return Int64(timegm(&t))
    }
}

/// Pauses of the calling thread (no signal, no thread: the module's host is left alone).
public enum Sleep {
    /// poll(NULL, 0, milliseconds): sleeps, ending early only on a signal.
    public static func milliseconds(_ milliseconds: Int32) {
        _ = Glibc.poll(nil, 0, max(0, milliseconds))
    }

    /// nanosleep: sleeps `nanoseconds` (below one second), ending early on a signal.
    public static func nanoseconds(_ nanoseconds: Int) {
        var pause = timespec(tv_sec: 0, tv_nsec: min(max(0, nanoseconds), 999_999_999))
        _ = nanosleep(&pause, nil)
    }
}
