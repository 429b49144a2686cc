import XCTest
@testable import BiounlockCore

/// Messages.swift's text helpers, which stand in for _StringProcessing's (not linked into the module).
final class MessagesTests: XCTestCase {
    func testFirstRangeOfTextComparesCharacters() {
        let text: Substring = "PIN for {service}, {service} again"
        let range = text.firstRange(ofText: "{service}")
        XCTAssertEqual(range.map { String(text[$0]) }, "{service}")
        XCTAssertEqual(range.map { text.distance(from: text.startIndex, to: $0.lowerBound) }, 8, "the first of two")
        XCTAssertNil(text.firstRange(ofText: "{user}"))
        XCTAssertNil(text.firstRange(ofText: ""), "an empty target matches nothing")
        XCTAssertNil(Substring("").firstRange(ofText: "x"))
        XCTAssertEqual(Substring("ab").firstRange(ofText: "ab").map { String(Substring("ab")[$0]) }, "ab", "the whole text")
        XCTAssertNil(Substring("a").firstRange(ofText: "ab"), "longer than the text")
        // Characters, not bytes or scalars: "e" is not found inside "é" written as e + U+0301,
        // and a Character split differently does not match (as firstRange(of:) behaves).
        XCTAssertNil(Substring("cafe\u{301}").firstRange(ofText: "e"))
        XCTAssertEqual(Substring("cafe\u{301} e").firstRange(ofText: "e").map { Substring("cafe\u{301} e").distance(from: Substring("cafe\u{301} e").startIndex, to: $0.lowerBound) }, 5)
        XCTAssertNotNil(Substring("déjà vu").firstRange(ofText: "jà"))
        // A slice: ranges are the base string's indices.
        let base = "xx{count}xx"
        let slice = base.dropFirst(2)
        let found = slice.firstRange(ofText: "{count}")
        XCTAssertEqual(found.map { String(base[$0]) }, "{count}")
    }

    func testReplacingAllReplacesEveryOccurrence() {
        XCTAssertEqual("{n} of {n}".replacingAll("{n}", with: "3"), "3 of 3")
        XCTAssertEqual("none here".replacingAll("{n}", with: "3"), "none here")
        XCTAssertEqual("{n}{n}".replacingAll("{n}", with: "{n}{n}"), "{n}{n}{n}{n}", "the replacement is not searched again")
        XCTAssertEqual("abc".replacingAll("", with: "x"), "abc")
        XCTAssertEqual("日本{user}語".replacingAll("{user}", with: "alice"), "日本alice語")
    }
}
