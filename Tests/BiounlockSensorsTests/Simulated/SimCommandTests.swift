import XCTest
import BiounlockSensors

final class SimCommandTests: XCTestCase {
    func parse(_ s: String) -> SimCommand? { SimCommand(bytes: Array(s.utf8)) }

    func testVirtualDeviceWords() {
        XCTAssertEqual(parse("SCAN alice-ri"), .scan(Array("alice-ri".utf8)))
        XCTAssertEqual(parse("SCAN id with spaces"), .scan(Array("id with spaces".utf8)))
        XCTAssertEqual(parse("SCAN id\n"), .scan(Array("id\n".utf8)), "verbatim, like virtual_device")
        XCTAssertEqual(parse("RETRY 2"), .retry(2))
        XCTAssertEqual(parse("ERROR 256"), .error(256))
        XCTAssertEqual(parse("UNPLUG"), .unplug)
        XCTAssertEqual(parse("SLEEP 150"), .sleep(milliseconds: 150))
    }

    func testMalformedCommandsAreRejected() {
        for bad in ["", "SCAN", "SCAN ", "scan x", "RETRY", "RETRY -1", "RETRY 99999999", "SLEEP 600001", "UNPLUG now",
                    "ERROR x", "LIST", "SCAN " + String(repeating: "a", count: 129), String(repeating: "A", count: 300)] {
            XCTAssertNil(parse(bad), bad)
        }
    }

    func testWireFormRoundTrips() {
        for c in [SimCommand.scan([0x61]), .retry(1), .error(4), .unplug, .sleep(milliseconds: 5)] {
            XCTAssertEqual(SimCommand(bytes: c.bytes), c)
        }
    }
}
