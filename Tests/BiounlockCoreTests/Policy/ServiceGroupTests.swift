import XCTest
import BiounlockCore

/// Issue 31: the settings app's per-service switches are groups made from ServiceWords' table.
final class ServiceGroupTests: XCTestCase {
    func testTheGroupsAreMadeFromTheTableOfKnownServices() {
        XCTAssertEqual(ServiceGroup.sudo.services, ["sudo", "sudo-i", "su", "su-l", "doas", "run0", "pkexec"])
        let login = ServiceGroup.login.services
        for s in ["login", "gdm-password", "gdm-fingerprint", "lightdm", "sddm", "greetd",
                  "i3lock", "swaylock", "xscreensaver", "kde", "kde-fingerprint"] {
            XCTAssertTrue(login.contains(s), s)
            XCTAssertEqual(ServiceGroup.group(of: s), .login, s)
        }
        XCTAssertEqual(ServiceGroup.group(of: "su"), .sudo)
        // Every service of the table that logs in or unlocks is in `login`, and nothing else is.
        for entry in ServiceWords.known {
            for s in entry.services {
                let expected: ServiceGroup? = entry.purpose == .runAsRoot ? .sudo
                    : (entry.purpose == .logIn || entry.purpose == .unlockScreen) ? .login : nil
                XCTAssertEqual(ServiceGroup.group(of: s), expected, s)
                XCTAssertEqual(ServiceWords.purpose(of: s), entry.purpose, s)
            }
        }
        // "Everything else": no group.
        for s in ["polkit-1", "chsh", "cron", "my-app", "SUDO"] { XCTAssertNil(ServiceGroup.group(of: s), s) }
        XCTAssertTrue(Set(ServiceGroup.sudo.services).isDisjoint(with: login))
    }

    func testAGroupIsOnOffOrMixedFromTheToggleAndTheOverrides() {
        XCTAssertEqual(ServiceGroup.sudo.state(enabled: false, overrides: [:]), .off)
        XCTAssertEqual(ServiceGroup.sudo.state(enabled: true, overrides: [:]), .on)
        XCTAssertEqual(ServiceGroup.sudo.state(enabled: false, overrides: ["sudo": true]), .mixed)
        XCTAssertEqual(ServiceGroup.login.state(enabled: false, overrides: ["sudo": true]), .off, "another group's override is not this one's")
        var all: [String: Bool] = [:]
        for s in ServiceGroup.login.services { all[s] = false }
        XCTAssertEqual(ServiceGroup.login.state(enabled: true, overrides: all), .off)
        XCTAssertEqual(ServiceGroup.sudo.state(enabled: true, overrides: all), .on)
        all["kde"] = true
        XCTAssertEqual(ServiceGroup.login.state(enabled: true, overrides: all), .mixed)
        let record = UserRecord(name: "alice", enabled: true, serviceOverrides: all)
        XCTAssertEqual(ServiceGroup.login.state(of: record), .mixed)
        XCTAssertTrue(record.isEnabled(for: "kde"))
        XCTAssertFalse(record.isEnabled(for: "login"))
    }
}
