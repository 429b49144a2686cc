/// The D-Bus wire format of values (the specification's "Marshaling"): every value aligned to its
/// type's boundary counted from the start of the message, padding zero, integers in the message's
/// byte order. Writing is always little-endian; reading takes either order.
///
/// The reader never traps: every read checks what is left of the message, every length its
/// limit, padding is zero, strings valid UTF-8 without NUL, object paths and signatures valid,
/// booleans 0 or 1, nesting (variants included) at most 64 deep, and at most `budget` values in a
/// message. Anything else makes the value -- and the message -- nil.

/// Writes values into a message under construction (little-endian).
public struct DBusEncoder {
    public private(set) var bytes: [UInt8]

    public init(bytes: [UInt8] = []) { self.bytes = bytes }

    /// Raw bytes (a message's fixed header).
    public mutating func append(_ raw: [UInt8]) { bytes.append(contentsOf: raw) }

    public mutating func align(_ boundary: Int) {
        while bytes.count % boundary != 0 { bytes.append(0) }
    }

    mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    public mutating func u32(_ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    mutating func u64(_ v: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    mutating func text(_ s: String) {
        u32(UInt32(clamping: s.utf8.count))
        bytes.append(contentsOf: s.utf8)
        bytes.append(0)
    }

    mutating func signatureText(_ s: String) {
        bytes.append(UInt8(clamping: s.utf8.count))
        bytes.append(contentsOf: s.utf8.prefix(255))
        bytes.append(0)
    }

    /// Appends `value`, aligned. Values built by this client are well-formed by construction
    /// (names and paths checked where they are made); nothing here validates them again.
    public mutating func value(_ value: DBusValue) {
        align(value.type.alignment)
        switch value {
        case .byte(let v): bytes.append(v)
        case .boolean(let v): u32(v ? 1 : 0)
        case .int16(let v): u16(UInt16(bitPattern: v))
        case .uint16(let v): u16(v)
        case .int32(let v): u32(UInt32(bitPattern: v))
        case .uint32(let v), .unixFD(let v): u32(v)
        case .int64(let v): u64(UInt64(bitPattern: v))
        case .uint64(let v), .double(bits: let v): u64(v)
        case .string(let s), .objectPath(let s): text(s)
        case .signature(let s): signatureText(s)
        case .variant(let type, let inner):
            signatureText(type.code)
            self.value(inner)
        case .array(let element, let items):
            let lengthAt = bytes.count
            u32(0)
            align(element.alignment)
            let start = bytes.count
            for item in items { self.value(item) }
            let length = UInt32(clamping: bytes.count - start)
            for i in 0..<4 { bytes[lengthAt + i] = UInt8(truncatingIfNeeded: length >> UInt32(8 * i)) }
        case .structure(let fields):
            for field in fields { self.value(field) }
        case .dictEntry(let key, let v):
            self.value(key)
            self.value(v)
        }
    }
}

/// Reads values from one whole message (`bytes`), from `offset`, never past `end`.
public struct DBusDecoder {
    let bytes: [UInt8]
    public private(set) var offset: Int
    var end: Int
    let bigEndian: Bool
    /// Values still allowed in this message (each scalar, container and variant counts one).
    var budget: Int

    /// Longest array (the specification's limit: 64 MiB).
    public static let maximumArrayLength = 64 * 1024 * 1024
    /// Deepest nesting of containers and variants in one value.
    public static let maximumDepth = 64
    /// Most values read from one message.
    public static let defaultBudget = 16 * 1024

    public init(bytes: [UInt8], offset: Int = 0, end: Int? = nil, bigEndian: Bool, budget: Int = DBusDecoder.defaultBudget) {
        self.bytes = bytes
        self.offset = max(0, min(offset, bytes.count))
        self.end = max(self.offset, min(end ?? bytes.count, bytes.count))
        self.bigEndian = bigEndian
        self.budget = budget
    }

    public var isAtEnd: Bool { offset == end }

    /// Skips to the next multiple of `boundary`; the padding must be there and be zero.
    public mutating func align(_ boundary: Int) -> Bool {
        guard boundary > 1 else { return true }
        let pad = (boundary - offset % boundary) % boundary
        guard end - offset >= pad else { return false }
        for i in offset..<(offset + pad) where bytes[i] != 0 { return false }
        offset += pad
        return true
    }

    mutating func raw(_ count: Int) -> UInt64? {
        guard count > 0, end - offset >= count else { return nil }
        var v: UInt64 = 0
        for i in 0..<count {
            let b = UInt64(bytes[offset + (bigEndian ? i : count - 1 - i)])
            v = v << 8 | b
        }
        offset += count
        return v
    }

    public mutating func u8() -> UInt8? { raw(1).map { UInt8(truncatingIfNeeded: $0) } }

    public mutating func u32() -> UInt32? {
        guard align(4) else { return nil }
        return raw(4).map { UInt32(truncatingIfNeeded: $0) }
    }

    /// `count` bytes and the NUL after them; valid UTF-8, no NUL inside.
    mutating func textBytes(_ count: Int) -> [UInt8]? {
        guard end - offset > count else { return nil }
        let slice = bytes[offset..<(offset + count)]
        guard bytes[offset + count] == 0, !slice.contains(0) else { return nil }
        offset += count + 1
        return Array(slice)
    }

    mutating func string() -> String? {
        guard let length = u32(), let n = Int(exactly: length), let b = textBytes(n) else { return nil }
        return String(validating: b, as: UTF8.self)
    }

    mutating func signatureBytes() -> [UInt8]? {
        guard let n = u8() else { return nil }
        return textBytes(Int(n))
    }

    /// A value of `type`; nil when the bytes do not hold one.
    public mutating func value(_ type: DBusType, depth: Int = 0) -> DBusValue? {
        guard depth <= DBusDecoder.maximumDepth, budget > 0 else { return nil }
        budget -= 1
        guard align(type.alignment) else { return nil }
        switch type {
        case .byte: return u8().map(DBusValue.byte)
        case .boolean:
            guard let v = raw(4), v <= 1 else { return nil }
            return .boolean(v == 1)
        case .int16: return raw(2).map { .int16(Int16(bitPattern: UInt16(truncatingIfNeeded: $0))) }
        case .uint16: return raw(2).map { .uint16(UInt16(truncatingIfNeeded: $0)) }
        case .int32: return raw(4).map { .int32(Int32(bitPattern: UInt32(truncatingIfNeeded: $0))) }
        case .uint32: return raw(4).map { .uint32(UInt32(truncatingIfNeeded: $0)) }
        case .unixFD: return raw(4).map { .unixFD(UInt32(truncatingIfNeeded: $0)) }
        case .int64: return raw(8).map { .int64(Int64(bitPattern: $0)) }
        case .uint64: return raw(8).map { .uint64($0) }
        case .double: return raw(8).map { .double(bits: $0) }
        case .string: return string().map(DBusValue.string)
        case .objectPath:
            guard let s = string(), DBusNames.isObjectPath(s.utf8) else { return nil }
            return .objectPath(s)
        case .signature:
            guard let b = signatureBytes(), DBusType.parse(b) != nil else { return nil }
            return .signature(String(decoding: b, as: UTF8.self))
        case .variant:
            guard let b = signatureBytes(), let inner = DBusType.single(b), let v = value(inner, depth: depth + 1) else { return nil }
            return .variant(inner, v)
        case .array(let element):
            guard let length = u32(), let n = Int(exactly: length), n <= DBusDecoder.maximumArrayLength,
                  align(element.alignment), end - offset >= n else { return nil }
            let stop = offset + n
            let outer = end
            end = stop
            defer { end = outer }
            var items: [DBusValue] = []
            while offset < stop {
                guard let item = value(element, depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(element, items)
        case .structure(let fields):
            var values: [DBusValue] = []
            for field in fields {
                guard let v = value(field, depth: depth + 1) else { return nil }
                values.append(v)
            }
            return .structure(values)
        case .dictEntry(let key, let valueType):
            guard let k = value(key, depth: depth + 1), let v = value(valueType, depth: depth + 1) else { return nil }
            return .dictEntry(k, v)
        }
    }
}
