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

    /// Seeded inputs (the same on every run) of the digits and their neighbours '/', '0' and ':':
    /// every outcome keeps the rules. (scripts/fuzz's pattern target searches further.)
    func testSeededInputsKeepTheRules() {
        var generator = SeededGenerator(seed: 0x7061_7474_6572_6e21)
        var seen = Set<String>()
        for _ in 0..<4000 {
            let length = Int.random(in: 0...12, using: &generator)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0x2f...0x3a, using: &generator) }
            let typed = bytes.map { Int($0) - 0x30 }
            let isPoint = { (b: UInt8) in (0x31...0x39).contains(b) }
            switch Pattern.canonical(bytes) {
            case .success(let path):
                seen.insert("ok")
                XCTAssertTrue((Pattern.minimumPoints...9).contains(path.count), "\(typed) -> \(path)")
                XCTAssertEqual(Set(path).count, path.count, "no point twice: \(path)")
                XCTAssertTrue(bytes.allSatisfy(isPoint))
                // The typed points, in order, with only jumped-over points added between them.
                var rest = path[...]
                var used = Set<Int>()
                for (i, point) in typed.enumerated() {
                    var skipped: [Int] = []
                    while let next = rest.first, next != point { skipped.append(next); rest = rest.dropFirst() }
                    XCTAssertEqual(rest.first, point, "\(typed): \(point) is in the path, in order")
                    rest = rest.dropFirst()
                    // Only a point jumped over, and not used yet, is picked up.
                    let jumped = i > 0 ? Pattern.midpoint(typed[i - 1], point).flatMap { used.contains($0) ? nil : $0 } : nil
                    XCTAssertEqual(skipped, jumped.map { [$0] } ?? [], "\(typed) -> \(path)")
                    used.formUnion(skipped + [point])
                }
                XCTAssertTrue(rest.isEmpty)
                XCTAssertEqual(Pattern.canonical(path.map { UInt8(0x30 + $0) }), .success(path), "the canonical path is canonical")
            case .failure(.notAPoint):
                seen.insert("notAPoint")
                XCTAssertFalse(bytes.allSatisfy(isPoint), "\(typed)")
            case .failure(.pointUsedTwice(let p)):
                seen.insert("twice")
                XCTAssertTrue(typed.contains(p), "\(typed): \(p) was typed")
            case .failure(.tooShort(let n)):
                seen.insert("short")
                XCTAssertLessThan(n, Pattern.minimumPoints)
                XCTAssertTrue(bytes.allSatisfy(isPoint))
                XCTAssertGreaterThanOrEqual(n, typed.count)
            }
        }
        XCTAssertEqual(seen, ["ok", "notAPoint", "twice", "short"], "the seed reaches every outcome")
    }

    func testCanonicalPatternsHashAlike() throws {
        let hash = try Passcode.hash(try Pattern.canonicalSecret(Secret(bytes: Array("1369".utf8))!).get(), opsLimit: 1, memLimit: 8192)
        let other = try Pattern.canonicalSecret(Secret(bytes: Array("12369".utf8))!).get()
        XCTAssertTrue(try Passcode.verify(other, against: hash))
    }
}

/// SplitMix64: a fixed seed gives the same sequence on every run and machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
