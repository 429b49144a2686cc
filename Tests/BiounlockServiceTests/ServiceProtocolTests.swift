import XCTest
import Foundation
import BiounlockServiceProtocol
import BiounlockBus

/// The API as data: the embedded introspection XML is the installed file, the version the
/// package's, and every value survives the trip through GVariant.
final class ServiceProtocolTests: XCTestCase {
    let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testTheEmbeddedInterfaceIsTheInstalledFile() throws {
        let file = try String(contentsOf: repo.appendingPathComponent("data/dbus/org.biounlock.Manager1.xml"), encoding: .utf8)
        XCTAssertEqual(ManagerInterface.xml, String(file.dropLast(file.hasSuffix("\n") ? 1 : 0)),
                       "paste data/dbus/org.biounlock.Manager1.xml into ManagerInterface.swift")
        for method in ManagerAPI.Method.allCases {
            XCTAssertTrue(ManagerInterface.xml.contains("<method name=\"\(method.rawValue)\""), method.rawValue)
        }
        for signal in ManagerAPI.Signal.allCases {
            XCTAssertTrue(ManagerInterface.xml.contains("<signal name=\"\(signal.rawValue)\""), signal.rawValue)
        }
    }

    func testTheVersionIsThePackages() throws {
        let version = try String(contentsOf: repo.appendingPathComponent("VERSION"), encoding: .utf8)
        XCTAssertEqual(ServiceVersion.current, version.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func testValuesSurviveGVariant() {
        var status = AccountStatus(user: "alice", uid: 1001)
        status.services = ["sudo": true, "login": false]
        status.fingers = [.init(finger: "right-index-finger", sensor: "simulated", enrolled: 5, reader: "")]
        status.passcodeLockout = .init(locked: true, until: 99, clearedBy: ["time", "password", "reset"])
        status.passcodeRequired = "boot"
        let values: [BusValue] = [
            status.busValue, .stringPairs([("no-finger", "x")]), .stringPairs([]),
            EventRow(time: 1, service: "sudo", tty: "pts/1", rhost: "", method: "passcode", outcome: "success", reason: "passcode-accepted").busValue,
            .tuple([.boolean(true), .uint32(7), .int64(-3), .handle(0), .string("h\u{e9}")]),
        ]
        for v in values {
            XCTAssertEqual(Variants.read(Variants.make(v)), v)
        }
        XCTAssertEqual(AccountStatus(status.busValue), status)
        XCTAssertNil(AccountStatus(.vardict([("user", .string("x"))])), "no uid: not a status")
    }
}
