import BiounlockSystem
import XCTest
import Foundation
import BiounlockCore
@testable import BiounlockSensors
import BiounlockFprintProtocol

/// fprintd's helper detached from its spawner (biounlock-fprintd --detach, HelperProcess with a
/// detached launch): the spawned process ends at once and is collected, the helper that serves
/// the channel is not the spawner's child, and -- since it can no longer be killed by pid -- it
/// ends by itself when the channel closes, and at the latest at its lifetime.
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

    func testTheSpawnedProcessEndsAtOnceAndTheHelperEndsWithTheChannel() throws {
        let lifetime = 3571
        let h = try spawn(lifetime: lifetime)
        XCTAssertTrue(h.reap(until: monotonicMilliseconds() + 5000), "the spawned process exits by itself")
        let pids = serving(lifetime: lifetime)
        XCTAssertEqual(pids.count, 1, "one helper serves the channel: \(pids)")
        XCTAssertNotEqual(parent(of: pids.first ?? 0), ProcessIdentity.processID, "not the spawner's child")
        // Still serving after its first process ended: a request is answered.
        XCTAssertNoThrow(try h.send(.fprintdVerify(timeoutMilliseconds: 100), until: monotonicMilliseconds() + 2000).get())
        guard case .failure(let f) = try h.receive(until: monotonicMilliseconds() + 5000).get() else { return XCTFail("an answer expected") }
        XCTAssertEqual(f.kind, .notOpen)
        // Never signalled (its pid is not ours to signal): closing the channel ends it.
        h.kill()
        XCTAssertTrue(gone(lifetime: lifetime, within: 10), "the helper ends once the channel closes: \(serving(lifetime: lifetime))")
    }

    func testTheHelperEndsAtItsLifetimeWithTheChannelOpen() throws {
        let lifetime = 1
        let h = try spawn(lifetime: lifetime)
        defer { h.kill() }
        XCTAssertTrue(gone(lifetime: lifetime, within: 10), "the helper ends at its lifetime: \(serving(lifetime: lifetime))")
        XCTAssertEqual(h.receive(until: monotonicMilliseconds() + 2000).failureValue, .closed)
    }

    func testShutdownReturnsOnTheHelpersClosedAnswer() throws {
        let lifetime = 3572
        let h = try spawn(lifetime: lifetime)
        h.shutdown(graceMilliseconds: 5000)
        XCTAssertTrue(h.reaped, "the spawned process is collected")
        XCTAssertTrue(gone(lifetime: lifetime, within: 10))
    }

    /// Inside PAM the fprintd helper detaches, unless the host adopts orphans; the CLI's does not.
    func testOnlyTheModulesHelperDetachesAndNeverForASubreaper() throws {
        var options = Options()
        options.fprintdHelper = helper
        options.timeoutSeconds = 20
        let lifetime = String(HelperLaunch.detachedLifetime(options))
        XCTAssertEqual(lifetime, "57")
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
