import XCTest
@testable import BiounlockCore

final class OptionsTests: XCTestCase {
    func testRequirePasscodeParsing() {
        XCTAssertEqual(PasscodeRequirementRules(parsing: "boot,enrolment,72h"), .default)
        XCTAssertEqual(PasscodeRequirementRules(parsing: "none"), PasscodeRequirementRules.none)
        XCTAssertEqual(PasscodeRequirementRules(parsing: "48h"), PasscodeRequirementRules(afterBoot: false, afterEnrolmentChange: false, maximumAgeSeconds: 48 * 3600))
        XCTAssertEqual(PasscodeRequirementRules(parsing: "boot")?.description, "boot")
        for bad in ["", "reboot", "boot,", "0h", "-1h", "99999999d"] { XCTAssertNil(PasscodeRequirementRules(parsing: bad), bad) }
        XCTAssertEqual(parseDuration("15m"), 900); XCTAssertEqual(parseDuration("900"), 900); XCTAssertEqual(parseDuration("2d"), 172800)
        XCTAssertNil(parseDuration("m")); XCTAssertNil(parseDuration("1w"))
        XCTAssertEqual(parseDuration("30s"), 30); XCTAssertEqual(parseDuration("72h"), 259_200)
        XCTAssertNil(parseDuration("")); XCTAssertNil(parseDuration("367d")); XCTAssertNotNil(parseDuration("366d"))
        XCTAssertNil(parseDuration("5m\u{301}"), "a unit with a combining mark is no unit"); XCTAssertNil(parseDuration("5é"))
        XCTAssertEqual(formatDuration(72 * 3600), "3d"); XCTAssertEqual(formatDuration(90), "90s")
        XCTAssertFalse(describeTimeLeft(Int64.max).isEmpty, "no overflow")
        XCTAssertEqual(describeTimeLeft(Int64.min), "1 s")
        XCTAssertEqual(describeTimeLeft(30), "30 s"); XCTAssertEqual(describeTimeLeft(61), "2 min"); XCTAssertEqual(describeTimeLeft(3900), "1 h 5 min")
        XCTAssertEqual(describeTimeLeft(120), "2 min"); XCTAssertEqual(describeTimeLeft(.min), "1 s")
        XCTAssertEqual(describeTimeLeft(.max), "878400 h", "no overflow, clamped to 100 years (Fuzz/corpus/store/crash-time-left-overflow)")
    }
}
