import XCTest
@testable import BiounlockDBus

/// Messages on the wire: what biounlock-fprintd writes reads back the same, what the bus sends
/// (captured from dbus-daemon 1.14) reads as it should, and anything malformed is refused whole.
final class MessageTests: XCTestCase {
    /// dbus-daemon's reply to Hello (serial 1), as it sent it to a client on a private bus.
    static let helloReply: [UInt8] = Array("l\u{02}\u{01}\u{01}\u{0c}\0\0\0\u{01}\0\0\0=\0\0\0\u{06}\u{01}s\0\u{07}\0\0\0:1.1304\0\u{05}\u{01}u\0\u{01}\0\0\0\u{08}\u{01}g\0\u{01}s\0\0\u{07}\u{01}s\0\u{14}\0\0\0org.freedesktop.DBus\0\0\0\0\u{07}\0\0\0:1.1304\0".utf8)

    func testTheBussReplyToHelloReads() throws {
        let m = try XCTUnwrap(DBusMessage.decode(MessageTests.helloReply))
        XCTAssertEqual(m.kind, .methodReturn)
        XCTAssertEqual(m.replySerial, 1)
        XCTAssertEqual(m.sender, "org.freedesktop.DBus")
        XCTAssertEqual(m.destination, ":1.1304")
        XCTAssertEqual(m.body, [.string(":1.1304")])
        XCTAssertEqual(m.serial, 1)
    }

    func testWhatIsWrittenReadsBackTheSame() throws {
        var call = DBusMessage.call("net.reactivated.Fprint", "/net/reactivated/Fprint/Device/0", "net.reactivated.Fprint.Device",
                                    "Claim", [.string("daemon")])
        let bytes = call.encoded(serial: 7)
        call.serial = 7
        XCTAssertEqual(DBusMessage.decode(bytes), call)

        let every: [DBusValue] = [
            .byte(0xff), .boolean(true), .int16(-2), .uint16(65535), .int32(-7), .uint32(7), .int64(-9), .uint64(9),
            .double(bits: 0x4009_21fb_5444_2d18), .string("ünïcode"), .objectPath("/a/b"), .signature("a{sv}"), .unixFD(0),
            .variant(.array(.string), .array(.string, [.string("x"), .string("")])),
            .array(.structure([.byte, .int64]), []),
            .array(.dictEntry(.string, .variant), [.dictEntry(.string("k"), .variant(.int32, .int32(1)))]),
            .structure([.byte(1), .structure([.int64(2), .string("s")])]),
        ]
        var signal = DBusMessage(kind: .signal, path: "/p", interface: "a.b", member: "M", sender: ":1.2", body: every)
        signal.serial = 9
        XCTAssertEqual(DBusMessage.decode(signal.encoded(serial: 9)), signal)

        var error = DBusMessage(kind: .error, errorName: "net.reactivated.Fprint.Error.AlreadyInUse", replySerial: 3, body: [.string("busy")])
        error.serial = 4
        XCTAssertEqual(DBusMessage.decode(error.encoded(serial: 4)), error)
    }

    /// A big-endian message (another machine's client through the bus) reads the same.
    func testBigEndianMessagesRead() throws {
        var m = DBusMessage(kind: .signal, path: "/net/reactivated/Fprint/Device/0", interface: "net.reactivated.Fprint.Device",
                            member: "VerifyStatus", sender: ":1.5", body: [.string("verify-match"), .boolean(true)])
        let little = m.encoded(serial: 0x01020304)
        m.serial = 0x01020304
        XCTAssertEqual(DBusMessage.decode(MessageTests.bigEndian(little)), m)
    }

    /// `bytes` (a little-endian message this encoder wrote, of strings, booleans, bytes and
    /// uint32s only) in big-endian order: each 4-byte number swapped where the format puts one.
    static func bigEndian(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        out[0] = UInt8(ascii: "B")
        func swap(_ at: Int) { out[at..<(at + 4)].reverse() }
        swap(4); swap(8); swap(12)
        var d = DBusDecoder(bytes: bytes, offset: 16, bigEndian: false)
        // Header fields: a(yv), each (code, signature, value).
        let fieldsEnd = 16 + Int(bytes[12]) + Int(bytes[13]) << 8
        while d.offset < fieldsEnd {
            _ = d.align(8)
            guard d.offset < fieldsEnd, let _ = d.u8(), let sig = d.signatureBytes(), let type = DBusType.single(sig) else { break }
            if type == .string || type == .objectPath || type == .uint32 { _ = d.align(4); swap(d.offset) }
            _ = d.value(type)
        }
        _ = d.align(8)
        var body = d
        while !body.isAtEnd {
            _ = body.align(4)
            let at = body.offset
            guard let n = body.u32() else { break }
            swap(at)
            if n > 1 { body = DBusDecoder(bytes: bytes, offset: at + 4 + Int(n) + 1, bigEndian: false) }
        }
        return out
    }

