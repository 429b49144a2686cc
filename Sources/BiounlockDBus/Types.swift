/// D-Bus's type system (the specification's "Type System" and "Valid Signatures"), as far as a
/// client reads and writes messages: every type, so that any message the bus hands over can be
/// read -- or refused -- in full, never half.
///
/// Nothing here traps on any input: a signature is parsed from bytes with its limits checked
/// (255 bytes, 32 nested arrays, 32 nested structures and dict entries), and an invalid one is
/// nil, never a partial type.
public indirect enum DBusType: Equatable, Hashable, Sendable {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD, variant
    case array(DBusType)
    case structure([DBusType])
    /// Only as an array's element (`a{..}`), with a basic type as its key.
    case dictEntry(DBusType, DBusType)

    /// The longest signature (the specification's limit).
    public static let maximumSignatureLength = 255
    /// Most arrays nested in one another, and most structures (and dict entries).
    public static let maximumNesting = 32

    /// The type's code in a signature ("s", "a{sv}", "(so)").
    public var code: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return "h"
        case .variant: return "v"
        case .array(let element): return "a" + element.code
        case .structure(let fields): return "(" + fields.map(\.code).joined() + ")"
        case .dictEntry(let key, let value): return "{" + key.code + value.code + "}"
        }
    }

    /// Where a value of this type starts (its offset in the message is a multiple of this).
    public var alignment: Int {
        switch self {
        case .byte, .signature, .variant: return 1
        case .int16, .uint16: return 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array: return 4
        case .int64, .uint64, .double, .structure, .dictEntry: return 8
        }
    }

    /// A basic type: the only kind allowed as a dict entry's key.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .structure, .dictEntry: return false
        default: return true
        }
    }

    /// The signature of `types` in sequence ("" for none).
    public static func signature(_ types: [DBusType]) -> String { types.map(\.code).joined() }

    /// The complete types a signature lists, in order; nil when it is not a valid signature.
    public static func parse<S: Collection>(_ signature: S) -> [DBusType]? where S.Element == UInt8 {
        let bytes = Array(signature)
        guard bytes.count <= maximumSignatureLength else { return nil }
        var index = 0
        var out: [DBusType] = []
        while index < bytes.count {
            guard let type = parseOne(bytes, &index, arrays: 0, structures: 0) else { return nil }
            out.append(type)
        }
        return out
    }

    public static func parse(_ signature: String) -> [DBusType]? { parse(Array(signature.utf8)) }

    /// Exactly one complete type (a variant's signature), or nil.
    public static func single<S: Collection>(_ signature: S) -> DBusType? where S.Element == UInt8 {
        guard let types = parse(signature), types.count == 1 else { return nil }
        return types.first
    }

    private static func parseOne(_ b: [UInt8], _ i: inout Int, arrays: Int, structures: Int) -> DBusType? {
        guard i < b.count else { return nil }
        let c = b[i]
        i += 1
        switch c {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrays < maximumNesting else { return nil }
            if i < b.count, b[i] == UInt8(ascii: "{") {
                guard structures < maximumNesting else { return nil }
                i += 1
                guard let key = parseOne(b, &i, arrays: arrays + 1, structures: structures + 1), key.isBasic,
                      let value = parseOne(b, &i, arrays: arrays + 1, structures: structures + 1),
                      i < b.count, b[i] == UInt8(ascii: "}") else { return nil }
                i += 1
                return .array(.dictEntry(key, value))
            }
            guard let element = parseOne(b, &i, arrays: arrays + 1, structures: structures) else { return nil }
            return .array(element)
        case UInt8(ascii: "("):
            guard structures < maximumNesting else { return nil }
            var fields: [DBusType] = []
            while i < b.count, b[i] != UInt8(ascii: ")") {
                guard let field = parseOne(b, &i, arrays: arrays, structures: structures + 1) else { return nil }
                fields.append(field)
            }
            guard i < b.count, !fields.isEmpty else { return nil }
            i += 1
            return .structure(fields)
        default:
            return nil
        }
    }
}

