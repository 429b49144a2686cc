import XCTest
import Glibc
import BiounlockSystem
@testable import BiounlockDBus

/// The byte stream from the bus: the handshake's answer line, then whole messages however the
/// bytes arrive; a message over the limit is dropped whole and the stream stays in step.
final class StreamTests: XCTestCase {
    let one = DBusMessage(kind: .signal, path: "/p", interface: "a.b", member: "M", sender: ":1.2", body: [.string("one")]).encoded(serial: 1)
    let two = DBusMessage(kind: .methodReturn, replySerial: 4, sender: ":1.2", body: [.uint32(2)]).encoded(serial: 2)

    func testMessagesAreCutTheSameWhateverTheChunks() {
        let all = Array("OK 1234\r\n".utf8) + one + two
        for size in [1, 2, 3, 7, 16, 64, all.count] {
            var stream = DBusStream(limit: 1 << 20)
            var out: [[UInt8]] = []
            var line: [UInt8]?
            var offset = 0
            while offset < all.count {
                let end = min(offset + size, all.count)
                stream.append(all[offset..<end])
                offset = end
                if line == nil, case .success(let l)? = stream.line() { line = l }
                if line != nil { while case .message(let m) = stream.next() { out.append(m) } }
            }
            XCTAssertEqual(line, Array("OK 1234".utf8), "chunks of \(size)")
            XCTAssertEqual(out, [one, two], "chunks of \(size)")
            XCTAssertEqual(stream.buffered, 0)
        }
    }

    func testAnOversizedMessageIsDroppedAndTheStreamStaysInStep() {
        var stream = DBusStream(limit: two.count)
        stream.append(one + two)
        XCTAssertEqual(stream.next(), .message(two), "one is longer than the limit: dropped")
        XCTAssertEqual(stream.skipped, 1)
        // Dropped as it arrives, never buffered whole.
        var slow = DBusStream(limit: 32)
        slow.append(one.prefix(20))
        XCTAssertEqual(slow.next(), .needMore)
        slow.append(one.dropFirst(20))
        slow.append(two.prefix(3))
        XCTAssertEqual(slow.next(), .needMore)
        XCTAssertEqual(slow.buffered, 3)
    }

