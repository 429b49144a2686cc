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

/// `--since` for the audit log: a duration back from `now` (`2h`, `90m`, `3d`) or a UTC date
/// (`2026-11-01`); nil when it is neither.
public func parseSince(_ text: String, now: Int64) -> Int64? {
    if let seconds = parseDuration(text) { return now &- Int64(seconds) }
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
          let year = Int32(parts[0]), let month = Int32(parts[1]), let day = Int32(parts[2]),
          (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
    var t = tm()
    t.tm_year = year - 1900
    t.tm_mon = month - 1
    t.tm_mday = day
    let seconds = timegm(&t)
    return seconds < 0 ? nil : Int64(seconds)
}
