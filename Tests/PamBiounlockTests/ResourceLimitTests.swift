import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore

/// Finding 28.4 (docs/SECURITY.md): a caller's resource limits must never turn a right passcode
/// into a counted failure. A PIN stored at 64 MiB of Argon2id memory, checked under a 40 MiB
/// RLIMIT_DATA that the checking process cannot raise: before the fix the guess was counted and
/// then Argon2id could not allocate (a right PIN counted as wrong); now nothing is checked, nothing
/// counted, the typed text goes on to the password, and the reason is logged.
final class ResourceLimitTests: XCTestCase {
    static let dataLimit = "--data=41943040:41943040"   // 40 MiB, soft and hard

    static func costlyPIN(_ store: Store, user: String) throws {
        let hash = try Passcode.hash(try XCTUnwrap(Secret(bytes: Array(ModuleFixture.pin.utf8))), opsLimit: 1, memLimit: 64 << 20)
        try store.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: user, at: 1)
    }

    /// The module in a root caller (su after `ulimit -d`): nothing raises the limit, the module
    /// measures the room it has before counting.
    func testTheModuleChecksNoPINItCannotAffordAndCountsNothing() throws {
        let fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        try ResourceLimitTests.costlyPIN(fixture.store, user: ModuleFixture.enrolledUser)
        try fixture.service()
        let limited = try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--syslog"],
                                               wrapper: ["/usr/bin/prlimit", ResourceLimitTests.dataLimit], touchWait: 300)
        XCTAssertNotEqual(limited.code, "PAM_SUCCESS", limited.raw.stdout)
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.passcodeFailures, 0,
                       "a PIN that was not checked is not counted")
        XCTAssertTrue(limited.syslog.contains { $0.contains("was not checked") && $0.contains("resource limits") },
                      "the reason is logged: \(limited.syslog)")
        XCTAssertEqual(try fixture.store.recentEvents().first?.reason, Reason.resourceLimit.rawValue)
        // The same PIN with the caller's limits as they usually are.
        let t = try fixture.authenticate(answers: [ModuleFixture.pin], touchWait: 300)
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
    }

    /// The setuid checker (a locker as the user) started with a hard RLIMIT_DATA and without
    /// CAP_SYS_RESOURCE in its bounding set, so that raiseLimits fails: it checks nothing.
    func testTheCheckerThatCannotRaiseALimitChecksNothing() throws {
        let world = try CheckerWorld()
        let store = try Store.open(path: world.fixture.storePath, mode: .administer)
        try ResourceLimitTests.costlyPIN(store, user: world.caller)
        try? FileManager.default.removeItem(atPath: world.syslogFile)
        let t = try world.fixture.authenticate(world.caller, answers: [ModuleFixture.pin], extra: ["--syslog"],
                                               wrapper: world.wrapper(asUser: true, before: "/usr/bin/prlimit \(ResourceLimitTests.dataLimit)",
                                                                      setpriv: "--bounding-set -sys_resource"), timeout: 60, touchWait: 300)
        let log = CheckerWorld.messages(((try? String(contentsOfFile: world.syslogFile, encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init))
        XCTAssertNotEqual(t.code, "PAM_SUCCESS", t.raw.stdout + t.raw.stderr)
        XCTAssertEqual(try world.user(world.caller)?.passcodeFailures, 0, "nothing counted")
        XCTAssertTrue(log.contains { $0.contains("cannot raise RLIMIT_DATA") && $0.contains("nothing checked") },
                      "the checker says why: \(log)")
        // Without the hard limit the same checker takes the same PIN.
        let (ok, _) = try world.authenticate(answers: [ModuleFixture.pin])
        XCTAssertEqual(ok.code, "PAM_SUCCESS", ok.raw.stdout)
    }
}
