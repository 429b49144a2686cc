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

    func testRequirePasscodeParsing() {
        XCTAssertEqual(PasscodeRequirementRules(parsing: "boot,enrolment,72h"), .default)
        XCTAssertEqual(PasscodeRequirementRules(parsing: "none"), PasscodeRequirementRules.none)
        XCTAssertEqual(PasscodeRequirementRules(parsing: "48h"), PasscodeRequirementRules(afterBoot: false, afterEnrolmentChange: false, maximumAgeSeconds: 48 * 3600))
        XCTAssertEqual(PasscodeRequirementRules(parsing: "boot")?.description, "boot")
        for bad in ["", "reboot", "boot,", "0h", "-1h", "99999999d"] { XCTAssertNil(PasscodeRequirementRules(parsing: bad), bad) }
        XCTAssertEqual(parseDuration("15m"), 900); XCTAssertEqual(parseDuration("900"), 900); XCTAssertEqual(parseDuration("2d"), 172800)
        XCTAssertNil(parseDuration("m")); XCTAssertNil(parseDuration("1w"))
        XCTAssertEqual(formatDuration(72 * 3600), "3d"); XCTAssertEqual(formatDuration(90), "90s")
        XCTAssertFalse(describeTimeLeft(Int64.max).isEmpty, "no overflow")
        XCTAssertEqual(describeTimeLeft(Int64.min), "1 s")
        XCTAssertEqual(describeTimeLeft(30), "30 s"); XCTAssertEqual(describeTimeLeft(61), "2 min"); XCTAssertEqual(describeTimeLeft(3900), "1 h 5 min")
        XCTAssertEqual(describeTimeLeft(120), "2 min"); XCTAssertEqual(describeTimeLeft(.min), "1 s")
        XCTAssertEqual(describeTimeLeft(.max), "878400 h", "no overflow, clamped to 100 years (Fuzz/corpus/store/crash-time-left-overflow)")
    }

    func testNewOptionsParse() {
        var o = Options()
        let d = OptionParser.apply(arguments: ["bio_lockout=3", "bio_unlock_time=1h", "passcode_lockout=7", "require_passcode=boot",
                                               "remote=allow", "lid=ignore", "lid_path=/t/lid", "logind_path=/t/s",
                                               "reason=Approve %s with a finger"], to: &o)
        XCTAssertEqual(d, [])
        XCTAssertEqual(o.biometricLockout, 3); XCTAssertEqual(o.biometricUnlockSeconds, 3600); XCTAssertEqual(o.passcodeLockout, 7)
        XCTAssertEqual(o.requirePasscode.description, "boot"); XCTAssertEqual(o.remote, .allow); XCTAssertEqual(o.lid, .ignore)
        XCTAssertEqual(Messages.touchPrompt(template: o.reason, service: "sudo"), "Approve sudo with a finger")
        XCTAssertEqual(OptionParser.apply(arguments: ["reason=bad\u{7}", "remote=maybe", "bio_lockout=0", "touch_first=121"], to: &o).count, 4)
        XCTAssertEqual(OptionParser.apply(arguments: ["remote=skip", "touch_first=0"], to: &o), [])
        XCTAssertEqual(o.remote, .passcode, "0.1.0's remote=skip is remote=passcode")
        XCTAssertEqual(o.touchFirstSeconds, 0)
        XCTAssertEqual(Options().remote, .ignore, "remote sessions are left alone by default")
        XCTAssertEqual(Options().touchFirstSeconds, 2)
    }
}

final class SessionProbeTests: XCTestCase {
    func testRemoteDetection() {
        let none: (String) -> String? = { _ in nil }
        XCTAssertNil(SessionProbe.remoteReason(rhost: "", environment: none, logindPath: "/nonexistent", hostname: "box"))
        for local in ["localhost", "box", "BOX", "box.example.org"] {
            XCTAssertNil(SessionProbe.remoteReason(rhost: local, environment: none, logindPath: "/nonexistent", hostname: "box"), local)
        }
        // Addresses come only from network services, and a loopback connection can be a tunnel.
        for address in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            XCTAssertEqual(SessionProbe.remoteReason(rhost: address, environment: none, logindPath: "/x", hostname: "box"), "PAM_RHOST=\(address)")
        }
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "", tty: "ssh", environment: none, logindPath: "/x", hostname: "box"), "PAM_TTY=ssh",
                       "sshd sets PAM_TTY=ssh, whatever the client's address")
        XCTAssertNil(SessionProbe.remoteReason(rhost: "", tty: "/dev/pts/3", environment: none, logindPath: "/x", hostname: "box"))
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "203.0.113.9", environment: none, logindPath: "/x", hostname: "box"), "PAM_RHOST=203.0.113.9")
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "boxer", environment: none, logindPath: "/x", hostname: "box"), "PAM_RHOST=boxer")
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "", environment: { $0 == "SSH_CLIENT" ? "203.0.113.9 5 22" : nil },
                                                 logindPath: "/x", hostname: "box"), "SSH_CLIENT")
    }

    func testLogindAndLidFiles() throws {
        let dir = NSTemporaryDirectory() + "probe-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir + "/sessions", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/lid/LID0", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "UID=1000\nREMOTE=1\n".write(toFile: dir + "/sessions/7", atomically: true, encoding: .utf8)
        try "UID=1000\nREMOTE=0\n".write(toFile: dir + "/sessions/8", atomically: true, encoding: .utf8)
        let env: (String) -> (String) -> String? = { id in { $0 == "XDG_SESSION_ID" ? id : nil } }
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "", environment: env("7"), logindPath: dir + "/sessions", hostname: nil), "logind session 7 is remote")
        XCTAssertNil(SessionProbe.remoteReason(rhost: "", environment: env("8"), logindPath: dir + "/sessions", hostname: nil))
        XCTAssertNil(SessionProbe.remoteReason(rhost: "", environment: env("../sessions/7"), logindPath: dir + "/sessions", hostname: nil),
                     "ids that are not plain names are never used as paths")

        XCTAssertFalse(SessionProbe.lidClosed(at: dir + "/lid"))
        try "state:      open\n".write(toFile: dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        XCTAssertFalse(SessionProbe.lidClosed(at: dir + "/lid"))
        try "state:      closed\n".write(toFile: dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        XCTAssertTrue(SessionProbe.lidClosed(at: dir + "/lid"))
        XCTAssertFalse(SessionProbe.lidClosed(at: dir + "/absent"))
        XCTAssertNotNil(SessionProbe.bootID())
    }
}
