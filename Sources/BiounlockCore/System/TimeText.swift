import BiounlockSystem

// The clocks and Deadline are BiounlockSystem's (Clock.swift there); this is the text of times.

/// ISO 8601 UTC text for a stored time ("2026-11-30T06:30:00Z"), without Foundation.
/// Total over Int64 (stored times come from the store, which may be damaged): gmtime_r fails past
/// year 2^31 + 1900 (the number is shown then), and the year is an Int.
public func iso8601(_ seconds: Int64) -> String {
    guard let t = CalendarTime.utc(seconds) else { return "\(seconds)" }
    func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))T\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2))Z"
}

/// `--since` for the audit log: a duration back from `now` (`2h`, `90m`, `3d`) or a UTC date
/// (`2026-11-01`); nil when it is neither.
public func parseSince(_ text: String, now: Int64) -> Int64? {
    if let seconds = parseDuration(text) { return now &- Int64(seconds) }
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
          let year = Int32(parts[0]), let month = Int32(parts[1]), let day = Int32(parts[2]),
          (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
    let seconds = CalendarTime.seconds(utcYear: year, month: month, day: day)
    return seconds < 0 ? nil : seconds
}
