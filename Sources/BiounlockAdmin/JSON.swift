import BiounlockCore

/// A small JSON value and writer for the CLI's `--json` output (no Foundation in this library).
/// Object keys keep their insertion order so the documented shape reads the same every time.
public indirect enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.serialized() == b.serialized() }

    public static func int(_ n: Int) -> JSON { .int(Int64(n)) }
    public static func optional(_ n: Int64?) -> JSON { n.map { .int($0) } ?? .null }
    public static func optionalTime(_ t: Int64?) -> JSON { t.map { .string(iso8601($0)) } ?? .null }

    public func serialized(pretty: Bool = true) -> String {
        var out = ""
        write(to: &out, indent: pretty ? 0 : nil)
        return out
    }

    private func write(to out: inout String, indent: Int?) {
        let newline = indent == nil ? "" : "\n"
        let pad = { (level: Int) in indent == nil ? "" : String(repeating: "  ", count: level) }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "[" + newline
            for (i, item) in items.enumerated() {
                out += pad((indent ?? 0) + 1)
                item.write(to: &out, indent: indent.map { $0 + 1 })
                out += (i + 1 < items.count ? "," : "") + newline
            }
            out += pad(indent ?? 0) + "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{" + newline
            for (i, (key, value)) in members.enumerated() {
                out += pad((indent ?? 0) + 1)
                JSON.writeString(key, to: &out)
                out += indent == nil ? ":" : ": "
                value.write(to: &out, indent: indent.map { $0 + 1 })
                out += (i + 1 < members.count ? "," : "") + newline
            }
            out += pad(indent ?? 0) + "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
