import XCTest
@testable import BiounlockCore

final class PatternTests: XCTestCase {
    func canon(_ s: String) -> Result<[Int], Pattern.Problem> { Pattern.canonical(Array(s.utf8)) }

    func testJumpsOverUnusedPointsPickThemUp() {
        XCTAssertEqual(try canon("1369").get(), [1, 2, 3, 6, 9])
        XCTAssertEqual(try canon("12369").get(), [1, 2, 3, 6, 9], "13 + 69 and 1236 + 9 agree")
        XCTAssertEqual(try canon("1937").get(), [1, 5, 9, 6, 3, 7], "1->9 passes 5, 9->3 passes 6, 3->7 passes 5 (used)")
        XCTAssertEqual(try canon("2846").get(), [2, 5, 8, 4, 6], "2->8 passes 5; 4->6 passes 5, already used")
        XCTAssertEqual(try canon("1397").get(), [1, 2, 3, 6, 9, 8, 7])
        XCTAssertEqual(try canon("1672").get(), [1, 6, 7, 2], "knight moves jump nothing")
        XCTAssertEqual(canon("1645").failureValue, .pointUsedTwice(5), "6->4 picked 5 up already")
    }

    func testJumpOverAUsedPointAddsNothing() {
        XCTAssertEqual(try canon("2513").get(), [2, 5, 1, 3], "1->3 passes 2, already used")
    }

    func testRulesAreNamed() {
        XCTAssertEqual(canon("1231").failureValue, .pointUsedTwice(1))
        XCTAssertEqual(canon("123").failureValue, .tooShort(3))
        XCTAssertEqual(canon("13").failureValue, .tooShort(3))
        XCTAssertEqual(canon("1205").failureValue, .notAPoint)
        XCTAssertEqual(canon("12a4").failureValue, .notAPoint)
        XCTAssertEqual(canon("").failureValue, .tooShort(0))
        XCTAssertEqual(Pattern.Problem.pointUsedTwice(5).description, "point 5 is used twice")
        XCTAssertEqual(PasscodeKind.pattern.problem(with: Secret(bytes: Array("1231".utf8))!), "point 1 is used twice")
        XCTAssertNil(PasscodeKind.pattern.problem(with: Secret(bytes: Array("1369".utf8))!))
    }

    func testEveryInputIsHandledWithoutTrapping() {
        for length in 0...12 {
            for _ in 0..<200 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0x2f...0x3a) }
                _ = Pattern.canonical(bytes)
            }
        }
    }

    func testCanonicalPatternsHashAlike() throws {
        let hash = try Passcode.hash(try Pattern.canonicalSecret(Secret(bytes: Array("1369".utf8))!).get(), opsLimit: 1, memLimit: 8192)
        let other = try Pattern.canonicalSecret(Secret(bytes: Array("12369".utf8))!).get()
        XCTAssertTrue(try Passcode.verify(other, against: hash))
    }

    func testDrawShowsTheOrderOfEachPoint() {
        XCTAssertEqual(Pattern.draw([1, 2, 3, 6, 9]), """
            ┌───┬───┬───┐
            │ 1 │ 2 │ 3 │
            ├───┼───┼───┤
            │   │   │ 4 │
            ├───┼───┼───┤
            │   │   │ 5 │
            └───┴───┴───┘
            path: 1 → 2 → 3 → 6 → 9
            """)
    }
}