    func testAStreamThatIsNotDBusIsBroken() {
        var stream = DBusStream(limit: 1 << 20)
        stream.append(Array("GET / HTTP/1.0\r\n\r\n".utf8))
        XCTAssertEqual(stream.next(), .broken)
        var huge = DBusStream(limit: 1 << 20)
        huge.append([UInt8(ascii: "l"), 2, 0, 1, 0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(huge.next(), .broken, "longer than the specification allows")
        var noLine = DBusStream(limit: 1 << 20)
        noLine.append([UInt8](repeating: UInt8(ascii: "x"), count: 20_000))
        guard case .failure? = noLine.line() else { return XCTFail("an answer line of 20,000 bytes") }
    }

    /// The connection against a bus played by the test on a real Unix socket: one write holds the
    /// handshake, BEGIN, Hello and the caller's first call; replies come back in order.
    func testOpenSendsTheHandshakeHelloAndTheFirstCallsInOneWrite() throws {
        var template = Array("/tmp/bu-dbus.XXXXXX".utf8CString)
        let dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { unlink(dir + "/bus"); rmdir(dir) }
        let listener = try FileDescriptor.localStreamSocket(nonBlocking: false)
        try listener.descriptor.bind(to: try XCTUnwrap(LocalSocketAddress(dir + "/bus")))
        try listener.descriptor.listen(backlog: 1)

        XCTAssertEqual(DBusConnection.socketPath(of: "unix:path=\(dir)/bus"), dir + "/bus")
        for bad in ["unix:abstract=x", "unix:path=relative", "unix:path=/a,guid=1", "tcp:host=x", "unix:path=/a;unix:path=/b", "autolaunch:"] {
            XCTAssertNil(DBusConnection.socketPath(of: bad), bad)
            guard case .failure(.address) = DBusConnection.open(address: bad, first: [], deadline: .after(milliseconds: 100)) else {
                return XCTFail("\(bad) was not refused")
            }
        }
        let call = DBusMessage.call("net.reactivated.Fprint", "/net/reactivated/Fprint/Manager", "net.reactivated.Fprint.Manager", "GetDevices")
        let (connection, serials) = try DBusConnection.open(address: "unix:path=\(dir)/bus", first: [call], deadline: .after(milliseconds: 5000)).get()
        XCTAssertEqual(serials, [2], "Hello is serial 1")
        let bus = try listener.descriptor.accept()
        var received = [UInt8](repeating: 0, count: 4096)
        let n = try bus.descriptor.read(into: &received)
        let uid = Array(String(getuid()).utf8).map { String(format: "%02x", $0) }.joined()
        let handshake = Array("\0AUTH EXTERNAL \(uid)\r\nBEGIN\r\n".utf8)
        XCTAssertEqual(Array(received.prefix(handshake.count)), handshake)
        var stream = DBusStream(limit: 1 << 20)
        stream.append(received[handshake.count..<n])
        guard case .message(let hello) = stream.next(), case .message(let first) = stream.next() else { return XCTFail("two messages") }
        XCTAssertEqual(DBusMessage.decode(hello)?.member, "Hello")
        XCTAssertEqual(DBusMessage.decode(first)?.member, "GetDevices")
        XCTAssertEqual(DBusMessage.decode(first)?.serial, 2)

        // Nothing before the answer line; then the messages, in order; a malformed one dropped.
        XCTAssertEqual(connection.receive(until: .after(milliseconds: 0)), .timedOut)
        let reply = DBusMessage(kind: .methodReturn, replySerial: 2, sender: ":1.9", body: [.array(.objectPath, [])])
        var garbled = one
        garbled[1] = 9
        try bus.descriptor.writeAll(Array("OK 0123456789abcdef\r\n".utf8) + MessageTests.helloReply + garbled + reply.encoded(serial: 5))
        guard case .message(let m1) = connection.receive(until: .after(milliseconds: 5000)) else { return XCTFail("Hello's reply") }
        XCTAssertEqual(m1.replySerial, 1)
        guard case .message(let m2) = connection.receive(until: .after(milliseconds: 5000)) else { return XCTFail("GetDevices's reply") }
        XCTAssertEqual(m2.replySerial, 2)
        XCTAssertEqual(connection.unreadable, 1)

        // A watched descriptor ends the wait; the bus closing ends the connection.
        let pair = try FileDescriptor.localStreamPair()
        try pair.second.descriptor.writeAll([1])
        XCTAssertEqual(connection.receive(until: .after(milliseconds: 5000), watching: pair.first.descriptor), .watched)
        bus.close()
        XCTAssertEqual(connection.receive(until: .after(milliseconds: 5000)), .failed(.closed))
        guard case .failure(.closed) = connection.send([call], until: .after(milliseconds: 100)) else { return XCTFail("sent after the close") }
    }

    func testARefusedHandshakeFails() throws {
        var template = Array("/tmp/bu-dbus.XXXXXX".utf8CString)
        let dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { unlink(dir + "/bus"); rmdir(dir) }
        let listener = try FileDescriptor.localStreamSocket(nonBlocking: false)
        try listener.descriptor.bind(to: try XCTUnwrap(LocalSocketAddress(dir + "/bus")))
        try listener.descriptor.listen(backlog: 1)
        let (connection, _) = try DBusConnection.open(address: "unix:path=\(dir)/bus", first: [], deadline: .after(milliseconds: 5000)).get()
        let bus = try listener.descriptor.accept()
        try bus.descriptor.writeAll(Array("REJECTED DBUS_COOKIE_SHA1\r\n".utf8))
        XCTAssertEqual(connection.receive(until: .after(milliseconds: 5000)), .failed(.rejected("REJECTED DBUS_COOKIE_SHA1")))
        XCTAssertEqual(connection.receive(until: .after(milliseconds: 0)), .failed(.rejected("REJECTED DBUS_COOKIE_SHA1")))
        XCTAssertNil(DBusConnection.open(address: "unix:path=\(dir)/nothing", first: [], deadline: .after(milliseconds: 100)).success)
    }
}

extension Result {
    var success: Success? { if case .success(let s) = self { return s }; return nil }
}
