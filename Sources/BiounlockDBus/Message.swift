/// One D-Bus message (the specification's "Message Format"): its header fields and its body.
public struct DBusMessage: Equatable, Sendable {
    public enum Kind: UInt8, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    /// NO_REPLY_EXPECTED.
    public static let noReplyExpected: UInt8 = 0x1

    public var kind: Kind
    public var flags: UInt8 = 0
    /// Set by the connection when it sends the message.
    public var serial: UInt32 = 0
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var replySerial: UInt32?
    public var destination: String?
    /// Stamped by the bus on every message it routes: the sender's unique name, or
    /// `org.freedesktop.DBus` for the bus itself. No client can send as another.
    public var sender: String?
    public var body: [DBusValue] = []

    public init(kind: Kind, path: String? = nil, interface: String? = nil, member: String? = nil, errorName: String? = nil,
                replySerial: UInt32? = nil, destination: String? = nil, sender: String? = nil, body: [DBusValue] = []) {
        self.kind = kind; self.path = path; self.interface = interface; self.member = member; self.errorName = errorName
        self.replySerial = replySerial; self.destination = destination; self.sender = sender; self.body = body
    }

    /// A method call.
    public static func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
                            _ arguments: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodCall, path: path, interface: interface, member: member, destination: destination, body: arguments)
    }

    /// The first string of the body (an error's message, a name's owner).
    public var firstText: String? { body.first?.text }

    // The header field codes.
    static let pathField: UInt8 = 1, interfaceField: UInt8 = 2, memberField: UInt8 = 3, errorNameField: UInt8 = 4
    static let replySerialField: UInt8 = 5, destinationField: UInt8 = 6, senderField: UInt8 = 7, signatureField: UInt8 = 8

    /// The whole message on the wire (little-endian), with `serial`.
    public func encoded(serial: UInt32) -> [UInt8] {
        var fields: [DBusValue] = []
        func field(_ code: UInt8, _ value: DBusValue?) {
            guard let value else { return }
            fields.append(.structure([.byte(code), .variant(value.type, value)]))
        }
        field(DBusMessage.pathField, path.map(DBusValue.objectPath))
        field(DBusMessage.interfaceField, interface.map(DBusValue.string))
        field(DBusMessage.memberField, member.map(DBusValue.string))
        field(DBusMessage.errorNameField, errorName.map(DBusValue.string))
        field(DBusMessage.replySerialField, replySerial.map(DBusValue.uint32))
        field(DBusMessage.destinationField, destination.map(DBusValue.string))
        field(DBusMessage.senderField, sender.map(DBusValue.string))
        if !body.isEmpty { field(DBusMessage.signatureField, .signature(DBusType.signature(body.map(\.type)))) }

        var header = DBusEncoder()
        header.append([UInt8(ascii: "l"), kind.rawValue, flags, 1])
        header.u32(0)  // body length, set below
        header.u32(serial)
        header.value(.array(.structure([.byte, .variant]), fields))
        header.align(8)
        var body = DBusEncoder(bytes: header.bytes)
        let start = body.bytes.count
        for v in self.body { body.value(v) }
        var out = body.bytes
        let length = UInt32(clamping: out.count - start)
        for i in 0..<4 { out[4 + i] = UInt8(truncatingIfNeeded: length >> UInt32(8 * i)) }
        return out
    }

    /// Reads one whole message (exactly `bytes`, as `DBusStream` cuts them). Nil when it is not a
    /// valid message this client can read: another protocol version, an unknown message type
    /// (the specification says to ignore those), a header field of the wrong type, a kind
    /// without its required fields, a body that is not what its signature says, or lengths that
    /// do not add up.
    public static func decode(_ bytes: [UInt8]) -> DBusMessage? {
        guard bytes.count >= 16 else { return nil }
        let bigEndian: Bool
        switch bytes[0] {
        case UInt8(ascii: "l"): bigEndian = false
        case UInt8(ascii: "B"): bigEndian = true
        default: return nil
        }
        guard let kind = Kind(rawValue: bytes[1]), bytes[3] == 1 else { return nil }
        var d = DBusDecoder(bytes: bytes, offset: 4, bigEndian: bigEndian)
        guard let bodyLength = d.u32(), let serial = d.u32(), serial != 0,
              case .array(_, let fields)? = d.value(.array(.structure([.byte, .variant]))), d.align(8),
              let n = Int(exactly: bodyLength), bytes.count - d.offset == n else { return nil }
        var m = DBusMessage(kind: kind)
        m.flags = bytes[2]
        m.serial = serial
        var signature: [DBusType] = []
        for case .structure(let pair) in fields {
            guard pair.count == 2, case .byte(let code) = pair[0], case .variant(_, let v) = pair[1] else { return nil }
            switch (code, v) {
            case (pathField, .objectPath(let s)): m.path = s
            case (interfaceField, .string(let s)) where DBusNames.isInterfaceName(s): m.interface = s
            case (memberField, .string(let s)) where DBusNames.isMemberName(s): m.member = s
            case (errorNameField, .string(let s)) where DBusNames.isInterfaceName(s): m.errorName = s
            case (replySerialField, .uint32(let s)) where s != 0: m.replySerial = s
            case (destinationField, .string(let s)) where DBusNames.isBusName(s): m.destination = s
            case (senderField, .string(let s)) where DBusNames.isBusName(s): m.sender = s
            case (signatureField, .signature(let s)):
                guard let types = DBusType.parse(s) else { return nil }
                signature = types
            case (1...9, _): return nil   // a known field of the wrong type, or an invalid name
            default: break                // an unknown field: skipped, as the specification says
            }
        }
        switch kind {
        case .methodCall: guard m.path != nil, m.member != nil else { return nil }
        case .signal: guard m.path != nil, m.interface != nil, m.member != nil else { return nil }
        case .error: guard m.errorName != nil, m.replySerial != nil else { return nil }
        case .methodReturn: guard m.replySerial != nil else { return nil }
        }
        var body = d
        for type in signature {
            guard let v = body.value(type) else { return nil }
            m.body.append(v)
        }
        guard body.isAtEnd else { return nil }
        return m
    }
}

