import XCTest
import Foundation
import BiounlockCore
import BiounlockStore

/// Telling users apart (docs/SECURITY.md, "Timing and enumeration"): through the stacks in pam.d/
/// as shipped, a name that is not a user must be asked for the password exactly like a user who
/// has not turned biometric unlock on -- a login prompt that skips the password for unknown names
/// tells anyone which names exist. (By time: TimingTests and scripts/timing.)
final class EnumerationTests: XCTestCase {
    let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("pam.d").path

    func testUnknownNamesAreAskedForThePasswordLikeEveryoneElse() throws {
        let fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        for service in ["login", "su", "sudo"] {
            let text = try String(contentsOfFile: examples + "/" + service, encoding: .utf8)
            let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains("pam_biounlock.so") && !$0.hasPrefix("#") })
            let control = try XCTUnwrap(line.firstRange(of: "[").flatMap { open in
                line[open.lowerBound...].firstRange(of: "]").map { String(line[open.lowerBound..<$0.upperBound]) }
            }, "\(service): no control in brackets")
            try fixture.service(name: service, after: "auth required pam_unix.so nodelay", control: control)
            var shown: [String: [String]] = [:]
            for name in ["biounlock-no-such-user", ModuleFixture.otherUser] {
                let t = try fixture.authenticate(name, service: service, answers: ["not-the-password"])
                XCTAssertNotEqual(t.code, "PAM_SUCCESS")
                shown[name] = t.messages
            }
            XCTAssertEqual(shown[ModuleFixture.otherUser], ["PROMPT_OFF: Password: "], "\(service): pam_unix asks a user without biometric unlock")
            XCTAssertEqual(shown["biounlock-no-such-user"], shown[ModuleFixture.otherUser], "\(service): an unknown name sees the same")
        }
    }
}
