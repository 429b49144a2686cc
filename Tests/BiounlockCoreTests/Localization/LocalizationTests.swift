import XCTest
@testable import BiounlockCore

/// L() and its placeholders. The test process never calls setlocale (it stays in the C locale),
/// so every text here is English; the translations themselves are tested through the built
/// module and CLI (PamBiounlockTests/LocalizationTests, biounlockTests/CLILocalizationTests).
final class LocalizationTests: XCTestCase {
    func testPlaceholdersAreLowercaseNamesInBraces() {
        XCTAssertEqual(Localization.placeholders("a {x} {y_z} {Bad} {} {1} {x"), ["x", "y_z"])
        XCTAssertEqual(Localization.placeholders("{count}d"), ["count"])
        XCTAssertEqual(Localization.placeholders("no braces"), [])
    }

    func testValuesAreSubstitutedOnceAndNeverSearchedAgain() {
        XCTAssertEqual(Localization.substitute("PIN or password for {service}: ", [("service", "sudo")]), "PIN or password for sudo: ")
        // A service name (PAM_SERVICE comes from the caller) that looks like a placeholder stays as it is.
        XCTAssertEqual(Localization.substitute("{service} {time}", [("service", "{time}"), ("time", "4 min")]), "{time} 4 min")
        XCTAssertEqual(Localization.substitute("{unknown} {", [("service", "x")]), "{unknown} {")
    }

    func testATranslationMustKeepThePlaceholders() {
        let english = "PIN locked for {time}: use your password."
        XCTAssertEqual(Localization.checked("PIN 已锁定 {time}：请使用密码。", english: english, plural: nil), "PIN 已锁定 {time}：请使用密码。")
        XCTAssertNil(Localization.checked("PIN 已锁定：请使用密码。", english: english, plural: nil), "a dropped placeholder")
        XCTAssertNil(Localization.checked("PIN 已锁定 {tiem}：请使用密码。", english: english, plural: nil), "a garbled one")
        XCTAssertNil(Localization.checked("{time} {service}", english: english, plural: nil), "one the English does not have")
        XCTAssertNil(Localization.checked("", english: english, plural: nil))
        // Plural forms may leave {count} out ("one try left"), never the others.
        let one = "Fingerprint not recognised. 1 try left.", other = "Fingerprint not recognised. {count} tries left."
        XCTAssertNotNil(Localization.checked("Nicht erkannt. Noch ein Versuch.", english: one, plural: other))
        XCTAssertNotNil(Localization.checked("指纹未识别。还剩 {count} 次机会。", english: one, plural: other))
        XCTAssertNil(Localization.checked("{count} {service}", english: one, plural: other))
    }

    func testInTheCLocaleLReturnsTheEnglishText() {
        XCTAssertEqual(L("PIN or password for {service}: ", ["service": "sudo"]), "PIN or password for sudo: ")
        XCTAssertEqual(L("Fingerprint not recognised. 1 try left.", plural: "Fingerprint not recognised. {count} tries left.", count: 1),
                       "Fingerprint not recognised. 1 try left.")
        XCTAssertEqual(L("Fingerprint not recognised. 1 try left.", plural: "Fingerprint not recognised. {count} tries left.", count: 2),
                       "Fingerprint not recognised. 2 tries left.")
        XCTAssertFalse(Localization.translating(), "the C locale: gettext is not even asked")
    }

    func testTimesReadAsBefore() {
        XCTAssertEqual(describeTimeLeft(-5), "1 s")
        XCTAssertEqual(describeTimeLeft(30), "30 s")
        XCTAssertEqual(describeTimeLeft(61), "2 min")
        XCTAssertEqual(describeTimeLeft(3600), "1 h")
        XCTAssertEqual(describeTimeLeft(3900), "1 h 5 min")
        XCTAssertEqual(describeTimeLeft(.max), "878400 h", "clamped, no overflow")
        XCTAssertEqual(describeAge(72 * 3600), "3d")
        XCTAssertEqual(describeAge(5 * 3600), "5h")
        XCTAssertEqual(describeAge(900), "15m")
        XCTAssertEqual(describeAge(90), "90s")
    }

