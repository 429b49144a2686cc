import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

let fprintHelperPath = buildDirectory + "/biounlock-fprint"
let fprintdHelperPath = buildDirectory + "/biounlock-fprintd"

/// The three sensor backends, held to one behaviour by the same scenarios.
enum Backend: String, CaseIterable {
    /// biounlock's simulated sensor (its own control socket).
    case simulated
    /// libfprint-2's `virtual_device` driver, through the biounlock-fprint helper.
    case libfprint
    /// The real fprintd daemon (a private bus, virtual_device behind it), through biounlock-fprintd.
    case fprintd
}

extension ModuleFixture {
    var virtualDevice: String { dir + "/vd" }
    var virtualStorage: String { dir + "/vds" }

    /// Module arguments that select libfprint with this fixture's virtual readers.
    func libfprintArguments(device: Bool = true, storage: Bool = false) -> String {
        var words = ["sensor=libfprint", "fprint_helper=\(fprintHelperPath)"]
        if device { words.append("fprint_virtual_device=\(virtualDevice)") }
        if storage { words.append("fprint_virtual_device_storage=\(virtualStorage)") }
        return words.joined(separator: " ")
    }

    /// Module arguments that select fprintd on `daemon`'s private bus.
    func fprintdArguments(_ daemon: FprintdDaemon) -> String {
        "sensor=fprintd fprintd_bus=\(daemon.address) fprintd_helper=\(fprintdHelperPath)"
    }

    /// Points the module and the test's finger at `backend`, with `daemon` enrolled on it
    /// (right index, touched as `ModuleFixture.fingerID`). For fprintd the print is fprintd's
    /// (`FprintdDaemon.enrolDefaultUser`), and the store holds none.
    func use(_ backend: Backend, fprintd: FprintdDaemon? = nil) throws {
        switch backend {
        case .fprintd:
            guard let fprintd else { throw CocoaError(.featureUnsupported) }
            sensorArguments = fprintdArguments(fprintd)
            touchSocket = fprintd.virtualDevice
            realDriver = true
            try store.deleteTemplates(user: ModuleFixture.enrolledUser, finger: nil)
        case .simulated:
            sensorArguments = "sensor=simulated sim_socket=\(socket)"
            touchSocket = socket
        case .libfprint:
            sensorArguments = libfprintArguments()
            touchSocket = virtualDevice
            realDriver = true
            try store.saveTemplate(try VirtualPrints.template(.rightIndex, id: ModuleFixture.fingerID), user: ModuleFixture.enrolledUser)
        }
        try service()
    }
}

extension FprintdDaemon {
    /// A daemon with `daemon`'s right index enrolled by the real fprintd-enroll (touched as
    /// `ModuleFixture.fingerID`), as GNOME Settings would have done it.
    static func withDefaultUser(readers: Readers = .one, polkit: Polkit = .mock, logind: Bool = false) throws -> FprintdDaemon {
        let d = try FprintdDaemon(readers: readers, polkit: polkit, logind: logind)
        try d.enrol(user: ModuleFixture.enrolledUser, id: ModuleFixture.fingerID)
        return d
    }

    /// The file fprintd keeps `daemon`'s right index in (virtual_device, device 0, finger 7).
    var defaultUserPrint: String { state + "/\(ModuleFixture.enrolledUser)/virtual_device/0/7" }
    func damageDefaultUserPrint() throws { try damage(defaultUserPrint) }
    func repairDefaultUserPrint() throws { try repair(defaultUserPrint) }
}

/// Real FP3 prints from libfprint's virtual drivers, enrolled once per test run through the
/// helper (the same path `biounlock enrol` takes), then reused.
enum VirtualPrints {
    private static var cache: [String: [UInt8]] = [:]
    private static let lock = NSLock()

    static func template(_ finger: Finger, id: String, storage: Bool = false) throws -> Template {
        Template(finger: finger, sensor: .libfprint, data: try print(id: id, storage: storage),
                 driver: storage ? "virtual_device_storage" : "virtual_device", device: "0", created: 1)
    }

    static func print(id: String, storage: Bool = false) throws -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        let key = "\(storage):\(id)"
        if let cached = cache[key] { return cached }
        var template = Array("/tmp/bu-vp.XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        let dir = String(cString: p)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/s"
        var options = Options()
        options.sensor = .libfprint
        options.fprintHelper = fprintHelperPath
        if storage { options.fprintVirtualDeviceStorage = socket } else { options.fprintVirtualDevice = socket }
        let reader = try Sensors(logger: nil, helperDiagnostics: .stderr).openReader(options).get()
        defer { reader.sensor.close() }
        let stages = reader.info.enrolStages
        let finger = Thread {
            for _ in 0..<stages { _ = SimulatedFinger.send(.scan(Array(id.utf8)), to: socket, waitMilliseconds: 5000) }
        }
        finger.start()
        let enrolled = try reader.sensor.enroll(finger: .rightIndex, deadline: .after(milliseconds: 10_000)) { _ in }.get()
        XCTAssertEqual(Array(enrolled.data.prefix(3)), Array("FP3".utf8))
        cache[key] = enrolled.data
        return enrolled.data
    }
}

/// A directory for fake helpers that passes the module's executable trust check (root-owned,
/// not group/world-writable, all the way up: /tmp would not do).
func trustedScratchDirectory() throws -> String {
    let base = URL(fileURLWithPath: buildDirectory).deletingLastPathComponent().appendingPathComponent(".build/test-helpers").path
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
    var template = Array((base + "/h.XXXXXX").utf8CString)
    guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    let dir = String(cString: p)
    chmod(dir, 0o755)
    return dir
}

/// Writes an executable shell script (mode 0755, root-owned as the tests run as root).
func writeScript(_ path: String, _ body: String) throws {
    try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    chmod(path, 0o755)
}
