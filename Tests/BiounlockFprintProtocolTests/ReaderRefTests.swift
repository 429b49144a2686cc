import XCTest
import BiounlockFprintProtocol

/// The one rule for which reader `fprint_device=` / `--device` names (the helper and the CLI share it).
final class ReaderRefTests: XCTestCase {
    let reader = ReaderRef(driver: "virtual_device", device: "0")

    func testTheDriverTheIdOrBothNameTheReader() {
        XCTAssertTrue(reader.matches("virtual_device"))
        XCTAssertTrue(reader.matches("0"))
        XCTAssertTrue(reader.matches("virtual_device/0"))
    }

    func testNothingElseDoes() {
        for selector in ["", "virtual", "virtual_device/", "/0", "virtual_device/1", "0/virtual_device", "VIRTUAL_DEVICE", " 0"] {
            XCTAssertFalse(reader.matches(selector), selector)
        }
    }
}
