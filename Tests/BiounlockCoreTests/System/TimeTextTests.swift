import XCTest
@testable import BiounlockCore

final class TimeTextTests: XCTestCase {
    func testISO8601() {
        XCTAssertEqual(iso8601(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(iso8601(1_796_020_226), "2026-11-30T06:30:26Z")
        XCTAssertEqual(iso8601(-1), "1969-12-31T23:59:59Z")
    }

    /// Stored times come from the store, which may be damaged: every Int64 gives text, no trap
    /// (Fuzz/corpus/store/crash-iso8601-year-overflow).
    func testISO8601IsTotal() {
        let yearPastInt32 = Int64(67_768_004_603_225_304) // tm_year + 1900 exceeds Int32.max
        XCTAssertTrue(iso8601(yearPastInt32).hasPrefix("2147484"), iso8601(yearPastInt32))
        XCTAssertEqual(iso8601(.max), "\(Int64.max)", "past what gmtime_r can express: the number")
        XCTAssertEqual(iso8601(.min), "\(Int64.min)")
    }
}
