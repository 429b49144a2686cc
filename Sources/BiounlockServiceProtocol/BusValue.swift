/// A D-Bus value as plain Swift data: what biounlockd's handlers take and return, what its
/// clients build and read. BiounlockBus converts it to and from GVariant; nothing here knows GLib,
/// so the handlers run (and are fuzzed) without a bus.
public indirect enum BusValue: Equatable, Sendable {
    case string(String)
    case objectPath(String)
    case boolean(Bool)
    case uint32(UInt32)
    case int32(Int32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// `h`: an index into the message's descriptor list.
    case handle(Int32)
    case variant(BusValue)
    /// `a` + the element signature (kept for empty arrays).
    case array(element: String, [BusValue])
    /// `a{..}`: key and value signatures, entries in order.
    case dictionary(key: String, value: String, [DictionaryEntry])
    case tuple([BusValue])

    public struct DictionaryEntry: Equatable, Sendable {
        public let key: BusValue
        public let value: BusValue
        public init(_ key: BusValue, _ value: BusValue) { self.key = key; self.value = value }
    }

    /// The value's D-Bus type signature.
    public var signature: String {
        switch self {
        case .string: return "s"
        case .objectPath: return "o"
        case .boolean: return "b"
        case .uint32: return "u"
        case .int32: return "i"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .handle: return "h"
        case .variant: return "v"
        case .array(let element, _): return "a" + element
        case .dictionary(let key, let value, _): return "a{" + key + value + "}"
        case .tuple(let members): return "(" + members.map(\.signature).joined() + ")"
        }
    }

    // MARK: reading

    public var string: String? { if case .string(let s) = self { return s }; return nil }
    public var bool: Bool? { if case .boolean(let b) = self { return b }; return nil }
    public var uint32: UInt32? { if case .uint32(let u) = self { return u }; return nil }
    public var int64: Int64? { if case .int64(let x) = self { return x }; return nil }
    public var handle: Int32? { if case .handle(let h) = self { return h }; return nil }
    public var unboxed: BusValue { if case .variant(let v) = self { return v.unboxed }; return self }
    public var elements: [BusValue]? {
        switch self {
        case .array(_, let items): return items
        case .tuple(let items): return items
        default: return nil
        }
    }

    /// The entries of an `a{sv}` (or any string-keyed dictionary), variants unboxed.
    public var fields: [String: BusValue]? {
        guard case .dictionary(_, _, let entries) = self else { return nil }
        var out: [String: BusValue] = [:]
        for e in entries { if let k = e.key.string { out[k] = e.value.unboxed } }
        return out
    }

    // MARK: building

    /// An `a{sv}` from (key, value) pairs, in order.
    public static func vardict(_ pairs: [(String, BusValue)]) -> BusValue {
        .dictionary(key: "s", value: "v", pairs.map { DictionaryEntry(.string($0.0), .variant($0.1)) })
    }

    public static func strings(_ items: [String]) -> BusValue {
        .array(element: "s", items.map(BusValue.string))
    }

    /// An `a(ss)` from pairs.
    public static func stringPairs(_ items: [(String, String)]) -> BusValue {
        .array(element: "(ss)", items.map { .tuple([.string($0.0), .string($0.1)]) })
    }
}
