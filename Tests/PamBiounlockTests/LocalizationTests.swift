import XCTest
import Foundation
import TestSupport
import BiounlockCore
import BiounlockSensors

/// The module in the caller's language, through real libpam: pam-harness --setlocale calls
/// setlocale(LC_ALL, "") as sudo, su, login and sshd do, and the module (which never sets a
/// locale itself) reads the catalogs that scripts/build compiled into build/locale
/// (locale_dir=). A missing, damaged or untrusted catalog changes nothing but the language.
final class LocalizationTests: ModuleTestCase {
    static let localeDirectory = buildDirectory + "/locale"
    static let poDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("po").path
    static let wrong = ModuleFixture.scan("mallory")

    /// What one transaction shows in a language: three wrong fingers, then the PIN.
    struct Transcript: Equatable {
        var touch: String
        var twoLeft: String
        var oneLeft: String
        var noMore: String
        var prompt: String

        var messages: [String] { ["INFO: " + touch, "ERROR: " + twoLeft, "ERROR: " + oneLeft, "ERROR: " + noMore, "PROMPT_OFF: " + prompt] }
    }

    static let english = Transcript(
        touch: "Touch the fingerprint reader to authenticate for biotest",
        twoLeft: "Fingerprint not recognised. 2 tries left.", oneLeft: "Fingerprint not recognised. 1 try left.",
        noMore: "Fingerprint not recognised.", prompt: "PIN or password for biotest: ")
    static let simplified = Transcript(
        touch: "请触摸指纹读取器以进行 biotest 认证",
        twoLeft: "指纹无法识别，还剩 2 次机会。", oneLeft: "指纹无法识别，还剩 1 次机会。",
        noMore: "指纹无法识别。", prompt: "PIN 码或密码（biotest）：")
    static let traditional = Transcript(
        touch: "請觸碰指紋讀取器以進行 biotest 驗證",
        twoLeft: "無法辨識指紋，還有 2 次機會。", oneLeft: "無法辨識指紋，還有 1 次機會。",
        noMore: "無法辨識指紋。", prompt: "PIN 碼或密碼（biotest）：")
    static let german = Transcript(
        touch: "Berühren Sie den Fingerabdruckleser, um sich für biotest zu authentifizieren",
        twoLeft: "Fingerabdruck nicht erkannt. Noch 2 Versuche.", oneLeft: "Fingerabdruck nicht erkannt. Noch 1 Versuch.",
        noMore: "Fingerabdruck nicht erkannt.", prompt: "PIN oder Passwort für biotest: ")

