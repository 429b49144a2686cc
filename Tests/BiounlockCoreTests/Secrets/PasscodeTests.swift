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

    /// cost(of:) reads the hash as bytes; on ASCII (what libsodium writes, and what it reads) it
    /// decides as the earlier reading by Characters did, kept here as the reference.
    func testTheCostIsReadAsBeforeFromAnyHashText() {
        func reference(_ encoded: String) -> (memoryKiB: Int, passes: Int)? {
            let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 6, parts[0].isEmpty, parts[1] == "argon2id", parts[2] == "v=19" else { return nil }
            var memory: Int?, passes: Int?
            for field in parts[3].split(separator: ",") {
                let kv = field.split(separator: "=", maxSplits: 1)
                guard kv.count == 2, kv[1].count <= 10, let value = Int(kv[1]) else { return nil }
                switch kv[0] {
                case "m": memory = value
                case "t": passes = value
                case "p": guard value == 1 else { return nil }
                default: return nil
                }
            }
            guard let memory, let passes else { return nil }
            return (memory, passes)
        }
        let pieces = ["$", "argon2id", "argon2i", "v=19", "v=18", "m=", "t=", "p=", "m", ",", "=", "==", "1", "8", "65536",
                      "-2", "+3", "99999999999", "c2FsdA", "aGFzaA", "", "x", "mm=1", "é"]
        var generator = SystemRandomNumberGenerator()
        var texts = ["$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA",
                     "$argon2id$v=19$t=2,m=64,p=1$s$h", "$argon2id$v=19$,m=1,,t=2,$s$h", "$argon2id$v=19$m=1,t=2$s$h$"]
        for _ in 0..<20_000 {
            var text = "$argon2id$v=19$"
            for _ in 0..<Int.random(in: 0...12, using: &generator) { text += pieces.randomElement(using: &generator)! }
            texts.append(text)
        }
        for text in texts {
            let (new, old) = (Passcode.cost(of: text), reference(text))
            XCTAssertEqual(new?.memoryKiB, old?.memoryKiB, text)
            XCTAssertEqual(new?.passes, old?.passes, text)
        }
        XCTAssertEqual(Passcode.cost(of: texts[0])?.memoryKiB, 65536)
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
