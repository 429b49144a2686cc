import XCTest
@testable import BiounlockCore

/// sensor=auto and the fprintd keys of the shared option table (how doctor words the choice:
/// BiounlockAdminTests/SensorChoiceTests).
final class SensorSelectionTests: XCTestCase {
    func load(_ arguments: [String], fprintd: String?) throws -> Options {
        try Configuration.load(arguments: arguments, readFile: { .failure(.missing($0)) }, fprintdService: { fprintd }).get().options
    }

    func testAutoPicksFprintdWhenItsServiceIsInstalledAndLibfprintOtherwise() throws {
        let desktop = try load([], fprintd: "/usr/share/dbus-1/system-services/net.reactivated.Fprint.service")
        XCTAssertEqual(desktop.sensor, .fprintd)
        XCTAssertEqual(desktop.sensorSetting, .auto)
        XCTAssertEqual(desktop.sensorChoice, .fprintdInstalled(service: "/usr/share/dbus-1/system-services/net.reactivated.Fprint.service"))
        let server = try load([], fprintd: nil)
        XCTAssertEqual(server.sensor, .libfprint)
        XCTAssertEqual(server.sensorChoice, .fprintdMissing(lookedFor: SensorSelection.fprintdServiceFiles[0]))
        XCTAssertEqual(try load(["sensor=auto"], fprintd: nil).sensor, .libfprint)
    }

    func testAnExplicitSensorIsKeptWhateverIsInstalled() throws {
        for kind in [SensorKind.libfprint, .fprintd, .simulated] {
            for fprintd in [nil, "/x"] as [String?] {
                let o = try load(["sensor=\(kind.rawValue)"], fprintd: fprintd)
                XCTAssertEqual(o.sensor, kind)
                XCTAssertEqual(o.sensorSetting, kind)
                XCTAssertEqual(o.sensorChoice, .configured(kind))
            }
        }
    }

    func testTheServiceFileProbeWantsARegularFile() {
        XCTAssertNil(SensorSelection.installedFprintdService(["/nonexistent/x.service", "/tmp"]))
        XCTAssertEqual(SensorSelection.installedFprintdService(["/nonexistent", "/etc/passwd"]), "/etc/passwd")
    }

    func testFprintdBusTakesOnlyAUnixSocketPath() {
        XCTAssertEqual(Options().fprintdBus, "unix:path=/run/dbus/system_bus_socket")
        var o = Options()
        XCTAssertEqual(OptionParser.apply(arguments: ["fprintd_bus=unix:path=/tmp/bu-x/bus"], to: &o), [])
        XCTAssertEqual(o.fprintdBus, "unix:path=/tmp/bu-x/bus")
        XCTAssertEqual(unixBusPath(o.fprintdBus), "/tmp/bu-x/bus")
        // GDBus would run a program for autolaunch:/unixexec:, and connect anywhere for tcp:.
        let refused = ["autolaunch:", "unixexec:path=/bin/sh", "tcp:host=10.0.0.1,port=1", "unix:abstract=bus",
                       "unix:path=relative", "unix:path=/a,guid=1", "unix:path=/a;unix:path=/b", "unix:path=/a%20b",
                       "unix:path=/" + String(repeating: "s", count: 107), "unix:path=", "unix:path=/a b"]
        for value in refused {
            var p = Options()
            XCTAssertEqual(OptionParser.apply(arguments: ["fprintd_bus=\(value)"], to: &p).count, 1, value)
            XCTAssertEqual(p.fprintdBus, Options.systemBusAddress, value)
        }
    }
}
