// The rules for option values shared by the key table (OptionKeys.swift) and its callers: bounded
// integers and decimals, absolute paths, socket paths, bus addresses, reader selectors.

/// Longest option value accepted; longer ones are refused (and logged as invalid).
let maximumOptionValueLength = 4096

func isAbsolutePath(_ value: String) -> Bool {
    value.utf8.first == UInt8(ascii: "/") && value.utf8.count <= maximumOptionValueLength && !value.utf8.contains(0)
}

/// sun_path holds 108 bytes including the terminator; libfprint silently truncates longer paths.
public let maximumSocketPathLength = 107

/// A D-Bus address of the one kind biounlock accepts: `unix:path=` and an absolute socket path,
/// nothing after it. Security choice: D-Bus libraries run programs for `autolaunch:` and
/// `unixexec:` addresses and connect anywhere for `tcp:`; a Unix socket whose directory the module
/// checks is the only transport fprintd's system bus needs (and all biounlock-fprintd speaks).
func isUnixBusAddress(_ value: String) -> Bool {
    let prefix = "unix:path="
    guard value.hasPrefix(prefix) else { return false }
    let path = String(value.dropFirst(prefix.count))
    return isAbsolutePath(path) && path.utf8.count <= maximumSocketPathLength
        && path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "%") }
}

/// The socket path of a `unix:path=` address.
public func unixBusPath(_ address: String) -> String? {
    guard isUnixBusAddress(address) else { return nil }
    return String(address.dropFirst("unix:path=".count))
}

/// A reader selector: printable ASCII without spaces, at most 128 bytes.
func isReaderSelector(_ value: String) -> Bool {
    !value.isEmpty && value.utf8.count <= 128 && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
}

/// Parses "0.4", "0.40" or "0.405" (at most three decimals, below 10) as thousandths.
func parseThousandths(_ value: String) -> Int? {
    let parts = value.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, let whole = boundedInteger(String(parts[0]), in: 0...9) else { return nil }
    guard parts.count == 2 else { return whole * 1000 }
    let fraction = String(parts[1])
    guard !fraction.isEmpty, fraction.utf8.count <= 3, let f = boundedInteger(fraction, in: 0...999) else { return nil }
    let scale = fraction.utf8.count == 1 ? 100 : fraction.utf8.count == 2 ? 10 : 1
    return whole * 1000 + f * scale
}

/// Parses a decimal integer within `range` without trapping on any input: ASCII digits only (no
/// sign, no spaces), at most 9 of them. The one integer rule for module arguments, the config file
/// and the CLI's options.
public func boundedInteger(_ value: String?, in range: ClosedRange<Int>) -> Int? {
    guard let value, !value.isEmpty, value.utf8.count <= 9,
          value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value), range.contains(n)
    else { return nil }
    return n
}
