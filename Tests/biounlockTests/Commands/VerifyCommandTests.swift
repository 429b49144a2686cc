import XCTest
import TestSupport
import Foundation

/// `biounlock verify`.
final class VerifyCommandTests: CLIFixture {
    func testVerifyRunsTheChainAndSaysWhatDecided() throws {
        try "sensor = simulated\nsim_socket = \(socket)\ntimeout = 1\nrequire_passcode = none\n".write(toFile: dir + "/biounlock.conf", atomically: true, encoding: .utf8)
        let enrolled = try enrol()
        XCTAssertEqual(enrolled.status, 0, enrolled.stdout + enrolled.stderr)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let enabled = try cli(["enable", user])
        XCTAssertEqual(enabled.status, 0, enabled.stdout + enabled.stderr)
        let ok = try cli(["verify", user], stdin: "2468\n")
        XCTAssertEqual(ok.status, 0, ok.stdout + ok.stderr)
        XCTAssertTrue(ok.stdout.contains("Touch the fingerprint reader to authenticate for running a command as root"), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("Result: unlocked by the passcode (method passcode, outcome success, decided by: passcode-accepted)"), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("The module would return PAM_SUCCESS."), ok.stdout)
        let wrong = try cli(["verify", user], stdin: "1111\n")
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stdout.contains("Result: wrong passcode; handed to the password (method passcode, outcome unavailable, decided by: wrong-passcode)"), wrong.stdout)
        let off = try cli(["verify", "bin"])
        XCTAssertTrue(off.stdout.contains("PAM_IGNORE"), off.stdout)
        let events = try json(try cli(["log", "--json", "--service", "sudo"]))["events"] as? [[String: Any]]
        XCTAssertEqual(events?.count, 2, "verify attempts are audited (not the one for bin, who has not enabled biometric unlock)")
    }
}