    func testMalformedMessagesAreRefusedWhole() {
        let good = DBusMessage(kind: .signal, path: "/p", interface: "a.b", member: "M", sender: ":1.2",
                               body: [.string("s"), .boolean(false)]).encoded(serial: 1)
        XCTAssertNotNil(DBusMessage.decode(good))
        func mutated(_ change: (inout [UInt8]) -> Void) -> [UInt8] { var b = good; change(&b); return b }
        XCTAssertNil(DBusMessage.decode(mutated { $0[0] = UInt8(ascii: "x") }), "endianness")
        XCTAssertNil(DBusMessage.decode(mutated { $0[1] = 5 }), "an unknown message type is ignored")
        XCTAssertNil(DBusMessage.decode(mutated { $0[3] = 2 }), "protocol version")
        XCTAssertNil(DBusMessage.decode(mutated { $0[8] = 0; $0[9] = 0; $0[10] = 0; $0[11] = 0 }), "serial 0")
        XCTAssertNil(DBusMessage.decode(mutated { $0[4] &+= 1 }), "body length")
        XCTAssertNil(DBusMessage.decode(Array(good.dropLast())), "truncated")
        XCTAssertNil(DBusMessage.decode(good + [0]), "trailing byte")
        XCTAssertNil(DBusMessage.decode(mutated { $0[$0.count - 4] = 2 }), "a boolean of 2")
        XCTAssertNil(DBusMessage.decode(Array(good.prefix(15))), "shorter than a fixed header")
        // The body: the string's length (4 bytes), "s", its NUL, two bytes of padding, the boolean.
        let s = good.count - 8
        XCTAssertEqual(good[s], UInt8(ascii: "s"))
        XCTAssertNil(DBusMessage.decode(mutated { $0[s + 1] = 1 }), "a string without its NUL")
        XCTAssertNil(DBusMessage.decode(mutated { $0[s + 2] = 1 }), "padding that is not zero")
        XCTAssertNil(DBusMessage.decode(mutated { $0[s] = 0xff }), "a string that is not UTF-8")
        XCTAssertNil(DBusMessage.decode(mutated { $0[s] = 0 }), "a NUL inside a string")

        // Required fields of each kind.
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .signal, path: "/p", member: "M").encoded(serial: 1)), "a signal needs its interface")
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .methodCall, path: "/p").encoded(serial: 1)), "a call needs its member")
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .methodReturn).encoded(serial: 1)), "a reply needs its reply serial")
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .error, replySerial: 1).encoded(serial: 1)), "an error needs its name")
        // Invalid names and paths in the header.
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .signal, path: "/p", interface: "nodot", member: "M").encoded(serial: 1)))
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .signal, path: "/p", interface: "a.b", member: "M", sender: "bad name").encoded(serial: 1)))
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .signal, path: "/p/", interface: "a.b", member: "M").encoded(serial: 1)))
    }

    func testNestingAndSizeAreBounded() {
        var deep = DBusValue.int32(1)
        for _ in 0..<80 { deep = .variant(deep.type, deep) }
        let m = DBusMessage(kind: .methodReturn, replySerial: 1, body: [deep]).encoded(serial: 1)
        XCTAssertNil(DBusMessage.decode(m), "80 variants deep: past the depth limit")
        var shallow = DBusValue.int32(1)
        for _ in 0..<30 { shallow = .variant(shallow.type, shallow) }
        XCTAssertNotNil(DBusMessage.decode(DBusMessage(kind: .methodReturn, replySerial: 1, body: [shallow]).encoded(serial: 1)))

        let many = DBusValue.array(.byte, Array(repeating: .byte(1), count: DBusDecoder.defaultBudget + 10))
        XCTAssertNil(DBusMessage.decode(DBusMessage(kind: .methodReturn, replySerial: 1, body: [many]).encoded(serial: 1)),
                     "more values than a message may hold")

        // An array whose length runs past the message.
        var bytes = DBusMessage(kind: .methodReturn, replySerial: 1, body: [.array(.int32, [.int32(1)])]).encoded(serial: 1)
        bytes[bytes.count - 8] = 0xf0
        XCTAssertNil(DBusMessage.decode(bytes))
    }
}