    override func prepare() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: Self.localeDirectory + "/zh_CN/LC_MESSAGES/biounlock.mo"),
                      "run scripts/build first (it compiles po/*.po into build/locale)")
    }

    /// Three wrong fingers, then the PIN, with the caller's `environment` (LANG, LANGUAGE...).
    func run(_ environment: [String: String], localeDirectory: String = LocalizationTests.localeDirectory,
             setlocale: Bool = true) throws -> Transaction {
        try fixture.service("locale_dir=\(localeDirectory)")
        return try fixture.authenticate(answers: [ModuleFixture.pin], touches: [Self.wrong, Self.wrong, Self.wrong],
                                        extra: (setlocale ? ["--setlocale"] : []) + ["--syslog"], environment: environment)
    }

    func testTheCallersLocaleChoosesTheLanguage() throws {
        for (environment, expected) in [
            (["LANG": "zh_CN.UTF-8"], Self.simplified),
            (["LANG": "zh_TW.UTF-8"], Self.traditional),
            (["LANG": "de_DE.UTF-8"], Self.german),
            (["LANG": "C"], Self.english),
            (["LC_ALL": "zh_TW.UTF-8", "LANG": "de_DE.UTF-8"], Self.traditional),
            (["LANG": "C.UTF-8", "LANGUAGE": "zh_CN"], Self.simplified),
            (["LANG": "de_DE.UTF-8", "LANGUAGE": "zh_TW:de"], Self.traditional),
        ] {
            let t = try run(environment)
            XCTAssertEqual(t.code, "PAM_SUCCESS", "\(environment): the PIN works in every language")
            XCTAssertEqual(t.messages, expected.messages, "\(environment)")
        }
        XCTAssertNotEqual(Self.simplified.messages, Self.traditional.messages, "zh_CN and zh_TW are two catalogs")
    }

    func testEnglishWhereThereIsNoCatalogOrNoLocale() throws {
        for (environment, why) in [
            (["LANG": "it_IT.UTF-8"], "a language without a catalog"),
            (["LANG": "xx_YY.UTF-8"], "a locale the system does not have (setlocale fails: C)"),
            ([:], "no locale variables at all"),
            (["LANG": "zh_CN.UTF-8", "LC_MESSAGES": "C"], "messages in the C locale"),
            (["LANG": "C", "LANGUAGE": "zh_CN"], "LANGUAGE is ignored in the C locale, as gettext does"),
            (["LANG": "de_DE"], "ISO-8859-1: biounlock's texts are UTF-8 and are not converted"),
            (["LANG": "zh_CN.GB18030"], "GB18030: the same"),
            (["LANG": "C.UTF-8", "LANGUAGE": "../../../tmp/zh_CN"], "a path in LANGUAGE"),
        ] {
            let t = try run(environment)
            XCTAssertEqual(t.code, "PAM_SUCCESS", why)
            XCTAssertEqual(t.messages, Self.english.messages, why)
        }
        // The module never calls setlocale: a host that did not set its locale gets English.
        let host = try run(["LANG": "zh_CN.UTF-8"], setlocale: false)
        XCTAssertEqual(host.messages, Self.english.messages, "no setlocale in the host: the C locale, English")
    }

    func testPromptsAndLockoutsInEachLanguage() throws {
        try fixture.service("locale_dir=\(Self.localeDirectory) touch_first=0")
        let dialog = try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--setlocale"], environment: ["LANG": "zh_CN.UTF-8"])
        XCTAssertEqual(dialog.messages, ["PROMPT_OFF: PIN 码或密码（biotest），或触摸指纹读取器后按回车键："])
        XCTAssertEqual(dialog.code, "PAM_SUCCESS")
        // A passcode lockout, with its time left, in French (no finger enrolled: nothing but the lock).
        try fixture.store.deleteTemplates(user: ModuleFixture.enrolledUser, finger: nil)
        for _ in 1...5 { XCTAssertEqual(try fixture.authenticate(answers: ["1357"]).code, "PAM_AUTHINFO_UNAVAIL") }
        // Two failures more on the record: the 15-minute wait, which reads "15 min" for a whole
        // minute. (The first wait, 60 s, reads "1 min" only within the second of the fifth failure,
        // "59 s" after it: CI once crossed that second between the two transactions.)
        let sql = try runProcess("/usr/bin/sqlite3", [fixture.storePath, "UPDATE users SET passcode_failures = 7"])
        XCTAssertEqual(sql.status, 0, sql.stderr)
        let locked = try fixture.authenticate(extra: ["--setlocale"], environment: ["LANG": "fr_FR.UTF-8"])
        XCTAssertEqual(locked.messages, ["ERROR: Aucune empreinte enregistrée.", "ERROR: Code PIN verrouillé pendant 15 min : utilisez votre mot de passe."])
        XCTAssertEqual(locked.code, "PAM_AUTHINFO_UNAVAIL")
    }

    func testMessageStylesAreTheSameInEveryLanguage() throws {
        // Callers tell messages apart by their style, never by their words.
        let styles = { (t: Transaction) in t.messages.map { $0.prefix { $0 != ":" } } }
        let english = try run(["LANG": "C"])
        for lang in ["zh_CN.UTF-8", "zh_TW.UTF-8", "ja_JP.UTF-8", "de_DE.UTF-8", "fr_FR.UTF-8", "es_ES.UTF-8"] {
            let t = try run(["LANG": lang])
            XCTAssertEqual(styles(t), styles(english), lang)
            XCTAssertNotEqual(t.messages, english.messages, "\(lang) is translated")
        }
    }

    func testTheHostsLocaleAndTextDomainAreLeftAlone() throws {
        try fixture.service("locale_dir=\(Self.localeDirectory)")
        let t = try fixture.authenticate(answers: [ModuleFixture.pin], touches: [Self.wrong, Self.wrong, Self.wrong],
                                         extra: ["--setlocale", "--host-check"], environment: ["LANG": "zh_CN.UTF-8"])
        XCTAssertEqual(t.messages, Self.simplified.messages)
        XCTAssertEqual(t.lines("HOST"), ["unchanged after pam_authenticate 1", "unchanged after pam_end"], t.raw.stdout)
    }

    func testTranslatingIsCleanUnderValgrind() throws {
        let suppressions = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Harness/valgrind.supp").path
        let valgrind = ["/usr/bin/valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                        "--suppressions=\(suppressions)", "-q"]
        try fixture.service("locale_dir=\(Self.localeDirectory)")
        let t = try fixture.authenticate(answers: [ModuleFixture.pin], touches: [Self.wrong, Self.wrong, Self.wrong],
                                         extra: ["--setlocale"], environment: ["LANG": "zh_TW.UTF-8"], wrapper: valgrind,
                                         timeout: 180, touchWait: 60_000)
        XCTAssertEqual(t.raw.status, 0, t.raw.stderr)
        XCTAssertEqual(t.messages, Self.traditional.messages)
    }

    /// Random damage (bytes flipped where the checks may let a changed letter through): the
    /// harness never crashes or hangs and the PIN works; a flipped placeholder or a broken
    /// UTF-8 sequence is not shown (that message is English).
    func testRandomlyDamagedCatalogsNeverHurtTheHost() throws {
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: Self.localeDirectory + "/zh_CN/LC_MESSAGES/biounlock.mo")))
        var seed: UInt64 = 0x5eed_1234
        func next(_ bound: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(bound))
        }
        let dir = fixture.dir + "/locale-random"
        try copyLocale(to: dir)
        let mo = dir + "/zh_CN/LC_MESSAGES/biounlock.mo"
        for round in 0..<30 {
            var bytes = good
            for _ in 0..<(1 + next(4)) { bytes[next(bytes.count)] = UInt8(truncatingIfNeeded: next(256)) }
            try Data(bytes).write(to: URL(fileURLWithPath: mo))
            let t = try run(["LANG": "zh_CN.UTF-8"], localeDirectory: dir)
            XCTAssertFalse(t.raw.timedOut, "round \(round)")
            XCTAssertEqual(t.code, "PAM_SUCCESS", "round \(round): \(t.raw.stdout) \(t.raw.stderr)")
            XCTAssertEqual(t.messages.count, 5, "round \(round)")
            for (shown, english) in zip(t.messages, Self.english.messages) where shown.contains("{") {
                XCTAssertEqual(shown, english, "round \(round): no placeholder is ever shown")
            }
        }
    }

    /// Catalogs glibc would crash on, loop on, or read from an untrusted source: English, the same
    /// result, one syslog warning.
    func testADamagedOrUntrustedCatalogChangesNothingButTheLanguage() throws {
        let good = try Data(contentsOf: URL(fileURLWithPath: Self.localeDirectory + "/zh_CN/LC_MESSAGES/biounlock.mo"))
        var fullHash = good
        let hashSize = Int(good[20]) | Int(good[21]) << 8 | Int(good[22]) << 16
        let hashOffset = Int(good[24]) | Int(good[25]) << 8 | Int(good[26]) << 16
        for slot in 0..<hashSize { fullHash[hashOffset + 4 * slot] = 1 }
        var damaged: [(String, (String) throws -> Void)] = []
        for length in [0, 4, 27, 28, 100, 1000, good.count / 2, good.count - 1] {
            damaged.append(("truncated to \(length) bytes", { try good.prefix(length).write(to: URL(fileURLWithPath: $0)) }))
        }
        damaged += [
            ("zeros", { try Data(count: good.count).write(to: URL(fileURLWithPath: $0)) }),
            ("a hash table without an empty slot (glibc loops forever)", { try fullHash.write(to: URL(fileURLWithPath: $0)) }),
            ("writable by others", { try good.write(to: URL(fileURLWithPath: $0)); chmod($0, 0o666) }),
            ("a FIFO (glibc's open would block)", { XCTAssertEqual(mkfifo($0, 0o644), 0) }),
            ("a directory", { try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: false) }),
        ]
        for (what, make) in damaged {
            let dir = fixture.dir + "/locale-\(damaged.firstIndex { $0.0 == what } ?? 0)"
            try copyLocale(to: dir)
            let mo = dir + "/zh_CN/LC_MESSAGES/biounlock.mo"
            try FileManager.default.removeItem(atPath: mo)
            try make(mo)
            let t = try run(["LANG": "zh_CN.UTF-8"], localeDirectory: dir)
            XCTAssertFalse(t.raw.timedOut, what)
            XCTAssertEqual(t.code, "PAM_SUCCESS", "\(what): the same result")
            XCTAssertEqual(t.messages, Self.english.messages, "\(what): English")
            XCTAssertTrue(t.syslog.contains { $0.contains("translations disabled, English only: \(mo)") }, "\(what): \(t.syslog)")
        }
        // A damaged catalog of another language: glibc might read it too (LANGUAGE), so English.
        let other = fixture.dir + "/locale-other"
        try copyLocale(to: other)
        try good.prefix(500).write(to: URL(fileURLWithPath: other + "/zh_TW/LC_MESSAGES/biounlock.mo"))
        XCTAssertEqual(try run(["LANG": "zh_CN.UTF-8"], localeDirectory: other).messages, Self.english.messages)
        // A catalog with a plural rule that divides by zero (SIGFPE in glibc), compiled by msgfmt.
        let fpe = fixture.dir + "/locale-fpe"
        try copyLocale(to: fpe)
        let po = try String(contentsOfFile: Self.poDirectory + "/de.po", encoding: .utf8)
            .replacingOccurrences(of: "plural=(n != 1);", with: "plural=(n / 0);")
        try po.write(toFile: fixture.dir + "/fpe.po", atomically: true, encoding: .utf8)
        let msgfmt = try runProcess("/usr/bin/msgfmt", ["-o", fpe + "/de/LC_MESSAGES/biounlock.mo", fixture.dir + "/fpe.po"])
        XCTAssertEqual(msgfmt.status, 0, msgfmt.stderr)
        let t = try run(["LANG": "de_DE.UTF-8"], localeDirectory: fpe)
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages, Self.english.messages)
        // Missing altogether: English, and nothing to warn about.
        let none = try run(["LANG": "zh_CN.UTF-8"], localeDirectory: fixture.dir + "/no-such-dir")
        XCTAssertEqual(none.messages, Self.english.messages)
        XCTAssertFalse(none.syslog.contains { $0.contains("translations") }, "\(none.syslog)")
    }

    func copyLocale(to dir: String) throws {
        try FileManager.default.copyItem(atPath: Self.localeDirectory, toPath: dir)
    }
}
