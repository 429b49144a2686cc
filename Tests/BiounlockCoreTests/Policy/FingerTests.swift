import XCTest
import BiounlockCore

final class FingerTests: XCTestCase {
    func testFprintdNamesAndShortForms() {
        XCTAssertEqual(Finger(name: "right-index-finger"), .rightIndex)
        XCTAssertEqual(Finger(name: "right-index"), .rightIndex)
        XCTAssertEqual(Finger(name: "left-thumb"), .leftThumb)
        XCTAssertEqual(Finger(name: "left-little"), .leftLittle)
        XCTAssertNil(Finger(name: "right-index-finger-finger"))
        XCTAssertNil(Finger(name: "nose"))
        XCTAssertEqual(Finger.allCases.map(\.rawValue), Array(1...10), "libfprint's FpFinger numbering")
        for f in Finger.allCases { XCTAssertEqual(Finger(name: f.name), f) }
    }
}
