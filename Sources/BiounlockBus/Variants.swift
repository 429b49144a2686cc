import CGIO
import BiounlockServiceProtocol

// The one place where GVariant's ownership rules are handled: BusValue in, a floating
// GVariant out (for a call that consumes it); a GVariant borrowed, BusValue out.

public enum Variants {
    /// Deepest nesting and most children read from a GVariant: what no caller of ours sends,
    /// so that a hostile message cannot make the reader recurse or allocate without end.
    public static let maximumDepth = 16
    public static let maximumChildren = 4096

    /// A new floating GVariant for `value` (never nil: every BusValue has a GVariant).
    public static func make(_ value: BusValue) -> OpaquePointer {
        switch value {
        case .string(let s): return g_variant_new_string(cleanText(s))
        case .objectPath(let s):
            let path = cleanText(s)
            return g_variant_is_object_path(path) != 0 ? g_variant_new_object_path(path) : g_variant_new_object_path("/")
        case .boolean(let b): return g_variant_new_boolean(b ? 1 : 0)
        case .uint32(let u): return g_variant_new_uint32(u)
        case .int32(let i): return g_variant_new_int32(i)
        case .int64(let x): return g_variant_new_int64(gint64(x))
        case .uint64(let t): return g_variant_new_uint64(guint64(t))
        case .double(let d): return g_variant_new_double(d)
        case .handle(let h): return g_variant_new_handle(h)
        case .variant(let inner): return g_variant_new_variant(make(inner))
        case .array(let element, let items):
            var children: [OpaquePointer?] = items.map { make($0) }
            return element.withCString { type in
                children.withUnsafeMutableBufferPointer { g_variant_new_array(biounlock_variant_type(type), $0.baseAddress, gsize($0.count)) }
            }
        case .dictionary(let key, let valueType, let entries):
            var children: [OpaquePointer?] = entries.map { g_variant_new_dict_entry(make($0.key), make($0.value)) }
            return "{\(key)\(valueType)}".withCString { type in
                children.withUnsafeMutableBufferPointer { g_variant_new_array(biounlock_variant_type(type), $0.baseAddress, gsize($0.count)) }
            }
        case .tuple(let members):
            var children: [OpaquePointer?] = members.map { make($0) }
            return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        }
    }

    /// GVariant strings are UTF-8 without NUL (Swift strings are UTF-8 already; a NUL would cut
    /// the C string short or trip GLib's checks): NULs are dropped.
    static func cleanText(_ s: String) -> String {
        s.utf8.contains(0) ? String(decoding: s.utf8.filter { $0 != 0 }, as: UTF8.self) : s
    }

    /// The value of a GVariant the caller holds (transfer none); nil for types biounlock never
    /// uses (maybe types), or beyond the depth and size bounds.
    public static func read(_ v: OpaquePointer, depth: Int = 0) -> BusValue? {
        guard depth <= maximumDepth, let typeString = g_variant_get_type_string(v) else { return nil }
        let type = String(cString: typeString)
        guard let first = type.utf8.first else { return nil }
        switch first {
        case UInt8(ascii: "s"), UInt8(ascii: "g"):
            return .string(text(v))
        case UInt8(ascii: "o"): return .objectPath(text(v))
        case UInt8(ascii: "b"): return .boolean(g_variant_get_boolean(v) != 0)
        case UInt8(ascii: "y"): return .uint32(UInt32(g_variant_get_byte(v)))
        case UInt8(ascii: "n"): return .int32(Int32(g_variant_get_int16(v)))
        case UInt8(ascii: "q"): return .uint32(UInt32(g_variant_get_uint16(v)))
        case UInt8(ascii: "i"): return .int32(g_variant_get_int32(v))
        case UInt8(ascii: "u"): return .uint32(g_variant_get_uint32(v))
        case UInt8(ascii: "x"): return .int64(Int64(g_variant_get_int64(v)))
        case UInt8(ascii: "t"): return .uint64(UInt64(g_variant_get_uint64(v)))
        case UInt8(ascii: "d"): return .double(g_variant_get_double(v))
        case UInt8(ascii: "h"): return .handle(g_variant_get_handle(v))
        case UInt8(ascii: "v"):
            guard let inner = g_variant_get_variant(v) else { return nil }
            defer { g_variant_unref(inner) }
            return read(inner, depth: depth + 1).map(BusValue.variant)
        case UInt8(ascii: "a"):
            let element = String(type.dropFirst())
            let count = Int(clamping: g_variant_n_children(v))
            guard count <= maximumChildren else { return nil }
            if element.hasPrefix("{") && element.hasSuffix("}") && element.utf8.count >= 4 {
                let inner = element.dropFirst().dropLast()
                let key = String(inner.prefix(1))
                let value = String(inner.dropFirst())
                var entries: [BusValue.DictionaryEntry] = []
                for i in 0..<count {
                    guard let entry = g_variant_get_child_value(v, gsize(i)) else { return nil }
                    defer { g_variant_unref(entry) }
                    guard let k = g_variant_get_child_value(entry, 0), let val = g_variant_get_child_value(entry, 1) else { return nil }
                    defer { g_variant_unref(k); g_variant_unref(val) }
                    guard let kv = read(k, depth: depth + 1), let vv = read(val, depth: depth + 1) else { return nil }
                    entries.append(.init(kv, vv))
                }
                return .dictionary(key: key, value: value, entries)
            }
            var items: [BusValue] = []
            for i in 0..<count {
                guard let child = g_variant_get_child_value(v, gsize(i)) else { return nil }
                defer { g_variant_unref(child) }
                guard let item = read(child, depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(element: element, items)
        case UInt8(ascii: "("):
            let count = Int(clamping: g_variant_n_children(v))
            guard count <= maximumChildren else { return nil }
            var members: [BusValue] = []
            for i in 0..<count {
                guard let child = g_variant_get_child_value(v, gsize(i)) else { return nil }
                defer { g_variant_unref(child) }
                guard let member = read(child, depth: depth + 1) else { return nil }
                members.append(member)
            }
            return .tuple(members)
        default:
            return nil
        }
    }

    /// A string's text; D-Bus strings are valid UTF-8 (the bus and GDBus check them).
    static func text(_ v: OpaquePointer) -> String {
        var length: gsize = 0
        guard let p = g_variant_get_string(v, &length) else { return "" }
        return p.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self)
        }
    }
}
