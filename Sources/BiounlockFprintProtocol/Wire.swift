import BiounlockSystem

/// Byte-level encoding of the helper protocol: big-endian integers and length-prefixed byte
/// strings. The reader never traps: every read checks what is left and the size limits, and a
/// malformed message is nil, never a partial value.

/// Builds one message.
public struct WireWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func u8(_ value: UInt8) { bytes.append(value) }

    public mutating func u32(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }

    /// A length-prefixed byte string. Callers keep within the protocol's limits; the reader
    /// enforces them on the other side.
    public mutating func data(_ value: [UInt8]) {
        u32(UInt32(clamping: value.count))
        bytes.append(contentsOf: value.prefix(Int(UInt32.max)))
    }

    /// UTF-8 text, cut at `FprintProtocol.maximumStringLength` bytes.
    public mutating func string(_ value: String) {
        data(Array(value.utf8.prefix(FprintProtocol.maximumStringLength)))
    }
}

/// Reads one message; every accessor returns nil once anything is missing or out of bounds.
public struct WireReader {
    let bytes: [UInt8]
    var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset == bytes.count }

    public mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func u32() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return value
    }

    public mutating func i32() -> Int32? { u32().map { Int32(bitPattern: $0) } }

    public mutating func data(limit: Int) -> [UInt8]? {
        guard let length = u32(), let n = Int(exactly: length), n <= limit, bytes.count - offset >= n else { return nil }
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }

    /// UTF-8 text (invalid sequences become U+FFFD), at most `FprintProtocol.maximumStringLength` bytes.
    public mutating func string() -> String? {
        data(limit: FprintProtocol.maximumStringLength).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A count of items that follow, refused above `limit`.
    public mutating func count(limit: Int) -> Int? {
        guard let n = u32().flatMap({ Int(exactly: $0) }), n <= limit else { return nil }
        return n
    }
}

/// Splits a byte stream into frames: a 4-byte big-endian length, then that many bytes.
/// Frames longer than the limit are an error (the connection is then dropped, never read on).
public struct FrameBuffer {
    public enum Next: Equatable {
        case frame([UInt8])
        case needMore
        /// The peer announced a frame over the limit: stop reading from it.
        case tooLarge(UInt32)
    }

    var pending: [UInt8] = []
    let limit: Int
    /// Zero consumed bytes (frames that carry secrets).
    let wipes: Bool

    public init(limit: Int = FprintProtocol.maximumFrameLength, wipes: Bool = false) {
        self.limit = limit
        self.wipes = wipes
    }

    /// Bytes received but not yet returned as frames.
    public var buffered: Int { pending.count }

    public mutating func append(_ chunk: ArraySlice<UInt8>) {
        guard wipes, pending.capacity < pending.count + chunk.count else { return pending.append(contentsOf: chunk) }
        // Growing would release the old storage unwiped: copy into a new one, then wipe the old.
        var grown: [UInt8] = []
        grown.reserveCapacity(max(2 * pending.capacity, pending.count + chunk.count))
        grown.append(contentsOf: pending)
        grown.append(contentsOf: chunk)
        wipe()
        pending = grown
    }

    /// Zeroes and drops everything buffered.
    public mutating func wipe() {
        Memory.zero(&pending)
        pending.removeAll()
    }

    public mutating func next() -> Next {
        guard pending.count >= 4 else { return .needMore }
        var length: UInt32 = 0
        for i in 0..<4 { length = length << 8 | UInt32(pending[i]) }
        guard let n = Int(exactly: length), n <= limit else { return .tooLarge(length) }
        guard pending.count - 4 >= n else { return .needMore }
        let frame = Array(pending[4..<(4 + n)])
        if wipes {
            let rest = Array(pending[(4 + n)...])
            wipe()
            pending = rest
        } else {
            pending.removeFirst(4 + n)
        }
        return .frame(frame)
    }

    /// A whole frame for `payload` (length prefix included).
    public static func frame(_ payload: [UInt8]) -> [UInt8] {
        var w = WireWriter()
        w.u32(UInt32(clamping: payload.count))
        return w.bytes + payload
    }
}