/// One value of a D-Bus type. Doubles are kept as their bits (a client here never computes with
/// them, and bits compare exactly). Arrays carry their element type, so an empty one still has
/// a signature; variants carry the type of what they hold.
public indirect enum DBusValue: Equatable, Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(bits: UInt64)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(UInt32)
    case variant(DBusType, DBusValue)
    case array(DBusType, [DBusValue])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)

    public var type: DBusType {
        switch self {
        case .byte: return .byte
        case .boolean: return .boolean
        case .int16: return .int16
        case .uint16: return .uint16
        case .int32: return .int32
        case .uint32: return .uint32
        case .int64: return .int64
        case .uint64: return .uint64
        case .double: return .double
        case .string: return .string
        case .objectPath: return .objectPath
        case .signature: return .signature
        case .unixFD: return .unixFD
        case .variant: return .variant
        case .array(let element, _): return .array(element)
        case .structure(let fields): return .structure(fields.map(\.type))
        case .dictEntry(let key, let value): return .dictEntry(key.type, value.type)
        }
    }

    // Typed reads, nil for any other type.

    /// A string or an object path.
    public var text: String? {
        switch self {
        case .string(let s), .objectPath(let s): return s
        default: return nil
        }
    }

    public var bool: Bool? { if case .boolean(let b) = self { return b }; return nil }
    public var int32: Int32? { if case .int32(let n) = self { return n }; return nil }
    public var uint32: UInt32? { if case .uint32(let n) = self { return n }; return nil }

    /// What a variant holds.
    public var unboxed: DBusValue? { if case .variant(_, let v) = self { return v }; return nil }

    /// The strings of an array of strings or object paths, at most `limit` of them.
    public func strings(limit: Int) -> [String]? {
        guard case .array(let element, let items) = self, element == .string || element == .objectPath else { return nil }
        return items.prefix(max(0, limit)).compactMap(\.text)
    }

    /// The value under `key` of an `a{sv}` (properties), unboxed.
    public func property(_ key: String) -> DBusValue? {
        guard case .array(.dictEntry(.string, .variant), let entries) = self else { return nil }
        for case .dictEntry(.string(let k), let v) in entries where k == key { return v.unboxed }
        return nil
    }
}

/// The specification's rules for names and paths, checked wherever one is read or made.
public enum DBusNames {
    /// An object path: "/" or "/" followed by elements of [A-Za-z0-9_], separated by "/", none empty.
    public static func isObjectPath<S: Collection>(_ bytes: S) -> Bool where S.Element == UInt8 {
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var previousSlash = false
        for b in bytes {
            if b == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
            } else {
                guard isNameByte(b, digits: true) else { return false }
                previousSlash = false
            }
        }
        return !previousSlash
    }

    static func isNameByte(_ b: UInt8, digits: Bool) -> Bool {
        (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z"))
            || b == UInt8(ascii: "_") || (digits && b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
    }

    /// An interface or error name: two or more elements of [A-Za-z0-9_] separated by ".", none
    /// empty or starting with a digit, at most 255 bytes.
    public static func isInterfaceName(_ name: String) -> Bool {
        let elements = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard name.utf8.count <= 255, elements.count >= 2 else { return false }
        return elements.allSatisfy { e in
            guard let first = e.first, isNameByte(first, digits: false) else { return false }
            return e.allSatisfy { isNameByte($0, digits: true) }
        }
    }

    /// A member (method or signal) name: one element of [A-Za-z0-9_], not starting with a digit.
    public static func isMemberName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isNameByte(first, digits: false), name.utf8.count <= 255 else { return false }
        return name.utf8.allSatisfy { isNameByte($0, digits: true) }
    }

    /// A bus name: unique (":1.42", elements may start with a digit) or well-known
    /// ("net.reactivated.Fprint", [A-Za-z0-9_-]), at most 255 bytes, two or more elements.
    public static func isBusName(_ name: String) -> Bool {
        var bytes = Array(name.utf8)
        guard bytes.count <= 255, !bytes.isEmpty else { return false }
        let unique = bytes[0] == UInt8(ascii: ":")
        if unique { bytes.removeFirst() }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { e in
            guard let first = e.first else { return false }
            if !unique && first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9") { return false }
            return e.allSatisfy { isNameByte($0, digits: true) || $0 == UInt8(ascii: "-") }
        }
    }
}
