import XCTest
import BiounlockCore

final class ServiceNameTests: XCTestCase {
    func testTheNamesInPamD() {
        for name in ["sudo", "su", "login", "sshd", "polkit-1", "gdm-fingerprint", "kde-fingerprint", "i3lock", "common-auth", "a.b_c+d"] {
            XCTAssertTrue(ServiceName.isValid(name), name)
        }
    }

    func testNoPathsNoSpacesNoControlsNoHiddenFiles() {
        for name in ["", ".", "..", ".hidden", "../sudo", "pam.d/sudo", "su do", "sudo\n", "sudo\u{0}", "sudo:x", "судо", "sudo\u{7f}",
                     String(repeating: "a", count: ServiceName.maximumLength + 1)] {
            XCTAssertFalse(ServiceName.isValid(name), name.debugDescription)
        }
        XCTAssertTrue(ServiceName.isValid(String(repeating: "a", count: ServiceName.maximumLength)))
    }
}
