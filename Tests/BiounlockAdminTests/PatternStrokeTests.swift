import XCTest
import BiounlockAdmin
import BiounlockCore

final class PatternStrokeTests: XCTestCase {
    func testALineOverAnUnusedPointPicksItUp() {
        var s = PatternStroke()
        XCTAssertTrue(s.reach(1))
        XCTAssertTrue(s.reach(3))   // over 2
        XCTAssertTrue(s.reach(9))   // 3 -> 9 over 6
        XCTAssertTrue(s.reach(7))   // 9 -> 7 over 8
        XCTAssertEqual(s.points, [1, 2, 3, 6, 9, 8, 7])
        XCTAssertEqual(digits(s), "1236987")
        XCTAssertNil(s.problem)
    }

    func testAUsedPointIsNotTakenAgainNorPickedUpAgain() {
        var s = PatternStroke()
        s.reach(5); s.reach(1)
        XCTAssertFalse(s.reach(5))
        XCTAssertTrue(s.reach(9))   // 1 -> 9 passes 5, already used: not added
        XCTAssertEqual(s.points, [5, 1, 9])
        XCTAssertEqual(s.problem, .tooShort(3))
    }

    func testKeysOneToNineOnly() {
        var s = PatternStroke()
        XCTAssertFalse(s.type("0"))
        XCTAssertFalse(s.type("a"))
        XCTAssertFalse(s.type("٣"))  // an Arabic-Indic three is not a key of the grid
        XCTAssertTrue(s.type("7"))
        XCTAssertTrue(s.type("1"))  // 7 -> 1 over 4
        XCTAssertEqual(digits(s), "741")
        s.clear()
        XCTAssertEqual(s.points, [])
        XCTAssertEqual(s.problem, .tooShort(0))
        XCTAssertNil(s.secret())
    }

    /// The digits of the path as the Secret the app sends (a String here only for the test).
    private func digits(_ s: PatternStroke) -> String? {
        s.secret().map { secret in secret.withBytes { String(decoding: $0, as: UTF8.self) } }
    }

    func testTheSecretIsWhatTheModuleChecksAndTheProblemIsPatternsOwn() {
        var s = PatternStroke()
        for p in [7, 9, 3] { s.reach(p) }   // 7 -> 9 over 8, 9 -> 3 over 6
        XCTAssertEqual(digits(s), "78963")
        guard let secret = s.secret() else { return XCTFail() }
        XCTAssertNil(PasscodeKind.pattern.problem(with: secret))
        for n in 0...9 {
            var t = PatternStroke()
            for p in [1, 2, 3, 6, 9, 8, 7, 4, 5].prefix(n) { t.reach(p) }
            let typed = t.secret().map { $0.withBytes { Array($0) } } ?? []
            var expected: Pattern.Problem?
            if case .failure(let p) = Pattern.canonical(typed) { expected = p }
            XCTAssertEqual(t.problem, expected, "\(n) points")
        }
    }

    func testTheDigitsAreWhatTheModuleHashes() {
        var s = PatternStroke()
        for p in [1, 3, 6, 9] { s.reach(p) }
        guard case .success(let canonical) = Pattern.canonical(Array("1369".utf8)) else { return XCTFail() }
        XCTAssertEqual(s.points, canonical)
    }

    func testHitTestingInACentredSquare() {
        let g = PatternStroke.Geometry(width: 400, height: 300)  // a 300 square from x = 50
        XCTAssertEqual(g.centre(of: 1)?.x, 100)
        XCTAssertEqual(g.centre(of: 1)?.y, 50)
        XCTAssertEqual(g.centre(of: 9)?.x, 300)
        XCTAssertEqual(g.centre(of: 9)?.y, 250)
        XCTAssertNil(g.centre(of: 0))
        XCTAssertEqual(g.point(atX: 100, y: 50), 1)
        XCTAssertEqual(g.point(atX: 224, y: 168), 5)   // 30 px from the centre: within 35
        XCTAssertNil(g.point(atX: 150, y: 100))         // between 1 and 5
        XCTAssertNil(g.point(atX: 10, y: 150))          // left of the square
        XCTAssertNil(g.point(atX: .nan, y: 150))
        XCTAssertNil(PatternStroke.Geometry(width: 0, height: 0).point(atX: 0, y: 0))
    }

    /// The shake after a mismatch: nothing before it starts and from its end on, three swings
    /// each way within the amplitude, dying away.
    func testTheShakeSwingsThreeTimesAndDiesAway() {
        let t = PatternStroke.shakeMilliseconds
        for elapsed in [-5, 0, t, t + 100, Int64.max] {
            XCTAssertEqual(PatternStroke.shakeOffset(elapsedMilliseconds: elapsed, amplitude: 10), 0, "\(elapsed)")
        }
        XCTAssertEqual(PatternStroke.shakeOffset(elapsedMilliseconds: 40, amplitude: .nan), 0)
        let offsets = (1..<t).map { PatternStroke.shakeOffset(elapsedMilliseconds: $0, amplitude: 10) }
        XCTAssertTrue(offsets.allSatisfy { abs($0) <= 10 })
        var crossings = 0
        for (a, b) in zip(offsets, offsets.dropFirst()) where a < 0 && b >= 0 { crossings += 1 }
        XCTAssertEqual(crossings, 2, "back through the middle between the swings")
        XCTAssertGreaterThan(offsets.prefix(Int(t) / 3).map(abs).max() ?? 0, offsets.suffix(Int(t) / 3).map(abs).max() ?? 0, "dies away")
    }
}
