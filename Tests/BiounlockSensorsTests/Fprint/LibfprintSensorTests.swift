import BiounlockSystem
import XCTest
import Foundation
import BiounlockCore
@testable import BiounlockSensors
import BiounlockFprintProtocol

let sensorsBuildDirectory: String = {
    if let dir = ProcessInfo.processInfo.environment["BIOUNLOCK_BUILD_DIR"] { return dir }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("build").path
}()

/// The libfprint backend against libfprint's virtual drivers, through the built helper
/// (build/biounlock-fprint): enrolment events, verify results, deadlines, and the helper's own
/// refusal of bad prints.
final class LibfprintSensorTests: XCTestCase {
    var dir = ""
    var device: String { dir + "/vd" }
    var storage: String { dir + "/vds" }
    var options = Options()

    override func setUpWithError() throws {
        let helper = sensorsBuildDirectory + "/biounlock-fprint"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: helper), "run scripts/build first: \(helper)")
        var template = Array("/tmp/bu-fp.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        options.sensor = .libfprint
        options.fprintHelper = helper
        options.fprintVirtualDevice = device
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func open(_ options: Options? = nil) throws -> OpenReader {
        try Sensors(logger: nil, helperDiagnostics: .stderr).openReader(options ?? self.options).get()
    }

    /// Sends virtual_device commands from another thread (the reader is the server).
    func finger(_ commands: [String], to path: String? = nil) -> XCTestExpectation {
        let done = expectation(description: "finger")
        let socket = path ?? device
        Thread.detachNewThread {
            for c in commands { _ = SimulatedFinger.send(bytes: Array(c.utf8), to: socket, waitMilliseconds: 5000) }
            done.fulfill()
        }
        return done
    }

    func enrol(_ id: String, on reader: OpenReader, socket: String? = nil) throws -> Template {
        let touches = finger(Array(repeating: "SCAN \(id)", count: reader.info.enrolStages), to: socket)
        defer { wait(for: [touches], timeout: 10) }
        return try reader.sensor.enroll(finger: .rightIndex, deadline: .after(milliseconds: 10_000)) { _ in }.get()
    }

    func testEnrolmentReportsEveryStageAndEveryRetry() throws {
        let reader = try open()
        defer { reader.sensor.close() }
        XCTAssertEqual(reader.info, ReaderInfo(driver: "virtual_device", device: "0", name: "Virtual device for debugging",
                                               enrolStages: 5, features: ["verify"], scanType: reader.info.scanType))
        let touches = finger(["SCAN alice", "RETRY 1", "SCAN alice", "RETRY 2", "SCAN bob", "RETRY 3", "SCAN alice", "SCAN alice", "SCAN alice"])
        var events: [EnrollEvent] = []
        let template = try reader.sensor.enroll(finger: .leftThumb, deadline: .after(milliseconds: 10_000)) { events.append($0) }.get()
        wait(for: [touches], timeout: 10)
        XCTAssertEqual(events, [.stage(done: 1, of: 5), .retry(.tooShort), .stage(done: 2, of: 5), .retry(.centerFinger),
                                .retry(.general), .retry(.removeFinger), .stage(done: 3, of: 5), .stage(done: 4, of: 5),
                                .stage(done: 5, of: 5)], "another finger is a general retry in libfprint")
        XCTAssertEqual(template.finger, .leftThumb)
        XCTAssertEqual(template.sensor, .libfprint)
        XCTAssertEqual(template.driver, "virtual_device")
        XCTAssertEqual(template.device, "0")
        XCTAssertEqual(Array(template.data.prefix(3)), Array("FP3".utf8))
    }

    func testVerifyResults() throws {
        let reader = try open()
        defer { reader.sensor.close() }
        let t = try enrol("alice", on: reader)
        let touches = finger(["SCAN alice", "SCAN mallory", "RETRY 2", "ERROR 4"])
        let deadline = Deadline.after(milliseconds: 10_000)
        XCTAssertEqual(reader.sensor.verify(against: [t], deadline: deadline), .match(.rightIndex))
        XCTAssertEqual(reader.sensor.verify(against: [t], deadline: deadline), .noMatch)
        XCTAssertEqual(reader.sensor.verify(against: [t], deadline: deadline), .retry(.centerFinger))
        guard case .unavailable = reader.sensor.verify(against: [t], deadline: deadline) else { return XCTFail("busy is unavailable") }
        wait(for: [touches], timeout: 10)
    }

    func testSilenceEndsAtTheDeadlineAndTheReaderStaysUsable() throws {
        let reader = try open()
        defer { reader.sensor.close() }
        let t = try enrol("alice", on: reader)
        // A hang fails through `bounded`; the helper is asked to give up before our deadline.
        XCTAssertEqual(bounded { reader.sensor.verify(against: [t], deadline: .after(milliseconds: 600)) }, .timedOut)
        let touch = finger(["SCAN alice"])
        XCTAssertEqual(reader.sensor.verify(against: [t], deadline: .after(milliseconds: 10_000)), .match(.rightIndex), "cancelled cleanly")
        wait(for: [touch], timeout: 10)
    }

    func testUnplugMidVerifyIsUnavailable() throws {
        let reader = try open()
        defer { reader.sensor.close() }
        let t = try enrol("alice", on: reader)
        let unplug = finger(["UNPLUG"])
        guard case .unavailable(let why) = reader.sensor.verify(against: [t], deadline: .after(milliseconds: 10_000)) else {
            return XCTFail("unplug is unavailable")
        }
        XCTAssertTrue(why.description.contains("device error 256"), why.description)
        wait(for: [unplug], timeout: 10)
    }

    func testEnrolmentWithoutTouchesTimesOut() throws {
        let reader = try open()
        defer { reader.sensor.close() }
        let result = reader.sensor.enroll(finger: .rightIndex, deadline: .after(milliseconds: 500)) { _ in }
        XCTAssertEqual(result.failureValue, SensorUnavailable("no touch in time"))
    }

    func testNoReaderAndAmbiguousSelectors() throws {
        var none = options
        none.fprintVirtualDevice = nil
        none.fprintVirtualDeviceStorage = storage
        none.fprintDevice = "virtual_device"
        XCTAssertTrue(Sensors(logger: nil, helperDiagnostics: .stderr).openReader(none).failureValue?.description.contains("no reader matches 'virtual_device'") ?? false)
        var both = options
        both.fprintVirtualDeviceStorage = storage
        both.fprintDevice = "0"
        XCTAssertTrue(Sensors(logger: nil, helperDiagnostics: .stderr).openReader(both).failureValue?.description.contains("2 readers match '0'") ?? false)
        both.fprintDevice = "virtual_device_storage/0"
        let reader = try open(both)
        XCTAssertEqual(reader.info.driver, "virtual_device_storage")
        reader.sensor.close()
        let listed = try Sensors(logger: nil, helperDiagnostics: .stderr).list(both).get()
        XCTAssertEqual(listed.map(\.driver), ["virtual_device", "virtual_device_storage"])
        XCTAssertEqual(listed.last?.features, ["verify", "identify", "storage", "storage-list", "storage-delete", "storage-clear", "duplicates-check"])
    }

    func testStoragePrintsAreDeletedFromTheReader() throws {
        var withStorage = options
        withStorage.fprintVirtualDevice = nil
        withStorage.fprintVirtualDeviceStorage = storage
        let reader = try open(withStorage)
        defer { reader.sensor.close() }
        let t = try enrol("alice", on: reader, socket: storage)
        XCTAssertEqual(reader.forget(t), .deleted(reader.info))
        XCTAssertEqual(reader.forget(t), .failed("cannot delete the print from the reader: Print was not found on the devices storage. (device error 7)"))
    }

    // MARK: the helper protects itself too

    func helper() throws -> HelperProcess {
        let launch = try HelperLaunch.make(options, diagnostics: .stderr).get()
        let h = try HelperProcess.spawn(launch).get()
        XCTAssertEqual(try h.receive(until: monotonicMilliseconds() + 5000).get(), .hello)
        return h
    }

    func exchange(_ h: HelperProcess, _ r: FprintRequest) throws -> [FprintResponse] {
        var out: [FprintResponse] = []
        try h.send(r, until: monotonicMilliseconds() + 5000).get()
        while true {
            let response = try h.receive(until: monotonicMilliseconds() + 5000).get()
            out.append(response)
            if response.isFinal { return out }
        }
    }

    func testTheHelperRefusesBadPrintsWithoutAborting() throws {
        let h = try helper()
        defer { h.shutdown(graceMilliseconds: 2000) }
        guard case .opened = try exchange(h, .open(selector: "", preferred: [])).last else { return XCTFail("open") }
        // Straight to the helper, past the module's own checks: "FP" would abort fp_print_deserialize.
        let bad: [[UInt8]] = [Array("FP".utf8), [], Array("simulated-id".utf8), Array("FP3".utf8) + [UInt8](repeating: 0xA5, count: 40)]
        XCTAssertEqual(try exchange(h, .verify(prints: bad, timeoutMilliseconds: 1000)), [
            .printRejected(index: 0, problem: .truncated), .printRejected(index: 1, problem: .truncated),
            .printRejected(index: 2, problem: .notFP3), .printRejected(index: 3, problem: .unreadable),
            .failure(FprintFailure(.noUsablePrint, "no stored print can be used on this reader")),
        ])
        XCTAssertEqual(try exchange(h, .delete(print: Array("FP".utf8))).count, 1, "still alive and answering")
        XCTAssertEqual(try exchange(h, .close), [.closed])
        XCTAssertTrue(h.reap(until: monotonicMilliseconds() + 2000), "exits after close")
    }

    func testTheHelperAnswersAMalformedRequestAndExits() throws {
        let h = try helper()
        XCTAssertNoThrow(try h.channel.send([FprintProtocol.version, 99], until: monotonicMilliseconds() + 2000).get())
        guard case .failure(let f) = try h.receive(until: monotonicMilliseconds() + 5000).get() else { return XCTFail("failure expected") }
        XCTAssertEqual(f.kind, .badRequest)
        XCTAssertTrue(h.reap(until: monotonicMilliseconds() + 2000))
    }

    func testTheEnvironmentIsBuiltFromRootOwnedOptionsOnly() throws {
        setenv("FP_VIRTUAL_DEVICE", "/tmp/evil", 1)
        setenv("G_MESSAGES_DEBUG", "all", 1)
        defer { unsetenv("FP_VIRTUAL_DEVICE"); unsetenv("G_MESSAGES_DEBUG") }
        var both = options
        both.fprintVirtualDeviceStorage = storage
        let launch = try HelperLaunch.make(both, diagnostics: .syslog).get()
        XCTAssertEqual(launch.environment, ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "FP_VIRTUAL_DEVICE=\(device)",
                                            "FP_VIRTUAL_DEVICE_STORAGE=\(storage)", "FP_DRIVERS_WHITELIST=virtual_device:virtual_device_storage"])
        XCTAssertEqual(launch.arguments, ["--serve", "--syslog"])
        XCTAssertTrue(launch.stderrToNull)
        var bare = Options()
        bare.fprintHelper = options.fprintHelper
        XCTAssertEqual(try HelperLaunch.make(bare, diagnostics: .stderr).get().environment.count, 2, "no virtual reader: real readers only")
        var untrusted = options
        untrusted.fprintVirtualDevice = "/tmp/vd"
        XCTAssertTrue(HelperLaunch.make(untrusted, diagnostics: .stderr).failureValue?.description.contains("writable by group or others") ?? false)
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}
