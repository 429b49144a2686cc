import XCTest
@testable import BiounlockCore

/// The set of fprintd's prints the store keeps (FprintdPrints): its text, and what counts as a change.
final class FprintdPrintsTests: XCTestCase {
    func print(_ finger: Finger, _ device: String = "0") -> Template {
        Template(finger: finger, sensor: .fprintd, data: [], driver: "fprintd", device: device, created: 0)
    }

    func testTheTextIsSortedAndCountsEachPrintOnce() {
        XCTAssertEqual(FprintdPrints.text([print(.rightIndex), print(.leftThumb, "1"), print(.leftThumb), print(.rightIndex)]),
                       "0:left-thumb,0:right-index-finger,1:left-thumb")
        XCTAssertEqual(FprintdPrints.text([]), "")
    }

    func testTheModuleComparesTheDeviceItClaimedAndKeepsTheOthers() {
        let stored = "0:right-index-finger,1:left-thumb"
        XCTAssertNil(FprintdPrints.afterSeeing([print(.rightIndex)], stored: stored), "device 0 as recorded")
        XCTAssertNil(FprintdPrints.afterSeeing([print(.leftThumb, "1")], stored: stored), "device 1 as recorded")
        XCTAssertEqual(FprintdPrints.afterSeeing([print(.rightIndex), print(.rightThumb)], stored: stored),
                       "0:right-index-finger,0:right-thumb,1:left-thumb", "a finger added on 0; 1 kept")
        XCTAssertEqual(FprintdPrints.afterSeeing([print(.rightThumb)], stored: stored), "0:right-thumb,1:left-thumb", "replaced on 0")
        XCTAssertEqual(FprintdPrints.afterSeeing([print(.leftIndex, "2")], stored: stored),
                       "0:right-index-finger,1:left-thumb,2:left-index-finger", "a device never seen")
        XCTAssertNil(FprintdPrints.afterSeeing([], stored: stored), "no prints: no reader is opened, nothing to compare")
        XCTAssertNil(FprintdPrints.afterSeeing([print(.rightIndex)], stored: "0:right-index-finger,0:right-index-finger"),
                     "the same set written twice over")
    }

    func testNoSetOrOneThatDoesNotParseIsAChange() {
        for stored in [nil, ",", "0:", ":right-thumb", "0:right-thumb,", "0:nose", "right-thumb"] as [String?] {
            XCTAssertEqual(FprintdPrints.afterSeeing([print(.rightThumb)], stored: stored), "0:right-thumb", "\(stored ?? "nil")")
            XCTAssertEqual(FprintdPrints.afterListing([print(.rightThumb)], stored: stored), "0:right-thumb", "\(stored ?? "nil")")
        }
        XCTAssertEqual(FprintdPrints.afterListing([], stored: nil), "", "none listed: recorded as none")
    }

    func testTheCLIComparesEveryDevice() {
        let stored = "0:right-index-finger,1:left-thumb"
        XCTAssertNil(FprintdPrints.afterListing([print(.leftThumb, "1"), print(.rightIndex)], stored: stored))
        XCTAssertEqual(FprintdPrints.afterListing([print(.rightIndex)], stored: stored), "0:right-index-finger", "gone from device 1")
        XCTAssertEqual(FprintdPrints.afterListing([], stored: stored), "")
    }
}
