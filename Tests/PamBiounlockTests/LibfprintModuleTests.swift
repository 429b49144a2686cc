import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import BiounlockFprintProtocol

/// What only the libfprint backend has: several prints per reader, stored prints that are bad,
/// and the helper process (its environment, its trust, its lifetime), all through real libpam.
final class LibfprintModuleTests: ModuleTestCase {

    let user = ModuleFixture.enrolledUser
    let prompt = ScenarioTests.prompt
    let unavailable = ScenarioTests.unavailable

    override func prepare() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: fprintHelperPath), "run scripts/build first: \(fprintHelperPath) is missing")
        try fixture.use(.libfprint)
    }

    func save(_ finger: Finger, _ data: [UInt8], driver: String = "virtual_device", created: Int64) throws {
        try fixture.store.saveTemplate(Template(finger: finger, sensor: .libfprint, data: data, driver: driver, device: "0", created: created), user: user)
    }

    // MARK: several fingers

    func testAVerifyOnlyReaderComparesWithTheFirstEnrolledFinger() throws {
        // Right index (created 1, by use(.libfprint)) first, then left index.
        try save(.leftIndex, try VirtualPrints.print(id: "daemon-left-index"), created: 2)
        try fixture.service("policy=biometrics max_tries=1")
        let other = try fixture.authenticate(touches: [ModuleFixture.scan("daemon-left-index")])
        XCTAssertEqual(other.code, "PAM_MAXTRIES", "virtual_device verifies one print per touch: the first enrolled")
        let first = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(first.code, "PAM_SUCCESS", first.raw.stdout)
    }

    func testAnIdentifyingReaderTakesAnyEnrolledFinger() throws {
        try fixture.store.deleteTemplates(user: user, finger: nil)
        try fixture.store.saveTemplate(try VirtualPrints.template(.rightIndex, id: "daemon-ri", storage: true), user: user)
        var left = try VirtualPrints.template(.leftIndex, id: "daemon-li", storage: true)
        left.created = 2
        try fixture.store.saveTemplate(left, user: user)
        fixture.sensorArguments = fixture.libfprintArguments(device: false, storage: true)
        fixture.touchSocket = fixture.virtualStorage
        try fixture.service("policy=biometrics max_tries=2")
        // The storage reader's memory is per process: put both prints on it first (INSERT).
        let insert = ["INSERT daemon-ri", "INSERT daemon-li"]
        let t = try fixture.authenticate(touches: [ModuleFixture.scan("daemon-li")], rawTouches: insert)
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        // A finger the reader does not hold (DATA_NOT_FOUND) is a failed match, as in fprintd.
        let stranger = try fixture.authenticate(touches: [ModuleFixture.scan("mallory"), ModuleFixture.scan("mallory")], rawTouches: insert)
        XCTAssertEqual(stranger.code, "PAM_MAXTRIES", stranger.raw.stdout)
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 2)
    }

    // MARK: bad stored prints

    func testTruncatedForeignAndCorruptPrintsAreRefusedBeforeLibfprint() throws {
        try fixture.store.deleteTemplates(user: user, finger: nil)
        try save(.leftThumb, Array("FP".utf8), created: 1)                      // would abort fp_print_deserialize
        try save(.leftIndex, Array("daemon-left-index".utf8), created: 2)        // not a libfprint print
        try save(.leftMiddle, Array("FP3".utf8) + [UInt8](repeating: 0xA5, count: 64), created: 3) // corrupt
        try save(.leftRing, try VirtualPrints.print(id: "daemon-storage", storage: true), driver: "", created: 4) // another reader
        try fixture.service("policy=biometrics")
        let t = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)], extra: ["--check-host"])
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", t.raw.stdout)
        XCTAssertEqual(t.messages, [prompt, unavailable])
        XCTAssertEqual(try fixture.store.loadUser(user)?.biometricFailures, 0, "bad data is not a failed match")
        XCTAssertTrue(t.raw.stdout.contains("HOST signals=unchanged mask=unchanged children=none"), t.raw.stdout)

        // A good print among them still works, whatever comes before it.
        try save(.rightIndex, try VirtualPrints.print(id: ModuleFixture.fingerID), created: 5)
        let good = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(good.code, "PAM_SUCCESS", good.raw.stdout)
    }

    // MARK: the helper process

    func testAUserWithoutBiometricUnlockNeverStartsTheHelper() throws {
        let dir = try trustedScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeScript(dir + "/helper", "touch \(dir)/started\nexit 1")
        fixture.sensorArguments = "sensor=libfprint fprint_helper=\(dir)/helper"
        try fixture.service()
        let t = try fixture.authenticate(ModuleFixture.otherUser)
        XCTAssertEqual(t.code, "PAM_TRY_AGAIN", "PAM_IGNORE: \(t.raw.stdout)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/started"), "no helper for a user who has not opted in")
        try fixture.store.deleteTemplates(user: user, finger: nil)
        XCTAssertEqual(try fixture.authenticate(answers: [""]).code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/started"), "nor for one with nothing enrolled")
    }

    func testTheHelperGetsACleanEnvironmentAndItsSocketOnFd3() throws {
        let dir = try trustedScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeScript(dir + "/helper", "env > \(dir)/env\n[ -S /dev/fd/3 ] && echo socket > \(dir)/fd3\necho \"$@\" > \(dir)/args\nexit 1")
        fixture.sensorArguments = "sensor=libfprint fprint_helper=\(dir)/helper fprint_virtual_device=\(fixture.virtualDevice)"
        try fixture.service("policy=biometrics")
        let caller = ["FP_VIRTUAL_DEVICE": "/tmp/evil", "FP_VIRTUAL_DEVICE_STORAGE": "/tmp/evil2", "FP_DRIVERS_WHITELIST": "virtual_device",
                      "G_MESSAGES_DEBUG": "all", "G_DEBUG": "fatal-warnings", "GIO_EXTRA_MODULES": "/tmp", "GIO_MODULE_DIR": "/tmp",
                      "LD_PRELOAD": "/tmp/evil.so", "BIOUNLOCK_CANARY": "1", "PATH": "/tmp:/usr/bin:/bin"]
        let t = try fixture.authenticate(environment: caller)
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", "a helper that does not speak the protocol is unavailable")
        let env = try String(contentsOfFile: dir + "/env", encoding: .utf8).split(separator: "\n").map(String.init)
        let ours = env.filter { !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=") }.sorted()
        XCTAssertEqual(ours, ["FP_DRIVERS_WHITELIST=virtual_device", "FP_VIRTUAL_DEVICE=\(fixture.virtualDevice)",
                              "LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"], "exactly what biounlock sets, nothing of the caller")
        XCTAssertEqual(try String(contentsOfFile: dir + "/fd3", encoding: .utf8), "socket\n")
        XCTAssertEqual(try String(contentsOfFile: dir + "/args", encoding: .utf8), "--serve --syslog\n")
    }

    func testAnUntrustedHelperIsNeverStarted() throws {
        let dir = try trustedScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try writeScript(dir + "/helper", "touch \(dir)/started\nexit 1")
        chmod(dir + "/helper", 0o775)
        fixture.sensorArguments = "sensor=libfprint fprint_helper=\(dir)/helper"
        try fixture.service("policy=biometrics")
        XCTAssertEqual(try fixture.authenticate().code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/started"), "a group-writable helper was run")
        // Nor one under a world-writable directory (/tmp), nor a symlink to the real one.
        let tmpHelper = fixture.dir + "/helper"
        try writeScript(tmpHelper, "touch \(dir)/started\nexit 1")
        try FileManager.default.createSymbolicLink(atPath: dir + "/link", withDestinationPath: fprintHelperPath)
        for path in [tmpHelper, dir + "/link", "relative/helper", dir + "/../x/helper"] {
            fixture.sensorArguments = "sensor=libfprint fprint_helper=\(path)"
            try fixture.service("policy=biometrics")
            XCTAssertEqual(try fixture.authenticate().code, "PAM_AUTHINFO_UNAVAIL", path)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/started"))
    }

    /// Frames a fake helper sends at once, as bytes for `printf`-free shell scripts (`cat file >&3`).
    func frames(_ responses: [FprintResponse], to path: String) throws {
        let bytes = responses.flatMap { FrameBuffer.frame($0.payload) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    let virtualReader = ReaderDescription(driver: "virtual_device", device: "0", name: "fake", enrolStages: 5,
                                          features: [.verify], scanType: "press")

    func testAHelperThatHangsIsKilledAtTheDeadline() throws {
        let dir = try trustedScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Answers hello and open, then never answers verify. The helper would sleep far longer
        // than the harness's limit (60 s): a module that waited for it is caught as a hang.
        try frames([.hello, .opened(virtualReader)], to: dir + "/frames")
        try writeScript(dir + "/helper", "echo $$ > \(dir)/pid\ncat \(dir)/frames >&3\nexec sleep 600")
        fixture.sensorArguments = "sensor=libfprint fprint_helper=\(dir)/helper"
        try fixture.service("policy=biometrics timeout=1")
        let t = try fixture.authenticate(extra: ["--check-host"])
        XCTAssertFalse(t.raw.timedOut, "ended at the module's deadline")
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(t.messages, [prompt, "INFO: No touch in time."])
        XCTAssertTrue(t.raw.stdout.contains("children=none"), "killed and reaped: \(t.raw.stdout)")
        let pid = try XCTUnwrap(Int32(try String(contentsOfFile: dir + "/pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertEqual(kill(pid, 0), -1, "the helper is gone")

        // Silent from the start: the open is bounded by the timeout too.
        try writeScript(dir + "/helper", "exec sleep 600")
        let silent = try fixture.authenticate(extra: ["--check-host"])
        XCTAssertFalse(silent.raw.timedOut, "the open ended at its deadline")
        XCTAssertEqual(silent.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(silent.messages, [unavailable])
        XCTAssertTrue(silent.raw.stdout.contains("children=none"), silent.raw.stdout)
    }

    func testAHelperThatMisbehavesIsUnavailableNeverSuccess() throws {
        let dir = try trustedScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The longest touch timeout, and a helper that would outlive the harness's limit (60 s): a
        // module that left a broken exchange to its deadline, instead of ending it at once, is
        // caught as a hang.
        fixture.sensorArguments = "sensor=libfprint fprint_helper=\(dir)/helper"
        try fixture.service("policy=biometrics timeout=120")
        let cases: [(String, [UInt8])] = [
            ("an oversized frame", [0xff, 0xff, 0xff, 0xff]),
            ("another protocol version", FrameBuffer.frame([FprintProtocol.version &+ 1, 100])),
            ("a match with a print it was never sent",
             [FprintResponse.hello, .opened(virtualReader), .verified(.match(index: 7))].flatMap { FrameBuffer.frame($0.payload) }),
            ("an enrolment answer to verify",
             [FprintResponse.hello, .opened(virtualReader), .enrolled(print: Array("FP3abc".utf8))].flatMap { FrameBuffer.frame($0.payload) }),
            ("hello, then exit", FrameBuffer.frame(FprintResponse.hello.payload)),
        ]
        for (name, bytes) in cases {
            try Data(bytes).write(to: URL(fileURLWithPath: dir + "/frames"))
            try writeScript(dir + "/helper", "cat \(dir)/frames >&3\nexec sleep 600")
            if name == "hello, then exit" { try writeScript(dir + "/helper", "cat \(dir)/frames >&3\nexit 0") }
            let t = try fixture.authenticate(extra: ["--check-host", "--sigchld", "reap"])
            XCTAssertFalse(t.raw.timedOut, "\(name): not left to the deadline")
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", "\(name): \(t.raw.stdout)")
            XCTAssertTrue(t.raw.stdout.contains("HOST signals=unchanged mask=unchanged children=none"), "\(name): \(t.raw.stdout)")
        }
    }

    func testHostsThatReapOrIgnoreChildrenStillWork() throws {
        for mode in ["reap", "ignore"] {
            let t = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)], extra: ["--check-host", "--sigchld", mode])
            XCTAssertEqual(t.code, "PAM_SUCCESS", "\(mode): \(t.raw.stdout)")
            XCTAssertTrue(t.raw.stdout.contains("HOST signals=unchanged mask=unchanged children=none"), "\(mode): \(t.raw.stdout)")
        }
    }

    /// Every wait on the way to PAM_SUCCESS in the module waits on the event itself (a socket,
    /// the helper's end: a pidfd), never a pause: no nanosleep, and no poll on nothing, in the
    /// module's process. (libfprint's own threads in the helper are libfprint's.)
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

/// Type or touch with a real libfprint reader (virtual_device): the harness on a pseudo-terminal
/// (expect), so the module reads the terminal while the helper waits for a touch.
final class LibfprintTypeOrTouchTests: XCTestCase {
    func expectScript(_ fixture: ModuleFixture, send: String?) -> String {
        let action = send.map { "sleep 0.5\nsend -- \"\($0)\\r\"" } ?? ""
        return """
            set timeout 20
            spawn \(harnessPath) --confdir \(fixture.confdir) --service biotest --user \(ModuleFixture.enrolledUser)
            expect {
                -ex "PIN or password for biotest, or touch the reader: " {}
                timeout { exit 124 }
            }
            \(action)
            expect {
                eof {}
                timeout { exit 124 }
            }
            """
    }

    func helpersRunning() throws -> Bool {
        try runProcess("/usr/bin/pgrep", ["-f", fprintHelperPath]).status == 0
    }

    func testTypingThePINWhileTheReaderWaitsEndsTheHelper() throws {
        let fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        try fixture.use(.libfprint)
        try fixture.service("timeout=15")
        let r = try runProcess("/usr/bin/expect", ["-c", expectScript(fixture, send: ModuleFixture.pin)], environment: ["PATH": "/usr/bin:/bin"])
        XCTAssertTrue(r.stdout.contains("RESULT 0 PAM_SUCCESS"), r.stdout)
        XCTAssertEqual(try fixture.store.recentEvents(limit: 1).first?.reason, "passcode-accepted")
        XCTAssertFalse(try helpersRunning(), "the reader was released: no helper left behind")
    }

    func testATouchWithNoKeyPressed() throws {
        let fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        try fixture.use(.libfprint)
        try fixture.service("timeout=15")
        let path = fixture.touchSocket
        let touched = expectation(description: "touch")
        // No fixed wait: the send connects once libfprint's virtual_device listens (the helper
        // opened the reader for this transaction), and the device keeps the touch for the
        // verification it starts next.
        Thread.detachNewThread {
            _ = SimulatedFinger.send(bytes: Array("SCAN \(ModuleFixture.fingerID)".utf8), to: path, waitMilliseconds: 10_000)
            touched.fulfill()
        }
        let r = try runProcess("/usr/bin/expect", ["-c", expectScript(fixture, send: nil)], environment: ["PATH": "/usr/bin:/bin"])
        wait(for: [touched], timeout: 20)
        XCTAssertTrue(r.stdout.contains("RESULT 0 PAM_SUCCESS"), r.stdout)
        XCTAssertEqual(try fixture.store.recentEvents(limit: 1).first?.reason, "finger-matched")
    }

}
