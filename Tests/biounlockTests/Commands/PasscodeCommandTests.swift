import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore

/// `biounlock passcode set` and `clear` (from standard input; on a terminal: Terminal/SecretInputTests).
final class PasscodeCommandTests: CLIFixture {
    func testPasscodeRules() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "12\n").status, 1)
        XCTAssertTrue(try cli(["passcode", "set", user, "--stdin"], stdin: "12a4\n").stderr.contains("digits only"))
        XCTAssertEqual(try cli(["passcode", "set", user, "--kind", "password", "--stdin"], stdin: "short\n").status, 1)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: String(repeating: "1", count: 600) + "\n").status, 1)
        let ok = try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n")
        XCTAssertEqual(ok.status, 0, ok.stderr)
        // Stored as Argon2id at the shipped cost, and verifiable.
        let stored = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode)
        XCTAssertEqual(stored.kind, .pin)
        XCTAssertTrue(stored.hash.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"))
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("2468".utf8))!, against: stored.hash))
        let status = try cli(["status", user, "--json"])
        XCTAssertFalse(status.stdout.contains("argon2"), "status never shows the hash")
        XCTAssertEqual(try cli(["passcode", "clear", user]).status, 0)
        XCTAssertNil(try Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode)
    }

    /// With --stdin nothing of the secret is printed (provisioning logs keep standard output):
    /// the pattern used to be drawn there, grid and path.
    func testPatternPasscodeFromStdinIsStoredCanonicallyAndNeverPrinted() throws {
        let r = try cli(["passcode", "set", user, "--kind", "pattern", "--stdin"], stdin: "1369\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "Pattern set for daemon.\n")
        XCTAssertFalse(r.stderr.contains("1369") || r.stderr.contains("path") || r.stderr.contains("│"), r.stderr)
        let stored = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode)
        XCTAssertEqual(stored.kind, .pattern)
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("12369".utf8))!, against: stored.hash))
        let bad = try cli(["passcode", "set", user, "--kind", "pattern", "--stdin"], stdin: "1231\n")
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("point 1 is used twice"), bad.stderr)
    }
}
