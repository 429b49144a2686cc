import BiounlockSystem
import XCTest
import Foundation
import BiounlockCore
@testable import BiounlockSensors
import BiounlockFprintProtocol

/// fprintd's helper that may detach from its spawner (biounlock-fprintd --detach, HelperProcess
/// with a detached launch): until fprintd verifies it is the spawner's child (killed by pid on a
/// deadline, as any helper), and one that never verified is collected at the close as before.
/// The detaching itself needs fprintd: FprintdModuleTests.testTheHelperDetachesUnlessTheHostAdoptsOrphans.
final class DetachedHelperTests: XCTestCase {
    let helper = sensorsBuildDirectory + "/biounlock-fprintd"

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: helper), "run scripts/build first: \(helper)")
    }

    func spawn(lifetime: Int) throws -> HelperProcess {
        let launch = HelperLaunch(path: helper, arguments: ["--serve", "--detach", String(lifetime)],
                                  environment: HelperLaunch.cleanEnvironment, stderrToNull: true, detached: true)
        let h = try HelperProcess.spawn(launch).get()
        XCTAssertEqual(try h.receive(until: monotonicMilliseconds() + 5000).get(), .hello)
        return h
    }

    /// The processes running `helper --serve --detach LIFETIME` (their argv exactly).
    func serving(lifetime: Int) -> [Int32] {
        let wanted = [helper, "--serve", "--detach", String(lifetime)].joined(separator: "\0") + "\0"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter {
            (try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8)) == wanted
        }
    }

    func parent(of pid: Int32) -> Int32? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("PPid:") }.flatMap { Int32($0.dropFirst(5).trimmingCharacters(in: .whitespaces)) }
    }

    /// Waits (bounded) until no process serves with `lifetime`.
    func gone(lifetime: Int, within seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if serving(lifetime: lifetime).isEmpty { return true }
            usleep(10_000)
        }
        return serving(lifetime: lifetime).isEmpty
    }

    func testUntilTheCloseTheHelperIsTheSpawnersChildAndIsKilledOnADeadline() throws {
        let lifetime = 3571
        let h = try spawn(lifetime: lifetime)
        let pids = serving(lifetime: lifetime)
        XCTAssertEqual(pids, [h.pid], "the spawned process serves the channel")
        XCTAssertEqual(parent(of: h.pid), ProcessIdentity.processID, "the spawner's child")
        // A request is answered (no claim here: a failure).
        XCTAssertNoThrow(try h.send(.fprintdVerify(timeoutMilliseconds: 100), until: monotonicMilliseconds() + 2000).get())
        guard case .failure(let f) = try h.receive(until: monotonicMilliseconds() + 5000).get() else { return XCTFail("an answer expected") }
        XCTAssertEqual(f.kind, .notOpen)
        h.kill()
        XCTAssertTrue(h.reaped, "killed and collected")
        XCTAssertEqual(serving(lifetime: lifetime), [])
    }

    func testAHelperThatNeverVerifiedIsCollectedAtTheClose() throws {
        let lifetime = 3572
        let h = try spawn(lifetime: lifetime)
        h.shutdown(graceMilliseconds: 5000)
        XCTAssertTrue(h.reaped, "the spawned process is collected")
        XCTAssertEqual(serving(lifetime: lifetime), [], "nothing left")
    }

    /// Inside PAM the fprintd helper detaches, unless the host adopts orphans; the CLI's does not.
    func testOnlyTheModulesHelperDetachesAndNeverForASubreaper() throws {
        var options = Options()
        options.fprintdHelper = helper
        options.timeoutSeconds = 20
        let lifetime = String(HelperLaunch.detachedLifetime(options))
        XCTAssertEqual(lifetime, "57", "start and release (7 s), the timeout, and 30 s")
        let module = try HelperLaunch.fprintd(options, diagnostics: .syslog, hostIsSubreaper: { false }).get()
        XCTAssertEqual(module.arguments, ["--serve", "--syslog", "--detach", lifetime])
        XCTAssertTrue(module.detached)
        let adopting = try HelperLaunch.fprintd(options, diagnostics: .syslog, hostIsSubreaper: { true }).get()
        XCTAssertEqual(adopting.arguments, ["--serve", "--syslog"])
        XCTAssertFalse(adopting.detached)
        let cli = try HelperLaunch.fprintd(options, diagnostics: .stderr, hostIsSubreaper: { false }).get()
        XCTAssertEqual(cli.arguments, ["--serve"])
        XCTAssertFalse(cli.detached)
        XCTAssertFalse(ProcessState.isChildSubreaper, "this test process adopts no orphans")
    }
}
