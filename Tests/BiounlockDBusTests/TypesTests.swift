import XCTest
@testable import BiounlockDBus

/// Signatures as the specification defines them: every type, the nesting and length limits,
/// dict entries only as an array's element with a basic key.
final class TypesTests: XCTestCase {
    func testValidSignaturesParseToTheirTypes() {
        XCTAssertEqual(DBusType.parse(""), [])
        XCTAssertEqual(DBusType.parse("s"), [.string])
        XCTAssertEqual(DBusType.parse("ybnqiuxtdsoghv"), [.byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
                                                         .string, .objectPath, .signature, .unixFD, .variant])
        XCTAssertEqual(DBusType.parse("a{sv}"), [.array(.dictEntry(.string, .variant))])
        XCTAssertEqual(DBusType.parse("(so)ao"), [.structure([.string, .objectPath]), .array(.objectPath)])
        XCTAssertEqual(DBusType.parse("aa(ia{ov})"), [.array(.array(.structure([.int32, .array(.dictEntry(.objectPath, .variant))])))])
        for signature in ["s", "a{sv}", "(so)ao", "aa(ia{ov})", "a(yv)"] {
            XCTAssertEqual(DBusType.signature(DBusType.parse(signature) ?? []), signature, "codes round-trip")
        }
    }

    func testInvalidSignaturesAreRefused() {
        for bad in ["a", "(", ")", "()", "(s", "{sv}", "a{vs}", "a{(s)s}", "a{sss}", "a{s}", "z", "s\0", "a{sv", "(s))"] {
            XCTAssertNil(DBusType.parse(bad), bad)
        }
        XCTAssertNotNil(DBusType.parse(String(repeating: "a", count: 32) + "s"), "32 arrays deep")
        XCTAssertNil(DBusType.parse(String(repeating: "a", count: 33) + "s"), "33 arrays deep")
        XCTAssertNotNil(DBusType.parse(String(repeating: "(", count: 32) + "s" + String(repeating: ")", count: 32)), "32 structures deep")
        XCTAssertNil(DBusType.parse(String(repeating: "(", count: 33) + "s" + String(repeating: ")", count: 33)), "33 structures deep")
        XCTAssertNotNil(DBusType.parse(String(repeating: "s", count: 255)), "255 bytes")
        XCTAssertNil(DBusType.parse(String(repeating: "s", count: 256)), "256 bytes")
        XCTAssertNil(DBusType.single(Array("ss".utf8)), "a variant holds one complete type")
    }

    func testNames() {
        for path in ["/", "/net/reactivated/Fprint/Device/0", "/a_b/C9"] { XCTAssertTrue(DBusNames.isObjectPath(path.utf8), path) }
        for path in ["", "net", "//", "/a/", "/a//b", "/a-b", "/a.b"] { XCTAssertFalse(DBusNames.isObjectPath(path.utf8), path) }
        XCTAssertTrue(DBusNames.isInterfaceName("net.reactivated.Fprint.Device"))
        for name in ["net", "net.", ".net", "net.1x", "net.re-activated"] { XCTAssertFalse(DBusNames.isInterfaceName(name), name) }
        XCTAssertTrue(DBusNames.isMemberName("VerifyStatus"))
        for name in ["", "9Verify", "Verify.Status"] { XCTAssertFalse(DBusNames.isMemberName(name), name) }
        for name in [":1.42", "net.reactivated.Fprint", "org.freedesktop.DBus", ":1.1-2", "a-b.c"] { XCTAssertTrue(DBusNames.isBusName(name), name) }
        for name in ["", ":1", "net", "1net.x", "net..x", ":1.4 2"] { XCTAssertFalse(DBusNames.isBusName(name), name) }
    }

    func testTypedReads() {
        let properties = DBusValue.array(.dictEntry(.string, .variant), [
            .dictEntry(.string("name"), .variant(.string, .string("Virtual device"))),
            .dictEntry(.string("num-enroll-stages"), .variant(.int32, .int32(5))),
        ])
        XCTAssertEqual(properties.property("name")?.text, "Virtual device")
        XCTAssertEqual(properties.property("num-enroll-stages")?.int32, 5)
        XCTAssertNil(properties.property("scan-type"))
        XCTAssertNil(DBusValue.string("x").property("name"), "not a property list")
        XCTAssertEqual(DBusValue.array(.objectPath, [.objectPath("/a"), .objectPath("/b")]).strings(limit: 1), ["/a"])
        XCTAssertNil(DBusValue.array(.int32, [.int32(1)]).strings(limit: 5))
    }
}
