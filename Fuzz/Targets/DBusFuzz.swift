import BiounlockSystem
import BiounlockDBus
import Glibc

// Fuzz target: what biounlock-fprintd reads from the system bus -- anyone on the bus can send it
// messages (signals, unicast calls, replies to serials it guesses), and the bus forwards them:
// the handshake's answer line, then the stream cut into messages (DBusStream: lengths from the
// fixed header, oversized messages dropped) and each message read (DBusMessage.decode: header
// fields, signatures, every type, nesting and value limits), through a real socket and
// DBusConnection.receive as the helper reads it.
//
// Input: one byte that sets how the stream arrives to DBusStream (chunks of 1-256 bytes), then the
// stream ("OK ...\r\n" and messages). Nothing may trap. Checks: the chunking never changes the
// messages; the socket read yields the same messages (those that parse); a parsed message
// written again (little-endian) reads back equal and stays within the limits.

func cut(_ stream: ArraySlice<UInt8>, chunk: Int) -> (line: [UInt8]?, messages: [[UInt8]], broken: Bool) {
    var s = DBusStream(limit: DBusConnection.messageLimit)
    var offset = stream.startIndex
    var line: [UInt8]?
    var out: [[UInt8]] = []
    while true {
        if line == nil {
            switch s.line() {
            case .success(let l)?: line = l; continue
            case .failure?: return (nil, out, true)
            case nil: break
            }
        } else {
            switch s.next() {
            case .message(let m):
                precondition(m.count <= DBusConnection.messageLimit, "a message over the limit")
                out.append(m)
                continue
            case .broken: return (line, out, true)
            case .needMore: break
            }
        }
        guard offset < stream.endIndex else { return (line, out, false) }
        let end = min(offset + chunk, stream.endIndex)
        s.append(stream[offset..<end])
        offset = end
    }
}

func depth(_ v: DBusValue) -> Int {
    switch v {
    case .variant(_, let inner): return 1 + depth(inner)
    case .array(_, let items): return 1 + (items.map(depth).max() ?? 0)
    case .structure(let fields): return 1 + (fields.map(depth).max() ?? 0)
    case .dictEntry(let k, let x): return 1 + max(depth(k), depth(x))
    default: return 0
    }
}

func check(_ m: DBusMessage) {
    var again = DBusMessage.decode(m.encoded(serial: m.serial))
    again?.flags = m.flags
    precondition(again == m, "a message read, written and read again changed")
    for v in m.body { precondition(depth(v) <= DBusDecoder.maximumDepth + 1, "nesting over the limit") }
    _ = m.body.map { $0.strings(limit: 16) }
    _ = m.body.first?.property("name")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBus(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let first = input.first else { return 0 }
    let stream = Array(input.dropFirst())[...]
    let chunked = cut(stream, chunk: Int(first) + 1)
    let whole = cut(stream, chunk: max(stream.count, 1))
    precondition(chunked.line == whole.line && chunked.messages == whole.messages && chunked.broken == whole.broken,
                 "the chunking changed the messages")
    let parsed = whole.messages.compactMap(DBusMessage.decode)
    for m in parsed { check(m) }

    // The same bytes through a socket, as biounlock-fprintd reads the bus.
    var pair: [Int32] = [-1, -1]
    guard stream.count <= 64 * 1024, socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else { return 0 }
    let written = Array(stream).withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return send(pair[1], base, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    }
    shutdown(pair[1], Int32(SHUT_WR))
    defer { close(pair[1]) }
    guard written == stream.count else { close(pair[0]); return 0 }
    let connection = DBusConnection.adopting(connected: pair[0])
    var read: [DBusMessage] = []
    loop: while true {
        switch connection.receive(until: .after(milliseconds: 5000)) {
        case .message(let m): read.append(m)
        case .failed, .timedOut, .watched: break loop
        }
    }
    let accepted = whole.line.map { $0.starts(with: Array("OK ".utf8)) } ?? false
    precondition(read == (accepted ? parsed : []), "the socket read other messages than the stream")
    return 0
}
