import XCTest
@testable import BiounlockCore

/// Accounts: which names are looked up at all, and that only the name NSS reports counts.
final class AccountsTests: XCTestCase {
    func testRealAccountsAreFoundByNameAndUID() throws {
        XCTAssertEqual(try Accounts.find("root").get(), Account(name: "root", uid: 0))
        XCTAssertEqual(Accounts.lookup("root"), Account(name: "root", uid: 0))
        XCTAssertEqual(Accounts.lookup(uid: 0), Account(name: "root", uid: 0))
        XCTAssertNil(try Accounts.find("biounlock-no-such-user").get(), "no such account: nil, not a failure")
    }

    /// Names that cannot be a user's never reach NSS, and a name NSS reports differently (its
    /// case, a blank) is not the account: "Alice" or "root " never reach root's row.
    func testImplausibleOrDifferentlySpelledNamesMatchNothing() throws {
        let long = String(repeating: "a", count: Accounts.maximumNameLength + 1)
        for name in ["", " ", "root ", " root", "ROOT", "Root", "ro\not", "../root", "root/x", "root:x", "\u{7f}root", long] {
            XCTAssertNil(try Accounts.find(name).get(), "\(name.debugDescription) matched an account")
        }
        XCTAssertTrue(Accounts.isPlausibleName(String(repeating: "a", count: Accounts.maximumNameLength)))
        XCTAssertFalse(Accounts.isPlausibleName(long))
        XCTAssertTrue(Accounts.isPlausibleName("jörg"), "non-ASCII names are names")
    }
}
