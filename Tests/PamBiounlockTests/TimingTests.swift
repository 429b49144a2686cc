import BiounlockSystem
import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Timing (docs/SECURITY.md, item 8). Tests never assert timings (scripts/timing measures and
/// docs/SECURITY.md reports them); these tests count the work, through the harness's interposed
/// libsodium entry points, on the built module:
/// - an unknown name costs what a known user without biometric unlock costs: no Argon2id (and the
///   same store lookup), so that neither the time nor the prompt tells which names exist;
/// - an answer typed at biounlock's prompt costs exactly one Argon2id computation at the shipped
///   cost whether the passcode is wrong or not set -- none while the passcode is locked (nothing
///   is checked), and none when it cannot be a passcode at all (letters for a PIN).
final class TimingTests: ModuleTestCase {

    let user = ModuleFixture.enrolledUser
    /// What Passcode.hash uses by default, and so what every stored hash costs: "m=KiB t=passes".
    let shippedCost = "m=\(Passcode.memLimit / 1024) t=\(Passcode.opsLimit)"

    override func prepare() throws {
        // The PIN at the shipped cost, as 'biounlock passcode set' stores it.
        let hash = try Passcode.hash(Secret(bytes: Array(ModuleFixture.pin.utf8))!)
        try fixture.store.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: user, at: 1)
        // The prompt at once (the reader waits behind it), so every answer is typed at biounlock's prompt.
        try fixture.service("touch_first=0 timeout=1")
    }

    func argon2(_ name: String = ModuleFixture.enrolledUser, answers: [String] = []) throws -> (code: String, work: [String]) {
        let t = try fixture.authenticate(name, answers: answers, extra: ["--count-argon2"])
        return (t.code, t.lines("ARGON2"))
    }

    func testUnknownNamesCostWhatNotEnabledCosts() throws {
        let unknown = try argon2("biounlock-no-such-user")
        XCTAssertEqual(unknown.code, "PAM_USER_UNKNOWN")
        XCTAssertEqual(unknown.work, [], "an unknown user")
        let notEnabled = try argon2(ModuleFixture.otherUser)
        XCTAssertEqual(notEnabled.code, "PAM_TRY_AGAIN", "PAM_IGNORE")
        XCTAssertEqual(notEnabled.work, [], "biometric unlock not enabled: PAM_IGNORE at once (every sudo of every other user pays nothing)")
    }

    func testWrongAndNoPasscodeEachDoOneArgon2idComputationAtTheShippedCost() throws {
        let wrong = try argon2(answers: ["1357"])
        XCTAssertEqual(wrong.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(wrong.work, ["verify \(shippedCost)"], "a wrong passcode: checked")

        try fixture.store.setPasscode(nil, user: user, at: 2)
        let none = try argon2(answers: ["1357"])
        XCTAssertEqual(none.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(none.work, ["hash \(shippedCost)"], "a user without a passcode, handed on to the password")
    }

    func testALockedPasscodeIsNotChecked() throws {
        for _ in 0..<5 { _ = try fixture.store.recordPasscodeFailure(user: user, at: SystemClock().now()) }
        let locked = try argon2(answers: [ModuleFixture.pin])
        XCTAssertEqual(locked.code, "PAM_AUTHINFO_UNAVAIL", "even the right PIN goes on to the password")
        XCTAssertEqual(locked.work, [], "passcode locked: no Argon2id at all")
    }

    /// The other paths, for the record (docs/SECURITY.md explains each).
    func testTheOtherPaths() throws {
        XCTAssertEqual(try argon2(answers: [ModuleFixture.pin]).work, ["verify \(shippedCost)"], "the right passcode")
        XCTAssertEqual(try argon2(answers: ["alice-unix-Pw-7"]).work, [], "cannot be a PIN: the Unix password, handed on with no work")
        XCTAssertEqual(try argon2(answers: [""]).work, [], "Enter alone: the reader, then the password; no passcode to check")
        XCTAssertEqual(try argon2(answers: [String(repeating: "7", count: Secret.maximumLength + 1)]).work, [],
                       "an over-long answer is refused before any work")
    }

    /// The equaliser and the shipped hash cost the same, whatever Passcode's constants become.
    func testTheEqualiserCostsWhatAStoredHashCosts() throws {
        let stored = try Passcode.hash(Secret(bytes: Array("2468".utf8))!)
        let cost = try XCTUnwrap(Passcode.cost(of: stored))
        XCTAssertEqual("m=\(cost.memoryKiB) t=\(cost.passes)", shippedCost)
    }
}
