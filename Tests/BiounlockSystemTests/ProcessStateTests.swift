import XCTest
@testable import BiounlockSystem

/// CString: C strings read within their bound, and validated as UTF-8 exactly as the standard
/// library's `String(validating:as:)` does (the module refuses a user name that is not UTF-8).
final class ProcessStateTests: XCTestCase {
    func testBytesStopAtTheTerminatorOrTheBound() {
        "hello".withCString { pointer in
            XCTAssertEqual(CString.bytes(pointer, maximumLength: 100), Array("hello".utf8))
            XCTAssertEqual(CString.bytes(pointer, maximumLength: 3), Array("hel".utf8))
            XCTAssertEqual(CString.bytes(pointer, maximumLength: 0), [])
            XCTAssertEqual(CString.bytes(pointer, maximumLength: -1), [])
        }
        "".withCString { XCTAssertEqual(CString.bytes($0, maximumLength: 10), []) }
    }

    func testTextFromAPointerIsBoundedAndValid() {
        "root".withCString { pointer in
            XCTAssertEqual(CString.text(pointer, maximumLength: 4), "root")
            XCTAssertEqual(CString.text(pointer, maximumLength: 100), "root")
            XCTAssertNil(CString.text(pointer, maximumLength: 3), "longer than the bound: refused, not cut")
            XCTAssertNil(CString.text(pointer, maximumLength: 0))
            XCTAssertNil(CString.text(pointer, maximumLength: -1))
            XCTAssertEqual(CString.text(pointer, maximumLength: Int.max), "root")
        }
        "".withCString { XCTAssertEqual(CString.text($0, maximumLength: 0), "") }
        let invalid: [CChar] = [0x61, CChar(bitPattern: 0xC3), 0]
        invalid.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return XCTFail("no buffer") }
            XCTAssertNil(CString.text(base, maximumLength: 10), "cut-short UTF-8")
            XCTAssertEqual(CString.text(base, maximumLength: 10), CString.text(validating: CString.bytes(base, maximumLength: 10)))
        }
    }

    func testTextIsTheValidUTF8AndNothingElse() {
        let cases: [([UInt8], String?)] = [
            ([], ""),
            (Array("root".utf8), "root"),
            (Array("zoë 日本 🙂".utf8), "zoë 日本 🙂"),
            ([0x61, 0x00, 0x62], "a\u{0}b"),            // a NUL inside is text too, not an end
            ([0xFF], nil),                                // never a UTF-8 byte
            ([0x61, 0xC3], nil),                          // cut short
            ([0xC0, 0xAF], nil),                          // overlong "/"
            ([0xED, 0xA0, 0x80], nil),                    // a UTF-16 surrogate
            ([0xF4, 0x8F, 0xBF, 0xBF], "\u{10FFFF}"),     // the last scalar
            ([0xF4, 0x90, 0x80, 0x80], nil),              // past it
            ([0x80, 0x61], nil),                          // a continuation byte first
        ]
        for (bytes, expected) in cases {
            XCTAssertEqual(CString.text(validating: bytes), expected, "\(bytes)")
        }
    }

    func testTextAgreesWithTheStandardLibraryOnArbitraryBytes() {
        // Short strings over a small alphabet of lead, continuation and ASCII bytes, so that
        // valid and invalid sequences both come up often; a fixed generator, so every run checks
        // the same 20,000.
        let alphabet: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC2, 0xC0, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0xA0, 0x9F, 0x90]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: state >> 33)
        }
        var valid = 0
        for _ in 0..<20_000 {
            let bytes = (0..<(next() % 7)).map { _ in alphabet[next() % alphabet.count] }
            let expected = String(validating: bytes, as: UTF8.self)
            if expected != nil { valid += 1 }
            XCTAssertEqual(CString.text(validating: bytes), expected, "\(bytes)")
        }
        XCTAssertGreaterThan(valid, 1000, "the generator makes valid text too")
        XCTAssertLessThan(valid, 19_000, "and invalid text")
    }
}
