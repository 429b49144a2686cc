import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
@testable import BiounlockStore
import CSQLite

/// The passcode lockout has one implementation (Lockouts); the store's atomic reservation must
/// decide exactly as `biounlock status` and the chain do, at the edges of Int64 too.
final class LockoutAgreementTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/store/biounlock.db" }
    override func setUpWithError() throws { dir = try makeTrustedTemporaryDirectory() }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testTheReservationAgreesWithLockoutsAtTheEdges() throws {
        let store = try Store.open(path: path, mode: .administer)
        try store.setEnabled(true, user: "alice", service: nil, at: 1)
        let now: Int64 = 1_800_000_000
        let times: [Int64?] = [nil, 0, 1, now - 3601, now - 61, now - 60, now - 59, now, now + 1, Int64.max - 3600, Int64.max - 61,
                               Int64.max - 60, Int64.max - 1, Int64.max, Int64.min, Int64.min + 1]
        let counts: [Int64] = [0, 4, 5, 6, 7, 8, 9, 1000, Int64.max - 1, Int64.max]
        var options = Options()
        options.passcodeLockout = 5
        for failures in counts {
            for at in times {
                for moment in [now, Int64.max, Int64.min] {
                    try store.connection.prepare("UPDATE users SET passcode_failures = ?, passcode_failure_at = ? WHERE name = 'alice'")
                        .bind([.int(failures), .optional(at)]).run()
                    let before = try XCTUnwrap(store.loadUser("alice"))
                    let open = Lockouts.passcode(before, options: options, now: moment) == .open
                    let reserved: Bool
                    do { reserved = try store.reservePasscodeAttempt(user: "alice", at: moment, threshold: 5) } catch {
                        XCTFail("failures \(failures), at \(at.map(String.init) ?? "nil"), now \(moment): \(error)"); continue
                    }
                    XCTAssertEqual(reserved, open, "failures \(failures), at \(at.map(String.init) ?? "nil"), now \(moment)")
                    let after = try XCTUnwrap(store.loadUser("alice"))
                    XCTAssertEqual(after.passcodeFailures, reserved ? (before.passcodeFailures == Int.max ? Int.max : before.passcodeFailures + 1) : before.passcodeFailures)
                }
            }
        }
    }
}
