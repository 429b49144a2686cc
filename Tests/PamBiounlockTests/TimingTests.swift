import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Timing (docs/SECURITY.md, item 8): an unknown user, a wrong passcode and a user without a
/// passcode cannot be told apart by time because each costs exactly one Argon2id computation at
/// the shipped cost before the answer. Tests never assert timings (scripts/timing measures and
/// docs/SECURITY.md reports them); this test counts the work, through the harness's interposed
/// libsodium entry points, on the built module.
final class TimingTests: XCTestCase {
    var fixture: ModuleFixture!

    /// XCTest on Linux keeps test instances alive: drop the fixture so its deinit removes its directory.
    override func tearDown() { fixture = nil }
    let user = ModuleFixture.enrolledUser
    /// What Passcode.hash uses by default, and so what every stored hash costs: "m=KiB t=passes".
    let shippedCost = "m=\(Passcode.memLimit / 1024) t=\(Passcode.opsLimit)"

    override func setUpWithError() throws {
        fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        // The PIN at the shipped cost, as 'biounlock passcode set' stores it.
        let hash = try Passcode.hash(Secret(bytes: Array(ModuleFixture.pin.utf8))!)
        try fixture.store.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: user, at: 1)
        // No reader: straight to the passcode.
        try fixture.service("sensor=libfprint")
    }

    func argon2(_ name: String = ModuleFixture.enrolledUser, answers: [String] = []) throws -> (code: String, work: [String]) {
        let t = try fixture.authenticate(name, answers: answers, extra: ["--count-argon2"])
        return (t.code, t.lines("ARGON2"))
    }

    func testTheThreeIndistinguishablePathsEachDoOneArgon2idComputationAtTheShippedCost() throws {
        let unknown = try argon2("biounlock-no-such-user")
        XCTAssertEqual(unknown.code, "PAM_USER_UNKNOWN")
        XCTAssertEqual(unknown.work, ["hash \(shippedCost)"], "an unknown user")

        let wrong = try argon2(answers: ["1357"])
        XCTAssertEqual(wrong.code, "PAM_AUTH_ERR")
        XCTAssertEqual(wrong.work, ["verify \(shippedCost)"], "a wrong passcode")

        try fixture.store.setPasscode(nil, user: user, at: 2)
        let none = try argon2()
        XCTAssertEqual(none.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(none.work, ["hash \(shippedCost)"], "a user without a passcode, handed on to the password")
    }

    /// The other paths, for the record (docs/SECURITY.md explains each).
    func testTheOtherPaths() throws {
        XCTAssertEqual(try argon2(answers: [ModuleFixture.pin]).work, ["verify \(shippedCost)"], "the right passcode")
        XCTAssertEqual(try argon2(answers: [""]).work, [], "Enter alone: straight to the password, no passcode to check")
        XCTAssertEqual(try argon2(answers: [String(repeating: "7", count: Secret.maximumLength + 1)]).work, [],
                       "an over-long answer is refused before any work")
        XCTAssertEqual(try argon2(ModuleFixture.otherUser).work, [],
                       "biometric unlock not enabled: PAM_IGNORE at once (every sudo of every other user pays nothing)")
        for _ in 0..<5 { try fixture.store.recordPasscodeFailure(user: user, at: SystemClock().now()) }
        let locked = try argon2(answers: ["1357"])
        XCTAssertEqual(locked.code, "PAM_AUTH_ERR")
        XCTAssertEqual(locked.work, [], "passcode locked: no passcode is checked")
    }

    /// The equaliser and the shipped hash cost the same, whatever Passcode's constants become.
    func testTheEqualiserCostsWhatAStoredHashCosts() throws {
        let stored = try Passcode.hash(Secret(bytes: Array("2468".utf8))!)
        let cost = try XCTUnwrap(Passcode.cost(of: stored))
        XCTAssertEqual("m=\(cost.memoryKiB) t=\(cost.passes)", shippedCost)
    }
}
