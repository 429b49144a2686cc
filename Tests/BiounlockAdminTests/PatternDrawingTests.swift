import XCTest
import BiounlockAdmin
import BiounlockCore

final class PatternDrawingTests: XCTestCase {
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
