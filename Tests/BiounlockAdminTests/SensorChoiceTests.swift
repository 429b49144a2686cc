import XCTest
import BiounlockAdmin
import BiounlockCore

/// How `biounlock doctor` says why the backend in use is the one it is (sensor=auto resolved).
final class SensorChoiceTests: XCTestCase {
    func load(_ arguments: [String], fprintd: String?) throws -> Options {
        try Configuration.load(arguments: arguments, readFile: { .failure(.missing($0)) }, fprintdService: { fprintd }).get().options
    }

    func testAutoSaysWhetherFprintdsServiceIsInstalled() throws {
        let desktop = try load([], fprintd: "/usr/share/dbus-1/system-services/net.reactivated.Fprint.service")
        XCTAssertTrue(desktop.sensorReason.contains("fprintd's D-Bus service is installed"), desktop.sensorReason)
        let server = try load([], fprintd: nil)
        XCTAssertTrue(server.sensorReason.contains("fprintd is not installed"), server.sensorReason)
    }

    func testAnExplicitSensorIsSaidToBeConfigured() throws {
        for kind in [SensorKind.libfprint, .fprintd, .simulated] {
            for fprintd in [nil, "/x"] as [String?] {
                let o = try load(["sensor=\(kind.rawValue)"], fprintd: fprintd)
                XCTAssertEqual(o.sensorReason, "sensor=\(kind.rawValue) is configured")
            }
        }
    }
}
