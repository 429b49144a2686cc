import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

let fprintHelper = cliBuildDirectory + "/biounlock-fprint"
let fprintdHelper = cliBuildDirectory + "/biounlock-fprintd"

/// The CLI with libfprint's virtual readers (configured in a root-owned config file, as on a
/// real machine) and, where both backends apply, the simulated sensor too.
final class FprintCLITests: XCTestCase {
    var dir = ""
    var db: String { dir + "/db/biounlock.db" }
    var config: String { dir + "/biounlock.conf" }
    var device: String { dir + "/vd" }
    var storage: String { dir + "/vds" }
    var sim: String { dir + "/sim" }
    let user = "daemon"

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: fprintHelper), "run scripts/build first: \(fprintHelper)")
        var template = Array("/tmp/bu-fcli.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        try configure()
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func configure(device: Bool = true, storage: Bool = true) throws {
        var text = "sensor = libfprint\nfprint_helper = \(fprintHelper)\n"
        if device { text += "fprint_virtual_device = \(self.device)\n" }
        if storage { text += "fprint_virtual_device_storage = \(self.storage)\n" }
        try text.write(toFile: config, atomically: true, encoding: .utf8)
    }

    @discardableResult
    func cli(_ args: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        try runProcess(cliPath, ["--db", db, "--config", config] + args, environment: environment)
    }

    /// Runs the CLI while another thread plays the finger on `socket`.
    func cli(_ args: [String], touching socket: String, with commands: [String]) throws -> ProcessResult {
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            for c in commands { _ = SimulatedFinger.send(bytes: Array(c.utf8), to: socket, waitMilliseconds: 5000) }
            done.leave()
        }
        let r = try cli(args)
        done.wait()
        return r
    }

    func json(_ r: ProcessResult) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout + r.stderr)
    }

    func fingers() throws -> [[String: Any]] {
        let status = try json(try cli(["status", user, "--json"]))
        return try XCTUnwrap((status["users"] as? [[String: Any]])?.first?["fingers"] as? [[String: Any]])
    }

    func testSensorsListsReadersAsTextAndJSON() throws {
        let text = try cli(["sensors"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("virtual_device/0  Virtual device for debugging\n  enrol stages: 5"), text.stdout)
        let listing = try json(try cli(["sensors", "--json"]))
        XCTAssertEqual(listing["sensor"] as? String, "libfprint")
        let readers = try XCTUnwrap(listing["readers"] as? [[String: Any]])
        XCTAssertEqual(readers.map { $0["driver"] as? String }, ["virtual_device", "virtual_device_storage"])
        XCTAssertEqual(Set(readers[0].keys), ["driver", "device", "name", "enrol_stages", "scan_type", "features"])
        XCTAssertEqual(readers[0]["enrol_stages"] as? Int, 5)
        XCTAssertEqual(readers[0]["features"] as? [String], ["verify"])
        XCTAssertEqual((readers[1]["features"] as? [String])?.contains("identify"), true)
    }

    func testTheCallersEnvironmentNamesNoReader() throws {
        try configure(device: false, storage: true)
        let attacker = ["FP_VIRTUAL_DEVICE": dir + "/evil", "FP_DRIVERS_WHITELIST": "virtual_device", "G_MESSAGES_DEBUG": "all",
                        "G_DEBUG": "fatal-warnings", "PATH": "/usr/bin:/bin"]
        let r = try cli(["sensors", "--json"], environment: attacker)
        XCTAssertEqual(r.status, 0, r.stderr)
        let readers = try XCTUnwrap(try json(r)["readers"] as? [[String: Any]])
        XCTAssertEqual(readers.map { $0["driver"] as? String }, ["virtual_device_storage"], "only the configured reader")
        XCTAssertEqual(r.stderr, "", "no GLib debug output")
    }

    func testEnrolShowsEveryStageAndRetryOnBothBackends() throws {
        let touches = ["SCAN daemon-ri", "RETRY 1", "SCAN daemon-ri", "RETRY 2", "SCAN daemon-ri", "RETRY 3",
                       "SCAN daemon-ri", "SCAN daemon-ri"]
        for (globals, socket) in [(["--sensor", "simulated", "--sim-socket", sim], sim), (["--sensor", "libfprint"], device)] {
            let r = try cli(globals + ["enrol", user, "--finger", "right-index", "--device", socket == sim ? "ignored" : "virtual_device",
                                       "--timeout", "20"], touching: socket, with: touches)
            XCTAssertEqual(r.status, 0, "\(globals): \(r.stderr)")
            let lines = r.stdout.split(separator: "\n").map(String.init)
            XCTAssertEqual(Array(lines.dropFirst().prefix(9)), [
                "touch 1/5", "Try again: the touch was too short.", "touch 2/5", "Try again: centre your finger on the reader.",
                "touch 3/5", "Try again: lift your finger and touch again.", "touch 4/5", "touch 5/5", "Enrolled right-index-finger for daemon.",
            ], "\(globals)")
        }
        let stored = try fingers()
        XCTAssertEqual(stored.count, 2, "one per sensor")
        let libfprint = try XCTUnwrap(stored.first { $0["sensor"] as? String == "libfprint" })
        XCTAssertEqual(libfprint["reader"] as? String, "virtual_device/0")
        XCTAssertTrue(libfprint["problem"] is NSNull)
        let template = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.templates.first { $0.sensor == .libfprint })
        XCTAssertEqual(Array(template.data.prefix(3)), Array("FP3".utf8))
        XCTAssertEqual(template.driver, "virtual_device")
        XCTAssertEqual(template.device, "0")
    }

    func testReEnrollingReplacesAndDeviceSelection() throws {
        let five = Array(repeating: "SCAN daemon-ri", count: 5)
        XCTAssertEqual(try cli(["enrol", user, "--device", "virtual_device"], touching: device, with: five).status, 0)
        let again = try cli(["enrol", user, "--device", "virtual_device_storage", "--replace"], touching: storage, with: five)
        XCTAssertEqual(again.status, 0, again.stderr)
        let stored = try fingers()
        XCTAssertEqual(stored.count, 1, "the same finger is replaced")
        XCTAssertEqual(stored.first?["reader"] as? String, "virtual_device_storage/0")

        let none = try cli(["enrol", user, "--device", "synaptics", "--replace"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("no reader matches 'synaptics'"), none.stderr)
        let ambiguous = try cli(["enrol", user, "--device", "0", "--replace"])
        XCTAssertEqual(ambiguous.status, 1)
        XCTAssertTrue(ambiguous.stderr.contains("2 readers match '0'"), ambiguous.stderr)
        XCTAssertEqual(try cli(["enrol", user, "--device", "bad name"]).status, 64)
        XCTAssertEqual(try fingers().count, 1, "failed enrolments store nothing")
    }

    func testEnrolmentErrorsStoreNothing() throws {
        let r = try cli(["enrol", user, "--device", "virtual_device"], touching: device, with: ["SCAN daemon-ri", "ERROR 5"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("enrolment failed"), r.stderr)
        XCTAssertTrue(r.stderr.contains("nothing was stored"), r.stderr)
        XCTAssertEqual(try fingers().count, 0)
    }

    func testUnenrolRemovesFromTheStoreAndFromAReaderThatKeepsPrints() throws {
        let five = Array(repeating: "SCAN daemon-ri", count: 5)
        XCTAssertEqual(try cli(["enrol", user, "--device", "virtual_device_storage"], touching: storage, with: five).status, 0)
        XCTAssertEqual(try cli(["enrol", user, "--finger", "left-thumb", "--device", "virtual_device"], touching: device,
                               with: Array(repeating: "SCAN daemon-lt", count: 5)).status, 0)
        XCTAssertEqual(try cli(["unenrol", user]).status, 64)
        XCTAssertEqual(try cli(["unenrol", user, "--all", "--finger", "left-thumb"]).status, 64)
        XCTAssertEqual(try cli(["unenrol", user, "--finger", "left-little"]).status, 1)

        // The storage reader's memory lives in one helper process: give it the print to delete.
        let r = try cli(["unenrol", user, "--finger", "right-index"], touching: storage, with: ["INSERT daemon-ri"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("Deleted right-index-finger from the reader virtual_device_storage/0."), r.stdout)
        XCTAssertTrue(r.stdout.contains("Removed right-index-finger for daemon (1 template)."), r.stdout)
        XCTAssertEqual(try fingers().map { $0["finger"] as? String }, ["left-thumb"])

        // A reader without storage: the store held the only copy.
        let all = try cli(["unenrol", user, "--all"])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertFalse(all.stdout.contains("Deleted"), all.stdout)
        XCTAssertEqual(try fingers().count, 0)
    }

    func testUnenrolStillRemovesFromTheStoreWhenTheReaderIsGone() throws {
        XCTAssertEqual(try cli(["enrol", user, "--device", "virtual_device_storage"], touching: storage,
                               with: Array(repeating: "SCAN daemon-ri", count: 5)).status, 0)
        try configure(device: true, storage: false)
        let r = try cli(["unenrol", user, "--all"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("right-index-finger could not be deleted from its reader: it was taken on virtual_device_storage/0, not on the reader in use"), r.stderr)
        XCTAssertEqual(try fingers().count, 0)
    }

    func testEnableNeedsAReader() throws {
        XCTAssertEqual(try cli(["enrol", user, "--device", "virtual_device"], touching: device,
                               with: Array(repeating: "SCAN daemon-ri", count: 5)).status, 0)
        // Only the storage reader is there, and the config asks for the plain one.
        try configure(device: false, storage: true)
        try (String(contentsOfFile: config, encoding: .utf8) + "fprint_device = virtual_device\n").write(toFile: config, atomically: true, encoding: .utf8)
        let refused = try cli(["--policy", "biometrics", "enable", user])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("no fingerprint reader is present"), refused.stderr)
        try configure(device: true, storage: false)
        let enabled = try cli(["--policy", "biometrics", "enable", user])
        XCTAssertEqual(enabled.status, 0, enabled.stderr)
    }

    func testStatusNamesUnusableStoredPrints() throws {
        let store = try Store.open(path: db, mode: .administer)
        try store.saveTemplate(Template(finger: .leftThumb, sensor: .libfprint, data: Array("FP".utf8), driver: "virtual_device", device: "0", created: 1), user: user)
        try store.saveTemplate(Template(finger: .leftIndex, sensor: .libfprint, data: Array("daemon-li".utf8), created: 2), user: user)
        let text = try cli(["status", user])
        XCTAssertTrue(text.stdout.contains("left-thumb (libfprint on virtual_device/0, enrolled 1970-01-01T00:00:01Z) UNUSABLE: truncated; enrol it again"), text.stdout)
        XCTAssertTrue(text.stdout.contains("left-index-finger (libfprint, enrolled 1970-01-01T00:00:02Z) UNUSABLE: not a libfprint print"), text.stdout)
        XCTAssertEqual(try fingers().map { $0["problem"] as? String }, ["truncated", "not a libfprint print"])
    }
}
