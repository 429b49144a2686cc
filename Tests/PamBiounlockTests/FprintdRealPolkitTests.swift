import XCTest
import TestSupport
import Foundation

/// sensor=fprintd with Debian's REAL polkitd on the private bus (the other fprintd tests mock
/// polkit). fprintd authorizes Claim, VerifyStart and Release through polkit with the caller's
/// bus name, and polkitd resolves that name to the process and user the bus recorded for the
/// connection. The helper detaches once fprintd verifies: the process that opened the
/// connection ends, and its forked child carries on with the same connection. After a wrong
/// finger that child asks for VerifyStart again, and at the end for Release: polkitd must
/// still authorize those calls (as root, the sudo-like host here).
final class FprintdRealPolkitTests: XCTestCase {
    static var daemon: FprintdDaemon?
    var fixture: ModuleFixture!

    override class func tearDown() {
        daemon = nil
        super.tearDown()
    }

    override func tearDown() { fixture = nil }

    func fprintd() throws -> FprintdDaemon {
        if let d = FprintdRealPolkitTests.daemon { return d }
        let d = try FprintdDaemon.withDefaultUser(polkit: .real)
        FprintdRealPolkitTests.daemon = d
        return d
    }

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: fprintHelperPath), "run scripts/build first: \(fprintHelperPath) is missing")
        fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        try fixture.use(.fprintd, fprintd: try fprintd())
    }

    /// The right finger at once; a wrong finger, then the right one; two wrong fingers, then the
    /// right one. The first touch only once the process the bus recorded for the helper's
    /// connection has exited (the helper detached; the module collects it at its next read),
    /// each later one only once that process is gone altogether: at the latest the third
    /// VerifyStart comes from a connection whose process no longer exists. The real polkitd
    /// grants every VerifyStart (root: polkitd asks the bus for the connection's user), fprintd
    /// the Release (no polkit action), and the device is free afterwards.
    func testTheDetachedHelperIsStillAuthorizedAfterWrongFingers() throws {
        let d = try fprintd()
        // touch_first=120: the touch request alone, no prompt the harness would have to answer.
        try fixture.service("policy=biometrics touch_first=120 max_tries=3 timeout=30")
        let right = ModuleFixture.fingerID
        for (name, fingers) in [("the right finger at once", [right]), ("a wrong finger, then the right one", ["mallory", right]),
                                ("two wrong fingers, then the right one", ["mallory", "mallory", right])] {
            let mark = d.logMark()
            let result = Locked<Transaction?>(nil)
            let done = DispatchGroup()
            done.enter()
            Thread.detachNewThread { [fixture] in
                result.mutate { $0 = try? fixture?.authenticate(extra: ["--check-host"]) }
                done.leave()
            }
            XCTAssertNil(d.waitUntilVerifying(), "\(name): fprintd verifies for the module")
            XCTAssertTrue(within(10) { !d.connectionsOfExitedProcesses(gone: false).isEmpty },
                          "\(name): the helper detached (the process its bus connection names has exited): \(d.log(since: mark))")
            for (i, finger) in fingers.enumerated() {
                // Each touch only once fprintd runs the (i+1)-th VerifyStart; after the first, only
                // once the process the helper's connection names is gone.
                XCTAssertTrue(within(10) { d.granted("VerifyStart", since: mark) > i }, "\(name): VerifyStart \(i + 1): \(d.log(since: mark))")
                if i > 0 {
                    XCTAssertTrue(within(10) { !d.connectionsOfExitedProcesses(gone: true).isEmpty }, "\(name): the first process collected")
                }
                d.touch("SCAN " + finger)
            }
            XCTAssertEqual(done.wait(timeout: .now() + 60), .success, name)
            let t = try XCTUnwrap(result.value, name)
            XCTAssertEqual(t.code, "PAM_SUCCESS", "\(name): \(t.raw.stdout)\n\(d.log(since: mark))")
            XCTAssertTrue(t.raw.stdout.contains("children=none"), "\(name): \(t.raw.stdout)")
            XCTAssertEqual(d.unansweredAuthorizations(since: mark), [], "\(name): \(d.log(since: mark))")
            let log = d.log(since: mark, lines: Int.max)
            XCTAssertFalse(log.contains("Authorization denied"), "\(name): \(log)")
            XCTAssertEqual(d.granted("VerifyStart", since: mark), fingers.count, "\(name): one VerifyStart per touch, each granted")
            XCTAssertTrue(within(10) { d.granted("Release", since: mark) == 1 }, "\(name): the Release granted: \(log)")
            XCTAssertNil(try d.claimAndRelease(), "\(name): the next client claims the device at once")
            try fixture.store.resetCounters(user: ModuleFixture.enrolledUser, biometric: true, passcode: true)
        }
    }

    /// A locker running as the user (KDE's lock screen, i3lock) with `sensor = fprintd` in
    /// /etc/security/biounlock.conf: the module, as `daemon`, asks biounlock-check (setuid root),
    /// whose fprintd helper -- started by a process whose real uid is the user's and effective
    /// uid root -- claims the device and verifies through the real polkitd. A touch unlocks,
    /// every call fprintd authorized was granted, and the device is free afterwards.
    func testAUserLockerThroughTheCheckerIsAuthorizedByTheRealPolkit() throws {
        let d = try fprintd()
        let world = try CheckerWorld()
        try world.fixture.store.deleteTemplates(user: ModuleFixture.enrolledUser, finger: nil)
        world.fixture.closeStore()
        try world.config("sensor = fprintd\nfprintd_bus = \(d.address)\nfprintd_helper = \(fprintdHelperPath)\ntimeout = 30")
        world.fixture.touchSocket = d.virtualDevice
        let mark = d.logMark()
        let (t, log) = try world.authenticate(answers: [""], touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        let logged = d.log(since: mark, lines: Int.max)
        XCTAssertEqual(t.code, "PAM_SUCCESS", "\(t.raw.stdout)\n\(log)\n\(logged)")
        XCTAssertFalse(logged.contains("Authorization denied"), logged)
        XCTAssertGreaterThanOrEqual(d.granted("Claim", since: mark), 1, logged)
        XCTAssertGreaterThanOrEqual(d.granted("VerifyStart", since: mark), 1, logged)
        XCTAssertTrue(within(10) { d.granted("Release", since: mark) == 1 }, logged)
        XCTAssertNil(try d.claimAndRelease(), "the next client claims the device at once")
        XCTAssertTrue(log.contains { $0.contains("biounlock-check") }, "the checker decided: \(log)")
    }

    func within(_ seconds: Double, _ check: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if check() { return true }
            usleep(20_000)
        }
        return check()
    }
}