/// Cuts a byte stream from the bus into whole messages, from their fixed header alone: the
/// length of the header fields and of the body. A message longer than `limit` is skipped
/// (its bytes read and dropped, counted in `skipped`), never buffered; a stream that does not
/// start a message where one must start is broken (the connection is then dropped).
public struct DBusStream {
    public enum Next: Equatable {
        case message([UInt8])
        case needMore
        case broken
    }

    /// The specification's limit on a message.
    public static let maximumMessageLength = 128 * 1024 * 1024

    let limit: Int
    var pending: [UInt8] = []
    var start = 0
    /// Bytes of an oversized message still to drop.
    var discarding = 0
    /// Oversized messages dropped so far.
    public private(set) var skipped = 0

    public init(limit: Int) { self.limit = min(limit, DBusStream.maximumMessageLength) }

    /// Bytes received and not yet returned or dropped.
    public var buffered: Int { pending.count - start }

    public mutating func append<C: Collection>(_ chunk: C) where C.Element == UInt8 {
        if start > 0 && start >= pending.count / 2 {
            pending.removeFirst(start)
            start = 0
        }
        pending.append(contentsOf: chunk)
    }

    /// The first line (SASL, before the messages), without its "\r\n"; nil until it is complete;
    /// `.failure` when none came within `maximum` bytes.
    public mutating func line(maximum: Int = 16 * 1024) -> Result<[UInt8], Overlong>? {
        var i = start
        while i + 1 < pending.count {
            if pending[i] == UInt8(ascii: "\r") && pending[i + 1] == UInt8(ascii: "\n") {
                let line = Array(pending[start..<i])
                start = i + 2
                return .success(line)
            }
            i += 1
        }
        return buffered > maximum ? .failure(Overlong()) : nil
    }

    public struct Overlong: Error {}

    public mutating func next() -> Next {
        while true {
            if discarding > 0 {
                let n = min(discarding, buffered)
                start += n
                discarding -= n
                if discarding > 0 { return .needMore }
            }
            guard buffered >= 16 else { return .needMore }
            let bigEndian: Bool
            switch pending[start] {
            case UInt8(ascii: "l"): bigEndian = false
            case UInt8(ascii: "B"): bigEndian = true
            default: return .broken
            }
            func u32(at i: Int) -> Int {
                var v = 0
                for k in 0..<4 { v = v << 8 | Int(pending[start + i + (bigEndian ? k : 3 - k)]) }
                return v
            }
            let body = u32(at: 4), fields = u32(at: 12)
            guard fields <= DBusDecoder.maximumArrayLength else { return .broken }
            let headerEnd = (16 + fields + 7) / 8 * 8
            let total = headerEnd + body
            guard total <= DBusStream.maximumMessageLength else { return .broken }
            if total > limit {
                discarding = total
                skipped += 1
                continue
            }
            guard buffered >= total else { return .needMore }
            let message = Array(pending[start..<(start + total)])
            start += total
            return .message(message)
        }
    }
}
