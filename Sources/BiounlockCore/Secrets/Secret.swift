import CSodium

/// A secret (a typed passcode) held in its own heap buffer that is zeroed with
/// `sodium_memzero` when the last reference goes away.
///
/// Secrets never live in a `String` (whose storage Swift may copy and never wipes),
/// never appear in a description or a log line, and are capped in size so that no
/// caller can make the module hash megabytes.
public final class Secret {
    /// Longest secret accepted, in bytes. Longer input is refused before any hashing.
    public static let maximumLength = 512

    /// count + 1 bytes; the last stays 0 so any accidental C-string read stops inside the buffer.
    private let base: UnsafeMutableRawPointer
    public let count: Int

    /// Copies `count` bytes from `bytes`. Returns nil when `count` exceeds `maximumLength`.
    public init?(copying bytes: UnsafeRawPointer?, count: Int) {
        guard count >= 0, count <= Secret.maximumLength else { return nil }
        base = UnsafeMutableRawPointer.allocate(byteCount: count + 1, alignment: 1)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: count + 1)
        if count > 0, let bytes {
            base.copyMemory(from: bytes, byteCount: count)
        }
        self.count = count
    }

    /// Copies the bytes of an array (used by tests and the CLI's line reader, which zero their own buffers).
    public convenience init?(bytes: [UInt8]) {
        self.init(copying: bytes, count: bytes.count)
    }

    /// Copies the bytes of a slice (a frame's payload), with no intermediate copy to wipe.
    public static func copying(_ bytes: ArraySlice<UInt8>) -> Secret? {
        bytes.withUnsafeBytes { Secret(copying: $0.baseAddress, count: $0.count) }
    }

    deinit {
        sodium_memzero(base, count + 1)
        base.deallocate()
    }

    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the secret's bytes. The pointer must not escape.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Calls `body` with the secret as C characters and their count (for libsodium).
    public func withCChars<R>(_ body: (UnsafePointer<CChar>, Int) throws -> R) rethrows -> R {
        try body(UnsafePointer(base.assumingMemoryBound(to: CChar.self)), count)
    }

    /// Whether every byte satisfies `predicate` (for validating PIN digits without copying).
    public func allBytes(_ predicate: (UInt8) -> Bool) -> Bool {
        withBytes { $0.allSatisfy(predicate) }
    }

    /// Constant-time comparison of two secrets of equal length.
    public func constantTimeEquals(_ other: Secret) -> Bool {
        guard count == other.count else { return false }
        return sodium_memcmp(base, other.base, count) == 0
    }
}

extension Secret: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "<secret>" }
    public var debugDescription: String { "<secret>" }
}

/// Zeroes an array of bytes in place (for transient buffers that held secret input).
public func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { wipe($0) }
}

/// Zeroes the memory of a buffer (any array's bytes: `array.withUnsafeMutableBytes { wipe($0) }`).
public func wipe(_ raw: UnsafeMutableRawBufferPointer) {
    if let base = raw.baseAddress { sodium_memzero(base, raw.count) }
}