extension FprintdDaemon {
    /// How often fprintd logged "Authorization granted to ... to call method 'METHOD'" after `mark`.
    func granted(_ method: String, since mark: UInt64) -> Int {
        log(since: mark, lines: Int.max).split(separator: "\n")
            .filter { $0.contains("Authorization granted to ") && $0.contains("call method '\(method)'") }.count
    }

    /// The bus connections whose recorded process (GetConnectionUnixProcessID) has exited: is a
    /// zombie or (`gone`: only) no longer exists.
    func connectionsOfExitedProcesses(gone: Bool) -> [String] {
        guard let names = try? gdbus(["call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                      "--method", "org.freedesktop.DBus.ListNames"]) else { return [] }
        return names.stdout.split(whereSeparator: { $0 == "'" }).map(String.init).filter { $0.hasPrefix(":") }.filter { name in
            guard let r = try? gdbus(["call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                      "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", name]),
                  r.status == 0,
                  let field = r.stdout.components(separatedBy: "uint32 ").last?.split(separator: ",").first,
                  let pid = Int32(field) else { return false }
            if kill(pid, 0) != 0 && errno == ESRCH { return true }
            if gone { return false }
            // /proc/PID/stat: "PID (COMM) STATE ..."; Z: exited, not yet collected.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[close...].dropFirst(2).first == "Z"
        }
    }
}
