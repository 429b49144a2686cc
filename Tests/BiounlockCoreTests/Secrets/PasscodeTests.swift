import XCTest
@testable import BiounlockCore

final class PasscodeTests: XCTestCase {
    func secret(_ s: String) -> Secret { Secret(bytes: Array(s.utf8))! }

    func testHashIsArgon2idAtTheShippedCostAndVerifies() throws {
        let hash = try Passcode.hash(secret("correct horse"))
        XCTAssertTrue(hash.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"), hash)
        XCTAssertTrue(try Passcode.verify(secret("correct horse"), against: hash))
        XCTAssertFalse(try Passcode.verify(secret("correct horsf"), against: hash))
        XCTAssertFalse(try Passcode.verify(secret(""), against: hash))
        XCTAssertNotEqual(hash, try Passcode.hash(secret("correct horse")), "salted")
    }

    func testUnusableStoredHashesThrowInsteadOfVerifying() {
        for bad in ["", "plain", "$argon2i$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA",
                    "$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=65536,t=999,p=1$c2FsdA$aGFzaA",
                    "$argon2id$v=19$m=65536,t=2,p=4$c2FsdA$aGFzaA", String(repeating: "$", count: 500)] {
            XCTAssertThrowsError(try Passcode.verify(secret("1234"), against: bad), bad)
        }
    }

    func testKindRules() {
        XCTAssertNil(PasscodeKind.pin.problem(with: secret("0042")))
        XCTAssertEqual(PasscodeKind.pin.problem(with: secret("123")), "a PIN needs at least 4 digits")
        XCTAssertEqual(PasscodeKind.pin.problem(with: secret("12a4")), "a PIN may contain digits only")
        XCTAssertNil(PasscodeKind.password.problem(with: secret("hunter22")))
        XCTAssertNotNil(PasscodeKind.password.problem(with: secret("short")))
        XCTAssertNotNil(PasscodeKind.password.problem(with: secret("tab\there")))
    }

    func testSecretIsCappedAndNeverPrinted() {
        XCTAssertNil(Secret(bytes: [UInt8](repeating: 0x31, count: Secret.maximumLength + 1)))
        XCTAssertNotNil(Secret(bytes: [UInt8](repeating: 0x31, count: Secret.maximumLength)))
        let s = secret("2468")
        XCTAssertEqual("\(s)", "<secret>")
        XCTAssertEqual(String(describing: [s]), "[<secret>]")
        XCTAssertTrue(s.constantTimeEquals(secret("2468")))
        XCTAssertFalse(s.constantTimeEquals(secret("2469")))
        XCTAssertFalse(s.constantTimeEquals(secret("24680")))
    }

    func testWipeZeroesTransientBuffers() {
        var bytes: [UInt8] = Array("2468".utf8)
        wipe(&bytes)
        XCTAssertEqual(bytes, [0, 0, 0, 0])
    }
}
