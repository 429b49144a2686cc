import BiounlockSystem
import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Host safety (docs/SECURITY.md, item 6): the module runs inside sudo, login and sshd, so after
/// a transaction the host's signal handlers, signal mask, rlimits, umask, cwd, threads,
/// descriptors and environment are as they were; many transactions in one process neither crash
/// nor grow; the same handle may authenticate again, end unused, or fork; and the PAM path is
/// clean under valgrind memcheck.
final class HostSafetyTests: ModuleTestCase {

    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let wrong = ModuleFixture.scan("mallory")

    override func prepare() throws {
        try fixture.service()
        // A lid switch that reads open, so that every transaction reads it too.
        try FileManager.default.createDirectory(atPath: fixture.dir + "/lid/LID0", withIntermediateDirectories: true)
        try "state:      open\n".write(toFile: fixture.dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
    }

    func testEveryPathLeavesTheHostAsItFoundIt() throws {
        try fixture.service("db=\(fixture.dir)/missing/biounlock.db", name: "nostore")
        try fixture.service("policy=biometrics timeout=1", name: "fingeronly")
        let cases: [(name: String, user: String, service: String, answers: [String], touches: [SimCommand])] = [
            ("touch", user, "biotest", [], [touch]),
            ("wrong fingers, then the PIN", user, "biotest", [ModuleFixture.pin], [wrong, wrong, wrong]),
            ("a wrong PIN", user, "biotest", ["1357"], [.unplug]),
            ("Enter alone", user, "biotest", [""], [.error(4)]),
            ("a failed conversation", user, "biotest", ["@FAIL"], [.unplug]),
            ("not enabled", ModuleFixture.otherUser, "biotest", [], []),
            ("unknown user", "biounlock-no-such-user", "biotest", [], []),
            ("no store", user, "nostore", [], []),
            ("finger only, no touch in time", user, "fingeronly", [], []),
        ]
        for c in cases {
            let t = try fixture.authenticate(c.user, service: c.service, answers: c.answers, touches: c.touches, extra: ["--host-check"])
            XCTAssertEqual(t.lines("HOST"), ["unchanged after pam_authenticate 1", "unchanged after pam_end"], "\(c.name): \(t.raw.stdout)")
        }
    }

    func testAuthenticatingThreeTimesOnOneHandle() throws {
        let t = try fixture.authenticate(answers: ["1357", "9999", ModuleFixture.pin], touches: [.unplug, .unplug, .unplug],
                                         extra: ["--auth-count", "3", "--host-check"])
        XCTAssertEqual(t.codes, ["PAM_AUTHINFO_UNAVAIL", "PAM_AUTHINFO_UNAVAIL", "PAM_SUCCESS"], t.raw.stdout)
        XCTAssertEqual(t.lines("HOST").filter { !$0.hasPrefix("unchanged") }, [])
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0, "two failures counted, then cleared by the PIN")
        XCTAssertEqual(try fixture.store.recentEvents().count, 3, "one audit row per pam_authenticate")
    }

    func testEndingAHandleThatNeverAuthenticated() throws {
        let t = try fixture.authenticate(extra: ["--no-auth", "--host-check"])
        XCTAssertEqual(t.raw.status, 0, t.raw.stderr)
        XCTAssertEqual(t.lines("HOST"), ["unchanged after pam_end"])
    }

    /// sudo forks after authenticating; the child ends its copy of the handle.
    func testForkingAfterAuthenticating() throws {
        let t = try fixture.authenticate(touches: [touch], extra: ["--fork", "--setcred"])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.lines("FORK"), ["child exit 0"], t.raw.stdout + t.raw.stderr)
        XCTAssertEqual(t.raw.status, 0)
    }

    /// 10,000 pam_start/pam_authenticate/pam_end cycles in one process (the module is loaded and
    /// unloaded each time): no crash, and resident memory grows by less than 2 MiB after warm-up.
    /// The path: account, store, the user's row, the lid, the passcode lockout message (no finger
    /// enrolled: nothing biounlock can take), the audit row.
    func testTenThousandTransactionsInOneProcess() throws {
        for _ in 0..<5 { _ = try fixture.store.recordPasscodeFailure(user: user, at: SystemClock().now()) }
        try fixture.store.deleteTemplates(user: user, finger: nil)
        let t = try fixture.authenticate(extra: ["--cycles", "10000"], timeout: 300)
        XCTAssertEqual(t.lines("RESULTS"), ["PAM_AUTHINFO_UNAVAIL=10000"], t.raw.stdout + t.raw.stderr)
        let rss = try XCTUnwrap(t.lines("RSS").first).split(separator: " ").compactMap { Int($0.split(separator: "=").last ?? "") }
        XCTAssertEqual(rss.count, 2)
        XCTAssertLessThan(rss[1] - rss[0], 2048, "resident memory grew by \(rss[1] - rss[0]) KiB over 9,000 transactions")
        XCTAssertEqual(try fixture.store.recentEvents(limit: 20_000).count, 10_000, "every transaction audited")
    }

    /// The module's path under valgrind memcheck: no invalid access, no use of uninitialised
    /// memory, nothing definitely or indirectly lost. (The static Swift runtime keeps its
    /// metadata caches for the life of the process: "still reachable", which is not a leak.)
    func testThePamPathIsCleanUnderValgrind() throws {
        let suppressions = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Harness/valgrind.supp").path
        let valgrind = ["/usr/bin/valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                        "--suppressions=\(suppressions)", "-q"]
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: valgrind[0]), "valgrind is missing (scripts/deps installs it)")
        let cases: [(name: String, answers: [String], touches: [SimCommand])] = [
            ("touch", [], [touch]),
            ("wrong finger, then a wrong PIN", ["1357"], [wrong, .unplug]),
            ("a failed conversation", ["@FAIL"], [.unplug]),
        ]
        for c in cases {
            let t = try fixture.authenticate(answers: c.answers, touches: c.touches, extra: ["--setcred"], wrapper: valgrind,
                                             timeout: 180, touchWait: 60_000)
            XCTAssertEqual(t.raw.status, 0, "\(c.name):\n\(t.raw.stderr)")
            XCTAssertNotEqual(t.code, "NONE", "\(c.name): \(t.raw.stdout)")
        }
    }
}
