import XCTest
import Foundation
@testable import BiounlockCore

final class LockoutTests: XCTestCase {
    var options = Options()

    func testBiometricLockoutNeedsThePasscodeUnderThePasscodePolicy() {
        var r = UserRecord(name: "a", biometricFailures: 4)
        r.biometricFailureAt = 1000
        XCTAssertEqual(Lockouts.biometric(r, options: options, now: 1000), .open)
        r.biometricFailures = 5
        XCTAssertEqual(Lockouts.biometric(r, options: options, now: 1000 + 86400 * 365), .locked(until: nil), "no expiry")
    }

    func testBiometricLockoutExpiresUnderTheBiometricsPolicy() {
        options.policy = .biometrics
        var r = UserRecord(name: "a", biometricFailures: 5)
        r.biometricFailureAt = 1000
        XCTAssertEqual(Lockouts.biometric(r, options: options, now: 1000), .locked(until: 1900))
        XCTAssertEqual(Lockouts.biometric(r, options: options, now: 1899), .locked(until: 1900))
        XCTAssertEqual(Lockouts.biometric(r, options: options, now: 1900), .open)
    }

    func testPasscodeWaitsEscalate() {
        let waits = (0...10).map { Lockouts.passcodeWait(afterFailures: $0, threshold: 5) }
        XCTAssertEqual(waits, [0, 0, 0, 0, 0, 60, 300, 900, 3600, 3600, 3600])
        var r = UserRecord(name: "a", passcodeFailures: 6)
        r.passcodeFailureAt = 100
        XCTAssertEqual(Lockouts.passcode(r, options: options, now: 399), .locked(until: 400))
        XCTAssertEqual(Lockouts.passcode(r, options: options, now: 400), .open)
        r.passcodeFailures = Int.max
        XCTAssertEqual(Lockouts.passcode(r, options: options, now: 101), .locked(until: 3700), "no overflow on absurd counts")
    }

    func testPasscodeRequirementRules() {
        options.requirePasscode = .default
        var r = UserRecord(name: "a")
        XCTAssertEqual(PasscodeRequirement.reason(r, options: options, now: 0, bootID: "b1"), .passcodeRequiredFirstUse, "never entered")
        r.passcodeBootID = "b1"; r.passcodeSuccessAt = 0; r.passcodeEnrolmentVersion = 0
        XCTAssertNil(PasscodeRequirement.reason(r, options: options, now: 72 * 3600, bootID: "b1"))
        XCTAssertEqual(PasscodeRequirement.reason(r, options: options, now: 72 * 3600 + 1, bootID: "b1"), .passcodeRequiredAfterIdle)
        XCTAssertEqual(PasscodeRequirement.reason(r, options: options, now: 10, bootID: "b2"), .passcodeRequiredAfterBoot)
        XCTAssertEqual(PasscodeRequirement.reason(r, options: options, now: 10, bootID: nil), .passcodeRequiredAfterBoot, "unknown boot: require")
        r.enrolmentVersion = 1
        XCTAssertEqual(PasscodeRequirement.reason(r, options: options, now: 10, bootID: "b1"), .passcodeRequiredAfterEnrolment)
        options.requirePasscode = .none
        XCTAssertNil(PasscodeRequirement.reason(UserRecord(name: "new"), options: options, now: 10, bootID: nil))
    }
}
