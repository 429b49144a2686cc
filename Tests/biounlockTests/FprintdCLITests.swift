import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore

/// One set of prints: the CLI and the module with sensor=fprintd against the real fprintd (one
/// daemon for the class, on a private bus), configured in a root-owned config file as on a
/// desktop. Prints made with the real fprintd-enroll are the ones biounlock lists, accepts and
/// verifies; prints biounlock enrols are the ones fprintd-list shows.
final class FprintdCLITests: XCTestCase {
    static var daemon: FprintdDaemon?
    var dir = ""
    var db: String { dir + "/db/biounlock.db" }
    var config: String { dir + "/biounlock.conf" }

    override class func tearDown() {
        daemon = nil
        super.tearDown()
    }

    func fprintd() throws -> FprintdDaemon {
        if let d = FprintdCLITests.daemon { return d }
        let d = try FprintdDaemon()
        FprintdCLITests.daemon = d
        return d
    }

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: fprintdHelper), "run scripts/build first: \(fprintdHelper)")
        var template = Array("/tmp/bu-fdcli.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        try configure(bus: try fprintd().address)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func configure(bus: String, sensor: String = "fprintd") throws {
        try "sensor = \(sensor)\nfprintd_bus = \(bus)\nfprint_helper = \(fprintHelper)\nfprintd_helper = \(fprintdHelper)\n".write(toFile: config, atomically: true, encoding: .utf8)
    }

    @discardableResult
    func cli(_ args: [String], stdin: String? = nil) throws -> ProcessResult {
        try runProcess(cliPath, ["--db", db, "--config", config] + args, stdin: stdin)
    }

    /// Runs the CLI while another thread plays the finger on fprintd's virtual device.
    func cli(_ args: [String], touches: [String]) throws -> ProcessResult {
        let d = try fprintd()
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            for t in touches { d.touch(t) }
            done.leave()
        }
        let r = try cli(args)
        done.wait()
        return r
    }

    func fingers(_ user: String) throws -> [[String: Any]] {
        let r = try cli(["status", user, "--json"])
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout + r.stderr)
        return try XCTUnwrap((status["users"] as? [[String: Any]])?.first?["fingers"] as? [[String: Any]])
    }

    /// One PAM transaction through the built module with this config.
    func authenticate(_ user: String, answers: [String] = [], touches: [String] = [], requirePasscode: String = "none",
                      arguments: String = "") throws -> String {
        try conversation(user, answers: answers, touches: touches, requirePasscode: requirePasscode, arguments: arguments)
            .last { $0.hasPrefix("RESULT ") }.map { String($0.split(separator: " ").last ?? "") } ?? "no RESULT line"
    }

    /// The same, returning what the harness printed: the conversation, then the RESULT line.
    func conversation(_ user: String, answers: [String] = [], touches: [String] = [], requirePasscode: String = "none",
                      arguments: String = "") throws -> [String] {
        let pam = dir + "/pam.d"
        try? FileManager.default.createDirectory(atPath: pam, withIntermediateDirectories: false)
        try """
            auth [success=done ignore=ignore default=die] \(cliBuildDirectory)/pam_biounlock.so config=\(config) db=\(db) require_passcode=\(requirePasscode) lid_path=\(dir)/lid logind_path=\(dir)/sessions proc_path=\(dir)/proc timeout=5 \(arguments)
            auth requisite pam_debug.so auth=try_again
            """.write(toFile: pam + "/biotest", atomically: true, encoding: .utf8)
        let d = try fprintd()
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            for t in touches { d.touch(t) }
            done.leave()
        }
        var args = ["--confdir", pam, "--service", "biotest", "--user", user]
        for a in answers { args += ["--answer", a] }
        let r = try runProcess(cliBuildDirectory + "/pam-harness", args, environment: ["PATH": "/usr/bin:/bin"])
        done.wait()
        return r.stdout.split(separator: "\n").map(String.init)
    }

    func testAPrintFromFprintdEnrolIsListedAcceptedAndUnlocks() throws {
        let d = try fprintd()
        let user = "daemon"
        try d.enrol(user: user, finger: "left-index-finger", id: "daemon-li")
        // status and list show fprintd's finger; the store holds none.
        let text = try cli(["status", user])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("    left-index-finger (fprintd on fprintd/0; kept by fprintd)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("note: biounlock uses fprintd (sensor fprintd)"), text.stdout)
        let finger = try XCTUnwrap(try fingers(user).first)
        XCTAssertEqual(finger["sensor"] as? String, "fprintd")
        XCTAssertEqual(finger["reader"] as? String, "fprintd/0")
        XCTAssertTrue(finger["enrolled"] is NSNull)
        // enable accepts it once the passcode the policy falls back to is set.
        let refused = try cli(["enable", user])
        XCTAssertEqual(refused.status, 1)
        XCTAssertFalse(refused.stderr.contains("fprintd holds no fingerprint"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("passcode set daemon --kind pin"), refused.stderr)
        XCTAssertEqual(try cli(["passcode", "set", user, "--kind", "pin", "--stdin"], stdin: "2468\n").status, 0)
        let enabled = try cli(["enable", user])
        XCTAssertEqual(enabled.status, 0, enabled.stderr)
        XCTAssertTrue(try cli(["list"]).stdout.contains("daemon: on · 1 finger · passcode: PIN"))

        // The module: the finger unlocks; a wrong finger and a wrong PIN do not; the PIN does
        // after a wrong finger.
        XCTAssertEqual(try authenticate(user, touches: ["SCAN daemon-li"]), "PAM_SUCCESS")
        XCTAssertNotEqual(try authenticate(user, answers: ["1111"], touches: ["SCAN mallory"], arguments: "max_tries=1"), "PAM_SUCCESS")
        XCTAssertEqual(try authenticate(user, answers: ["2468"], touches: ["SCAN mallory"], arguments: "max_tries=1"), "PAM_SUCCESS")
        let log = try cli(["log", "--json"]).stdout
        XCTAssertTrue(log.contains("\"reason\": \"finger-matched\""), log)
        XCTAssertTrue(log.contains("\"reason\": \"passcode-accepted\""), log)
        // biounlock's counters apply: the wrong finger was counted and the PIN reset it.
        XCTAssertEqual(try Store.open(path: db, mode: .authenticate).loadUser(user)?.biometricFailures, 0)
    }

    /// A finger enrolled in fprintd outside biounlock (fprintd-enroll here; GNOME Settings on a
    /// desktop) is an enrolment change, as `biounlock enrol` is: with require_passcode=enrolment
    /// the next authentication takes the passcode, not the finger; then both fingers unlock.
    func testAFingerEnrolledOutsideBiounlockRequiresThePasscodeOnce() throws {
        let d = try fprintd()
        let user = "games"
        try d.enrol(user: user, finger: "left-index-finger", id: "games-li")
        XCTAssertEqual(try cli(["passcode", "set", user, "--kind", "pin", "--stdin"], stdin: "2468\n").status, 0)
        XCTAssertEqual(try cli(["enable", user]).status, 0)
        func record() throws -> String {
            let r = try XCTUnwrap(try Store.open(path: db, mode: .administer).loadUser(user))
            return "\(r.fprintdPrints ?? "nil") v\(r.enrolmentVersion)"
        }
        XCTAssertEqual(try record(), "0:left-index-finger v0", "enable records the set it accepted: no change")
        func lastReason() throws -> String {
            let log = try cli(["log", "--user", user, "--json"]).stdout
            let events = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(log.utf8)) as? [String: Any])?["events"] as? [[String: Any]], log)
            return events.first?["reason"] as? String ?? log
        }
        // The PIN once (first use), then the finger.
        XCTAssertEqual(try authenticate(user, answers: ["2468"], requirePasscode: "enrolment"), "PAM_SUCCESS")
        XCTAssertEqual(try authenticate(user, touches: ["SCAN games-li"], requirePasscode: "enrolment"), "PAM_SUCCESS")
        XCTAssertEqual(try lastReason(), "finger-matched")
        XCTAssertEqual(try record(), "0:left-index-finger v0")
        func passcodeRequired() throws -> Any? {
            let r = try cli(["status", user, "--json"])
            let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout + r.stderr)
            return try XCTUnwrap((status["users"] as? [[String: Any]])?.first)["passcode_required"] ?? "absent"
        }
        XCTAssertTrue(try passcodeRequired() is NSNull)

        try d.enrol(user: user, finger: "right-thumb", id: "games-rt")
        XCTAssertEqual(try passcodeRequired() as? String, "enrolment", "status says what the module will decide")
        XCTAssertEqual(try conversation(user, answers: ["2468"], requirePasscode: "enrolment"), [
            "INFO: PIN required: the enrolled fingers have changed.",
            "PROMPT_OFF: PIN or password for biotest: ",
            "RESULT 0 PAM_SUCCESS",
        ], "the PIN, not the finger, after a change made in fprintd")
        XCTAssertEqual(try lastReason(), "passcode-accepted")
        XCTAssertEqual(try record(), "0:left-index-finger,0:right-thumb v1")
        XCTAssertEqual(try authenticate(user, touches: ["SCAN games-rt"], requirePasscode: "enrolment"), "PAM_SUCCESS")
        XCTAssertEqual(try lastReason(), "finger-matched", "the new finger, once the PIN was entered")
        XCTAssertEqual(try record(), "0:left-index-finger,0:right-thumb v1")
    }

    func testEnableRefusesWithoutPrintsAndNamesTheCommand() throws {
        let r = try cli(["--policy", "biometrics", "enable", "bin"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("fprintd holds no fingerprint for bin (sensor fprintd)"), r.stderr)
        XCTAssertTrue(r.stderr.contains("enrol bin --finger right-index-finger   # or: fprintd-enroll bin, or GNOME Settings / KDE Users"), r.stderr)
    }

    func testEnrolAndUnenrolGoThroughFprintd() throws {
        let d = try fprintd()
        let user = "sys"
        let before = try Store.open(path: db, mode: .administer).loadUser(user)?.enrolmentVersion ?? 0
        let enrolled = try cli(["enrol", user, "--finger", "right-thumb", "--timeout", "20"],
                               touches: ["SCAN sys-rt", "RETRY 1", "SCAN sys-rt", "RETRY 2", "SCAN sys-rt", "SCAN sys-rt", "SCAN sys-rt"])
        XCTAssertEqual(enrolled.status, 0, enrolled.stderr)
        XCTAssertEqual(enrolled.stdout.split(separator: "\n").map(String.init), [
            "Enrolling right-thumb for sys in fprintd on Virtual device for debugging (fprintd/0): touch the reader 5 times.",
            "touch 1/5", "Try again: the touch was too short.", "touch 2/5", "Try again: centre your finger on the reader.",
            "touch 3/5", "touch 4/5", "touch 5/5",
            "Enrolled right-thumb for sys in fprintd (GNOME Settings, KDE and fprintd-list see it too).",
            "Turn biometric unlock on with: biounlock --db \(db) --config \(config) enable sys",
        ])
        XCTAssertTrue(try d.list(user).contains("right-thumb"), "fprintd-list shows biounlock's enrolment")
        XCTAssertEqual(try fingers(user).map { $0["finger"] as? String }, ["right-thumb"])
        let after = try Store.open(path: db, mode: .administer).loadUser(user)?.enrolmentVersion ?? 0
        XCTAssertGreaterThan(after, before, "require_passcode=enrolment sees the change")
        XCTAssertEqual(try Store.open(path: db, mode: .administer).loadUser(user)?.fprintdPrints, "0:right-thumb",
                       "the set it leaves, so that the module does not count this change again")
        // fprintd would replace the print without a word: refused without --replace, before any touch.
        let again = try cli(["enrol", user, "--finger", "right-thumb", "--timeout", "2"])
        XCTAssertEqual(again.status, 1, again.stdout)
        XCTAssertTrue(again.stderr.contains("right-thumb is already enrolled for sys; nothing was changed."), again.stderr)
        XCTAssertEqual(again.stdout, "")

        XCTAssertEqual(try cli(["unenrol", user, "--finger", "left-thumb"]).stderr, "biounlock: left-thumb is not enrolled in fprintd for sys\n")
        let removed = try cli(["unenrol", user, "--finger", "right-thumb"])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertTrue(removed.stdout.contains("Removed right-thumb for sys from fprintd."), removed.stdout)
        XCTAssertFalse(try d.list(user).contains("right-thumb"), "fprintd-list no longer shows it")
        XCTAssertEqual(try fingers(user).count, 0)
        let removedAt = try XCTUnwrap(try Store.open(path: db, mode: .administer).loadUser(user))
        XCTAssertEqual(removedAt.fprintdPrints, "")
        XCTAssertGreaterThan(removedAt.enrolmentVersion, after)
    }

    func testEnrolmentErrorsAreReportedAndFprintdStoresNothing() throws {
        let d = try fprintd()
        let r = try cli(["enrol", "bin", "--finger", "left-ring", "--timeout", "20"], touches: ["SCAN bin-lr", "ERROR 5"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("enrolment failed") && r.stderr.contains("fprintd stored nothing"), r.stderr)
        XCTAssertFalse(try d.list("bin").contains("left-ring"))
        // fprintd dropped the reader the error came from (a protocol error is a disconnect): plug it in again.
        try d.restart(.one)
    }

    func testSensorsDoctorAndAnUnreachableFprintd() throws {
        let sensors = try cli(["sensors"])
        XCTAssertEqual(sensors.status, 0, sensors.stderr)
        XCTAssertTrue(sensors.stdout.hasPrefix("fprintd/0  Virtual device for debugging"), sensors.stdout)
        let doctor = try cli(["doctor", "--pam-dir", dir, "--json"])
        let checks = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])?["checks"] as? [[String: Any]])
        let sensor = try XCTUnwrap(checks.first { $0["check"] as? String == "sensor" })
        XCTAssertEqual(sensor["detail"] as? String, "fprintd is in use: sensor=fprintd is configured")
        let reader = try XCTUnwrap(checks.first { $0["check"] as? String == "reader" })
        XCTAssertEqual(reader["status"] as? String, "ok")
        XCTAssertTrue((reader["detail"] as? String)?.contains("has 1 reader: fprintd/0 Virtual device for debugging") == true, "\(reader)")

        // sensor=auto: fprintd's D-Bus service is installed here (scripts/deps installs fprintd).
        try configure(bus: try fprintd().address, sensor: "auto")
        let auto = try cli(["doctor", "--pam-dir", dir])
        XCTAssertTrue(auto.stdout.contains("sensor: fprintd is in use: sensor=auto: fprintd's D-Bus service is installed (/usr/share/dbus-1/system-services/net.reactivated.Fprint.service)"), auto.stdout)

        // No bus there: reported, never fatal; enable refuses with the fix.
        try configure(bus: "unix:path=\(dir)/no-bus")
        let status = try cli(["status", "daemon"])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("note: fprintd could not be asked for the enrolled fingers:"), status.stdout)
        let enable = try cli(["--policy", "biometrics", "enable", "daemon"])
        XCTAssertEqual(enable.status, 1)
        XCTAssertTrue(enable.stderr.contains("fprintd cannot be reached:"), enable.stderr)
        let down = try cli(["doctor", "--pam-dir", dir])
        XCTAssertTrue(down.stdout.contains("warning  reader: fprintd cannot be reached"), down.stdout)
    }
}
