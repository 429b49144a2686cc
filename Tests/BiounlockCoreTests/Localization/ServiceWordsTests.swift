import XCTest
import BiounlockCore

/// Issue 33, item 3: prompts, messages and `biounlock log` say what the user is doing, from one
/// table of known services; an unknown service keeps its name. (The test process stays in the C
/// locale: English. Tests/EndToEnd/languages.sh reads the translated words through real sudo.)
final class ServiceWordsTests: XCTestCase {
    func testTheKnownServicesSayWhatTheUserIsDoing() {
        for s in ["sudo", "su", "su-l", "doas", "run0"] { XCTAssertEqual(ServiceWords.words(for: s), "running a command as root", s) }
        for s in ["login", "sshd", "gdm-password", "gdm-fingerprint", "lightdm", "sddm", "greetd"] {
            XCTAssertEqual(ServiceWords.words(for: s), "logging in", s)
        }
        for s in ["i3lock", "swaylock", "hyprlock", "gtklock", "xscreensaver", "xsecurelock", "vlock", "kde", "kde-fingerprint",
                  "common-auth" /* Debian's xsecurelock: pam_start("common-auth") */] {
            XCTAssertEqual(ServiceWords.words(for: s), "unlocking the screen", s)
        }
        XCTAssertEqual(ServiceWords.words(for: "polkit-1"), "authorising an action")
        XCTAssertEqual(ServiceWords.words(for: "chsh"), "changing account details")
    }

    func testAnUnknownServiceKeepsItsNameByteForByte() {
        for s in ["biounlock-test", "cron", "SUDO", "sudo ", "polkit", "", "lоgin" /* Cyrillic о */] {
            XCTAssertNil(ServiceWords.purpose(of: s), s)
            XCTAssertEqual(ServiceWords.words(for: s), s)
            XCTAssertEqual(ServiceWords.wordsAndName(for: s), s)
        }
    }

    func testPromptsAndMessagesUseTheWords() {
        XCTAssertEqual(Messages.dialogPrompt(service: "polkit-1", takes: .passcodeOrPassword(.pin)),
                       "PIN or password for authorising an action, or touch the reader, then press Enter: ")
        XCTAssertEqual(Messages.typeOrTouchPrompt(service: "vlock", takes: .password), "Password for unlocking the screen, or touch the reader: ")
        XCTAssertEqual(Messages.touchPrompt(service: "gdm-password"), "Touch the fingerprint reader to authenticate for logging in")
        XCTAssertEqual(Messages.faceRequest(service: "i3lock", withFinger: false), "Look at the camera to authenticate for unlocking the screen")
        XCTAssertEqual(Messages.typePrompt(service: "my-app", takes: .passcodeOrPassword(.pin)), "PIN or password for my-app: ")
        // The admin's own reason= text keeps the name its %s stands for.
        XCTAssertEqual(Messages.touchPrompt(template: "Approve %s with your finger", service: "sudo"), "Approve sudo with your finger")
    }

    func testTheLogSaysTheWordsAndTheName() {
        XCTAssertEqual(ServiceWords.wordsAndName(for: "kde-fingerprint"), "unlocking the screen (kde-fingerprint)")
        XCTAssertEqual(ServiceWords.wordsAndName(for: "sudo"), "running a command as root (sudo)")
    }
}
