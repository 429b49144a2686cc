import XCTest
import Foundation
import BiounlockAdmin
import BiounlockCore

final class JSONTests: XCTestCase {
    func testSerializationIsValidJSON() throws {
        let value = JSON.object([("s", .string("quote\" backslash\\ newline\n ctrl\u{01} é")), ("n", .int(-3)),
                                 ("a", .array([.bool(true), .null, .array([]), .object([])]))])
        for pretty in [true, false] {
            let data = Data(value.serialized(pretty: pretty).utf8)
            let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
            XCTAssertEqual(parsed["s"] as? String, "quote\" backslash\\ newline\n ctrl\u{01} é")
            XCTAssertEqual(parsed["n"] as? Int, -3)
        }
        XCTAssertEqual(JSON.object([("a", .int(1)), ("b", .null)]).serialized(pretty: false), #"{"a":1,"b":null}"#)
    }
}
