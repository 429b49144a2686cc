import XCTest
import BiounlockAdmin
import BiounlockCore

final class EnableCheckTests: XCTestCase {
    func testRefusesWithTheExactCommandToRun() {
        var options = Options()
        options.sensor = .simulated
        let refusals = EnableCheck.refusals(user: "alice", record: nil, options: options, globals: ["--db", "/tmp/x.db"])
        XCTAssertEqual(refusals.map(\.fix), ["biounlock --db /tmp/x.db enrol alice --finger right-index-finger",
                                            "biounlock --db /tmp/x.db passcode set alice --kind pin"])
    }

    func testBiometricsPolicyNeedsNoPasscode() {
        var options = Options()
        options.sensor = .simulated
        options.policy = .biometrics
        let record = UserRecord(name: "alice", templates: [Template(finger: .rightIndex, sensor: .simulated, data: [1], created: 0)])
        XCTAssertEqual(EnableCheck.refusals(user: "alice", record: record, options: options, globals: []), [])
        options.sensor = .libfprint
        XCTAssertEqual(EnableCheck.refusals(user: "alice", record: record, options: options, globals: []).count, 1,
                       "a finger enrolled on another sensor does not count")
    }

    func testARealReaderMustBePresent() {
        var options = Options()
        options.sensor = .libfprint
        options.policy = .biometrics
        let record = UserRecord(name: "alice", templates: [Template(finger: .rightIndex, sensor: .libfprint, data: [1], created: 0)])
        let reader = ReaderInfo(driver: "synaptics", device: "1-2", name: "Synaptics", enrolStages: 10, features: ["verify"], scanType: "press")
        XCTAssertEqual(EnableCheck.refusals(user: "alice", record: record, options: options, globals: [], readers: .success([reader])), [])
        let none = EnableCheck.refusals(user: "alice", record: record, options: options, globals: [], readers: .success([]))
        XCTAssertEqual(none.map(\.problem), ["no fingerprint reader is present (sensor libfprint)"])
        XCTAssertEqual(none.first?.fix, "biounlock sensors   # then plug in a reader, or check fprint_device")
        let broken = EnableCheck.refusals(user: "alice", record: record, options: options, globals: [],
                                          readers: .failure(SensorUnavailable("fprint_helper refused")))
        XCTAssertEqual(broken.count, 1)
    }

    func testWithFprintdTheFingersFprintdHoldsCount() {
        var options = Options()
        options.sensor = .fprintd
        options.policy = .biometrics
        // The store's own templates (of any backend) do not count for fprintd.
        let record = UserRecord(name: "alice", templates: [Template(finger: .rightIndex, sensor: .libfprint, data: [1], created: 0)])
        let reader = ReaderInfo(driver: "fprintd", device: "0", name: "Virtual", enrolStages: 0, features: ["verify"], scanType: "press")
        XCTAssertEqual(EnableCheck.refusals(user: "alice", record: record, options: options, globals: [],
                                            readers: .success([reader]), fprintdFingers: .success([.leftThumb])), [])
        let none = EnableCheck.refusals(user: "alice", record: record, options: options, globals: ["--db", "/x"],
                                        readers: .success([reader]), fprintdFingers: .success([]))
        XCTAssertEqual(none.map(\.problem), ["fprintd holds no fingerprint for alice (sensor fprintd)"])
        XCTAssertEqual(none.first?.fix, "biounlock --db /x enrol alice --finger right-index-finger   # or: fprintd-enroll alice, or GNOME Settings / KDE Users")
        let down = EnableCheck.refusals(user: "alice", record: record, options: options, globals: [],
                                        readers: .failure(SensorUnavailable("fprintd is not running")),
                                        fprintdFingers: .failure(SensorUnavailable("fprintd is not running")))
        XCTAssertEqual(down.map(\.problem), ["fprintd cannot be reached: fprintd is not running"], "said once")
        XCTAssertTrue(down[0].fix.hasPrefix("biounlock doctor"), down[0].fix)
    }
}
