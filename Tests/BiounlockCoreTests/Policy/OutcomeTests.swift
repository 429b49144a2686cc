import XCTest
@testable import BiounlockCore

/// The return-code table (docs/DESIGN.md): one PAM code per outcome, the same names
/// `biounlock verify` prints.
final class OutcomeTests: XCTestCase {
    func testEveryOutcomeHasItsCode() {
        let table: [(Outcome, String)] = [
            (.success(.fingerprint), "PAM_SUCCESS"), (.success(.passcode), "PAM_SUCCESS"),
            (.ignore, "PAM_IGNORE"), (.unavailable, "PAM_AUTHINFO_UNAVAIL"), (.maxTries, "PAM_MAXTRIES"),
            (.userUnknown, "PAM_USER_UNKNOWN"), (.conversationFailed, "PAM_CONV_ERR"),
        ]
        for (outcome, name) in table {
            XCTAssertEqual(PamReturn(outcome).name, name, "\(outcome)")
        }
    }

    func testNoTwoCodesShareANameOrAValue() {
        XCTAssertEqual(Set(PamReturn.allCases.map(\.name)).count, PamReturn.allCases.count)
        XCTAssertEqual(Set(PamReturn.allCases.map(\.rawValue)).count, PamReturn.allCases.count)
    }
}