    func testTheDefaultTouchRequestIsTranslatableAndAnAdminsTextIsShownAsWritten() {
        XCTAssertEqual(Messages.touchPrompt(service: "sudo"), "Touch the fingerprint reader to authenticate for running a command as root")
        XCTAssertEqual(Messages.touchPrompt(template: "Approve %s with your finger", service: "sudo"), "Approve sudo with your finger")
        XCTAssertEqual(Messages.touchPrompt(template: "{service} %s", service: "su"), "{service} su", "no placeholders in an admin's text")
    }

    func testEveryPromptAndLockoutNamesWhatItTakes() {
        XCTAssertEqual(Messages.typeOrTouchPrompt(service: "sudo", takes: .passcodeOrPassword(.pin)), "PIN or password for running a command as root, or touch the reader: ")
        XCTAssertEqual(Messages.typePrompt(service: "su", takes: .passcodeOrPassword(.pattern)), "Pattern or password for running a command as root: ")
        XCTAssertEqual(Messages.dialogPrompt(service: "login", takes: .password), "Password for logging in, or touch the reader, then press Enter: ")
        XCTAssertEqual(Messages.passcodeLocked(.password, timeLeft: 240, fingerUsable: true), "Passcode locked for 4 min: use your finger or your password.")
        XCTAssertEqual(Messages.biometricsLocked(policy: .biometricsOrPasscode, timeLeft: nil, passcode: .password),
                       "Fingerprint locked after too many failed attempts: use your passcode or your password.")
        XCTAssertEqual(Messages.biometricsLocked(policy: .biometrics, timeLeft: 840, passcode: .pin),
                       "Fingerprint locked for 14 min after too many failed attempts: use your password.")
        var options = Options()
        options.requirePasscode = PasscodeRequirementRules(afterBoot: false, afterEnrolmentChange: false, maximumAgeSeconds: 3 * 86400)
        XCTAssertEqual(Messages.passcodeRequired(.passcodeRequiredAfterIdle, policy: .biometricsOrPasscode, kind: .pin, options: options),
                       "PIN required: not entered for 3d.")
        XCTAssertEqual(Messages.passcodeRequired(.passcodeRequiredAfterBoot, policy: .biometrics, kind: .pin, options: options),
                       "Password required after a restart.")
    }

    /// What biounlock-check takes from the module as the caller's language (never a path).
    func testOnlyPlainLocaleNamesAndLanguageListsAreRelayed() {
        for name in ["zh_CN.UTF-8", "zh_TW.utf8", "de_DE", "sr_RS@latin", "C.UTF-8", "ja_JP.eucJP", "ast_ES", "be_BY@latin", "en-US"] {
            XCTAssertTrue(Localization.isPlainLocaleName(name), name)
        }
        for name in ["", "/usr/share/locale/zh_CN", "../zh_CN", ".zh_CN", "zh_CN/../../x", "zh CN", "zh_CN\n", "_zh", "1zh",
                     "zh_CN.UTF-8%s", "中文", String(repeating: "a", count: 65)] {
            XCTAssertFalse(Localization.isPlainLocaleName(name), name)
        }
        for list in ["zh_CN", "zh_TW:zh:en", "de::en", "sr:en:"] { XCTAssertTrue(Localization.isPlainLanguageList(list), list) }
        for list in ["", "zh_CN:/tmp", "../x", "zh:" + String(repeating: "a", count: 300), Array(repeating: "de", count: 17).joined(separator: ":")] {
            XCTAssertFalse(Localization.isPlainLanguageList(list), list)
        }
        // The tests run in the C locale (setlocale is never called here): English, nothing to relay.
        XCTAssertEqual(Localization.callerLanguage().locale, "")
    }
}
