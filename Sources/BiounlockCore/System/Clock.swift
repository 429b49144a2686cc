import Glibc

/// Time sources, injectable so that tests can move time.
public protocol Clock: Sendable {
    /// Seconds since the epoch (for stored dates and the audit log).
    func now() -> Int64
    /// Monotonic milliseconds (for deadlines; never goes backwards).
    func monotonicMilliseconds() -> Int64
}

public struct SystemClock: Clock {
    public init() {}
    public func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }
    public func monotonicMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) &* 1000 &+ Int64(ts.tv_nsec) / 1_000_000
    }
}

/// A point on the monotonic clock by which an operation must end.
public struct Deadline: Sendable {
    public let milliseconds: Int64
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func after(milliseconds: Int64, clock: Clock = SystemClock()) -> Deadline {
        Deadline(milliseconds: clock.monotonicMilliseconds() &+ milliseconds)
    }

    /// Milliseconds left (0 when passed), clamped to what poll(2) accepts.
    public func remaining(clock: Clock = SystemClock()) -> Int32 {
        let left = milliseconds &- clock.monotonicMilliseconds()
        if left <= 0 { return 0 }
        return left > Int64(Int32.max) ? Int32.max : Int32(left)
    }

    public func hasPassed(clock: Clock = SystemClock()) -> Bool { remaining(clock: clock) == 0 }
}

/// ISO 8601 UTC text for a stored time ("2026-11-30T06:30:00Z"), without Foundation.
/// Total over Int64 (stored times come from the store, which may be damaged): gmtime_r fails past
/// year 2^31 + 1900, and the year is computed in Int because tm_year + 1900 can exceed Int32.
public func iso8601(_ seconds: Int64) -> String {
    var t = time_t(seconds)
    var parts = tm()
    guard gmtime_r(&t, &parts) != nil else { return "\(seconds)" }
    func pad(_ n: some BinaryInteger, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
        + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
}
