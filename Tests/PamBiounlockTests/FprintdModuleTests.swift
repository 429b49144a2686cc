import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockAdmin
import BiounlockStore
import BiounlockSensors

/// What only sensor=fprintd has, through real libpam and the real fprintd (one daemon for the
/// class): the greeters' fingerprint-only stacks as shipped in pam.d/, the reader released after
/// every outcome, a host that never maps D-Bus or GLib, and type-or-touch while fprintd waits.
final class FprintdModuleTests: ModuleTestCase {
    static var daemon: FprintdDaemon?
    let prompt = ScenarioTests.prompt
    let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("pam.d").path

    override class func tearDown() {
        daemon = nil
        super.tearDown()
    }

    func fprintd() throws -> FprintdDaemon {
        if let d = FprintdModuleTests.daemon { return d }
        let d = try FprintdDaemon.withDefaultUser()
        FprintdModuleTests.daemon = d
        return d
    }

    override func prepare() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: fprintHelperPath), "run scripts/build first: \(fprintHelperPath) is missing")
        try fixture.use(.fprintd, fprintd: try fprintd())
    }

    /// The pam_biounlock.so line of a shipped service file: its control and its arguments.
    func shippedLine(_ service: String) throws -> (control: String, arguments: String) {
        let text = try String(contentsOfFile: examples + "/" + service, encoding: .utf8)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains("pam_biounlock.so") && !$0.hasPrefix("#") }.map(String.init))
        let open = try XCTUnwrap(line.firstIndex(of: "[")), close = try XCTUnwrap(line.firstIndex(of: "]"))
        let control = String(line[open...close])
        let arguments = try XCTUnwrap(line.components(separatedBy: "pam_biounlock.so").last).trimmingCharacters(in: .whitespaces)
        return (control, arguments)
    }

    func testTheShippedGreeterStacksLetOnlyAMatchingFingerIn() throws {
        let sys = "sys"
        try fixture.store.setEnabled(true, user: ModuleFixture.otherUser, service: nil, at: 1)  // enabled, but no print in fprintd
        for service in ["gdm-fingerprint", "kde-fingerprint"] {
            let (control, arguments) = try shippedLine(service)
            XCTAssertEqual(control, PamStackLint.fingerprintOnlyControl, service)
            XCTAssertEqual(PamStackLint.lint(files: [service: try String(contentsOfFile: examples + "/" + service, encoding: .utf8)]), [],
                           "\(service) as shipped passes biounlock doctor")
            // pam_permit (optional) stands for pam_gnome_keyring: a module after it that succeeds.
            // Touches get all the time a loaded machine needs; silence gets two seconds.
            func configure(timeout: Int) throws {
                try fixture.service(arguments + " timeout=\(timeout)", name: service, after: "auth optional pam_permit.so", control: control)
            }
            try configure(timeout: 30)
            let touched = try fixture.authenticate(service: service, touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
            XCTAssertEqual(touched.code, "PAM_SUCCESS", "\(service): \(touched.raw.stdout)")
            XCTAssertEqual(touched.messages, ["INFO: " + ContractText.touchRequest(service)], service)
            // Nobody touches: the reader alone until the timeout (fingerprint_services), never a
            // prompt -- the password stack beside this one asks for the password.
            try configure(timeout: 2)
            let silent = try fixture.authenticate(service: service)
            try configure(timeout: 30)
            XCTAssertEqual(silent.code, "PAM_AUTHINFO_UNAVAIL", "\(service): \(silent.raw.stdout)")
            XCTAssertEqual(silent.messages, ["INFO: " + ContractText.touchRequest(service), "INFO: No touch in time."], service)
            let wrong = try fixture.authenticate(service: service, touches: Array(repeating: ModuleFixture.scan("mallory"), count: 3),
                                                 extra: ["--check-host"])
            XCTAssertEqual(wrong.code, "PAM_MAXTRIES", "\(service): \(wrong.raw.stdout)")
            XCTAssertTrue(wrong.raw.stdout.contains("children=none"), wrong.raw.stdout)
            // Biometric unlock off (the module's PAM_IGNORE dies: libpam answers PAM_PERM_DENIED),
            // nothing in fprintd, an unknown name: this stack fails; the password stack beside it
            // is the way in.
            for (user, code) in [(sys, "PAM_PERM_DENIED"), (ModuleFixture.otherUser, "PAM_AUTHINFO_UNAVAIL"), ("biounlock-no-such-user", "PAM_USER_UNKNOWN")] {
                let t = try fixture.authenticate(user, service: service, answers: ["a-password"])
                XCTAssertEqual(t.code, code, "\(service) \(user): \(t.raw.stdout)")
                XCTAssertFalse(t.messages.contains { $0.hasPrefix("PROMPT") }, "\(service) \(user): no prompt in a fingerprint-only stack")
            }
            try fixture.store.resetCounters(user: ModuleFixture.enrolledUser, biometric: true, passcode: true)
        }
        // Why not 'required': PAM_IGNORE from a required module leaves the result to pam_permit.
        try fixture.service("sensor=fprintd policy=biometrics touch_first=120", name: "careless", after: "auth optional pam_permit.so", control: "required")
        XCTAssertEqual(try fixture.authenticate(sys, service: "careless").code, "PAM_SUCCESS",
                       "the pitfall biounlock doctor reports: 'required' lets a user without biometric unlock in")
    }

    func testTheReaderIsReleasedAfterEveryOutcome() throws {
        let d = try fprintd()
        // The outcomes reached by touches get all the time a loaded machine needs; the two that
        // are about the timeout get one second.
        let outcomes: [(String, [SimCommand], String, timeout: Int)] = [
            ("match", [ModuleFixture.scan(ModuleFixture.fingerID)], "PAM_SUCCESS", 30),
            ("wrong fingers", [ModuleFixture.scan("mallory"), ModuleFixture.scan("mallory")], "PAM_MAXTRIES", 30),
            ("a retry, then the timeout", [.retry(1)], "PAM_AUTHINFO_UNAVAIL", 1),
            ("silence", [], "PAM_AUTHINFO_UNAVAIL", 1),
            ("a device error", [.error(5)], "PAM_AUTHINFO_UNAVAIL", 30),
        ]
        for (name, touches, code, timeout) in outcomes {
            try fixture.service("policy=biometrics max_tries=2 timeout=\(timeout)")
            let t = try fixture.authenticate(touches: touches, extra: ["--check-host"])
            XCTAssertEqual(t.code, code, "\(name): \(t.raw.stdout)")
            XCTAssertTrue(t.raw.stdout.contains("children=none"), "\(name): \(t.raw.stdout)")
            XCTAssertNil(try d.claimAndRelease(), "\(name): the next client can claim the reader at once")
            try fixture.store.resetCounters(user: ModuleFixture.enrolledUser, biometric: true, passcode: true)
        }
    }

    func testTheHostNeverMapsDBusOrGLib() throws {
        try fixture.service("policy=biometrics")
        let t = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)], extra: ["--maps"])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.lines("MAPS"), [], "printed as 'MAPS none': \(t.raw.stdout)")
        XCTAssertTrue(t.raw.stdout.contains("MAPS none"), t.raw.stdout)
    }

    func testTypingThePINWhileFprintdWaitsReleasesTheReader() throws {
        let d = try fprintd()
        try fixture.service("timeout=20")
        let script = """
            set timeout 30
            spawn \(harnessPath) --confdir \(fixture.confdir) --service biotest --user \(ModuleFixture.enrolledUser)
            expect {
                -ex "PIN or password for biotest, or touch the reader: " {}
                timeout { exit 124 }
            }
            sleep 0.5
            send -- "\(ModuleFixture.pin)\\r"
            expect {
                eof {}
                timeout { exit 124 }
            }
            """
        let r = try runProcess("/usr/bin/expect", ["-c", script], environment: ["PATH": "/usr/bin:/bin"])
        XCTAssertTrue(r.stdout.contains("RESULT 0 PAM_SUCCESS"), r.stdout)
        XCTAssertEqual(try fixture.store.recentEvents(limit: 1).first?.reason, "passcode-accepted")
        XCTAssertNil(try d.claimAndRelease(), "the verification was stopped and the reader released")
        XCTAssertNotEqual(try runProcess("/usr/bin/pgrep", ["-f", fprintHelperPath]).status, 0, "no helper left behind")
    }

    /// After a match the device is free before pam_authenticate returns: the helper releases it
    /// (Release, whose reply comes once fprintd has closed it) while the module records the
    /// success, and the module waits for the helper's end. A client already connected claims it
    /// the moment the transaction returns, every time -- as a second sudo right after the first
    /// would. (Left to fprintd's handling of a vanished client, as pam_fprintd leaves it, such a
    /// Claim can still find the device claimed: docs/DESIGN.md.)
    func testTheDeviceIsFreeTheMomentAMatchReturns() throws {
        let d = try fprintd()
        let claimer = try d.startClaimer()
        try fixture.service("policy=biometrics timeout=30")
        for round in 1...10 {
            let mark = d.logMark()
            let t = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
            XCTAssertEqual(t.code, "PAM_SUCCESS", "round \(round): \(t.raw.stdout)")
            // Released by the helper's Release, whose reply came before the transaction returned
            // (fprintd logs it before it replies): not left to fprintd noticing the helper's end.
            let log = d.log(since: mark, lines: Int.max)
            XCTAssertTrue(log.contains("to call method 'Release'") && log.contains("released device"), "round \(round): \(log)")
            XCTAssertNil(claimer.claimAndRelease(), "round \(round): the next client claims the device at once")
        }
    }

    /// The helper claims the device while it asks for the user's fingers, and starts verifying
    /// as soon as the Claim is answered (docs/DESIGN.md). When the answer is that the user has no
    /// finger there, or the module then asks for no touch (the passcode first, after an enrolment
    /// change), the device is released again before the transaction returns.
    func testTheDeviceIsFreeAfterAClaimThatFindsNothingToVerify() throws {
        let d = try fprintd()
        let claimer = try d.startClaimer()
        try fixture.store.setEnabled(true, user: ModuleFixture.otherUser, service: nil, at: 1)
        try fixture.service("policy=biometrics timeout=30")
        let nothing = try fixture.authenticate(ModuleFixture.otherUser)
        XCTAssertEqual(nothing.code, "PAM_AUTHINFO_UNAVAIL", nothing.raw.stdout)
        XCTAssertFalse(nothing.messages.contains { $0.contains("Touch") }, "no touch asked for: \(nothing.messages)")
        XCTAssertNil(claimer.claimAndRelease(), "released after 'nothing enrolled'")

        try fixture.service("require_passcode=enrolment timeout=30")
        try fixture.store.noteFprintdPrints(user: ModuleFixture.enrolledUser, prints: "0:left-thumb")
        let changed = try fixture.authenticate(answers: [ModuleFixture.pin])
        XCTAssertEqual(changed.code, "PAM_SUCCESS", changed.raw.stdout)
        XCTAssertEqual(try fixture.store.recentEvents(limit: 1).first?.reason, "passcode-accepted", "the passcode, not the finger")
        XCTAssertNil(claimer.claimAndRelease(), "the verification started with the Claim was stopped and the device released")
    }

    /// While fprintd verifies, the helper that talks to it maps no libfprint (nor GLib, libdbus
    /// or sd-bus): it is biounlock-fprintd, and its /proc/PID/maps shows what it loaded.
    func testTheHelperMapsNoLibfprintWhileVerifying() throws {
        let d = try fprintd()
        try fixture.service("policy=biometrics timeout=30")
        let transaction = Locked<Transaction?>(nil)
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread { [fixture] in
            let t = try? fixture?.authenticate()
            transaction.mutate { $0 = t }
            done.leave()
        }
        XCTAssertNil(d.waitUntilVerifying(), "fprintd verifies for the module")
        let pids = try runProcess("/usr/bin/pgrep", ["-f", fprintdHelperPath + " --serve"]).stdout
            .split(separator: "\n").compactMap { Int32($0) }
        XCTAssertEqual(pids.count, 1, "one helper runs: \(pids)")
        let maps = try String(contentsOfFile: "/proc/\(pids.first ?? 0)/maps", encoding: .utf8)
        XCTAssertTrue(maps.contains(fprintdHelperPath), "the maps of biounlock-fprintd: \(maps.prefix(300))")
        for library in ["libfprint", "libglib", "libgio", "libgobject", "libgusb", "libdbus", "libsystemd", "libstdc++"] {
            XCTAssertFalse(maps.contains(library), "\(library) mapped by the fprintd helper")
        }
        d.touch("SCAN \(ModuleFixture.fingerID)")
        done.wait()
        XCTAssertEqual(transaction.value?.code, "PAM_SUCCESS", transaction.value?.raw.stdout ?? "no transaction")
    }

    /// The helper detaches once fprintd verifies (biounlock-fprintd --detach: it forks, the
    /// process the host spawned ends at once and is collected, and its child serves the module,
    /// releases the device and answers `closed`): after a match the transaction returns on that
    /// answer without waiting for an exit, and the host is left no child, the device free. A host
    /// that adopts orphans (a subreaper) would be left the child: for such a host the helper does
    /// not fork, and is collected before the transaction returns, as before (docs/DESIGN.md).
    func testTheHelperDetachesUnlessTheHostAdoptsOrphans() throws {
        let d = try fprintd()
        let claimer = try d.startClaimer()
        try fixture.service("policy=biometrics timeout=30")
        let trace = fixture.dir + "/forks.out"
        for (extra, forks) in [([String](), 1), (["--subreaper"], 0)] {
            let t = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)], extra: ["--check-host"] + extra,
                                             wrapper: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=clone,clone3,fork,vfork", "-o", trace])
            XCTAssertEqual(t.code, "PAM_SUCCESS", "\(extra): \(t.raw.stdout)")
            XCTAssertTrue(t.raw.stdout.contains("children=none"), "\(extra): \(t.raw.stdout)")
            XCTAssertNil(claimer.claimAndRelease(), "\(extra): the next client claims the device at once")
            // A fork (a new process sharing no memory), not a posix_spawn or a thread (CLONE_VM).
            let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            let forked = lines.filter { $0.contains("CLONE_CHILD_SETTID") && !$0.contains("CLONE_VM") }
            XCTAssertEqual(forked.count, forks, "\(extra): \(lines)")
        }
    }

    /// A detached helper is not the host's child, and nothing kills it by pid: when its host dies
    /// mid-verification, the end of its socket is what stops it. It stops the verification,
    /// releases the device and ends by itself.
    func testADetachedHelperWhoseHostDiesReleasesTheDeviceAndEnds() throws {
        let d = try fprintd()
        try fixture.service("policy=biometrics timeout=30")
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread { [fixture] in
            _ = try? fixture?.authenticate()
            done.leave()
        }
        XCTAssertNil(d.waitUntilVerifying(), "fprintd verifies for the module")
        let hosts = try runProcess("/usr/bin/pgrep", ["-f", harnessPath + " --confdir " + fixture.confdir]).stdout
            .split(separator: "\n").compactMap { Int32($0) }
        XCTAssertEqual(hosts.count, 1, "the host: \(hosts)")
        for host in hosts { kill(host, SIGKILL) }
        done.wait()
        func within(_ seconds: Double, _ check: () throws -> Bool) rethrows -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if try check() { return true }
                usleep(20_000)
            }
            return try check()
        }
        XCTAssertTrue(try within(10) { try runProcess("/usr/bin/pgrep", ["-f", fprintdHelperPath + " --serve"]).status != 0 },
                      "the helper ended by itself")
        XCTAssertNil(try d.claimAndRelease(), "the device was released")
    }

    /// Every wait on the way to PAM_SUCCESS waits on the event itself (a socket, the helper's end:
    /// a pidfd), never a pause: no nanosleep, and no poll on nothing, in the module's process or
    /// in its helper.
    func testTheTouchPathWaitsOnEventsNotPauses() throws {
        try fixture.service("policy=biometrics timeout=30")
        let trace = fixture.dir + "/strace.out"
        let t = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)],
                                         wrapper: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=nanosleep,clock_nanosleep,poll,ppoll,select,pselect6",
                                                   "-o", trace])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        let pauses = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("nanosleep(") || $0.contains("poll(NULL, 0") || $0.contains("poll([], 0") || $0.contains("select(0,") }
        XCTAssertEqual(pauses, [], "fixed pauses on the authentication path")
    }
}
