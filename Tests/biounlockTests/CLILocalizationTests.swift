import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore

/// The built CLI in the admin's language: it calls setlocale itself, reads locale_dir from its
/// config file, and keeps JSON, exit codes, option names and config words untranslated.
final class CLILocalizationTests: XCTestCase {
    var dir = ""
    var db: String { dir + "/db/biounlock.db" }
    var config: String { dir + "/biounlock.conf" }
    let user = "daemon"

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: cliBuildDirectory + "/locale/zh_CN/LC_MESSAGES/biounlock.mo"),
                      "run scripts/build first (it compiles po/*.po into build/locale)")
        var template = Array("/tmp/bu-cli-l10n.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        chmod(dir, 0o755)
        try "locale_dir = \(cliBuildDirectory)/locale\n".write(toFile: config, atomically: true, encoding: .utf8)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func cli(_ args: [String], _ environment: [String: String], stdin: String? = nil) throws -> ProcessResult {
        try runProcess(cliPath, ["--db", db, "--sensor", "simulated", "--config", config] + args, stdin: stdin,
                       environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
    }

    func testStatusSpeaksTheAdminsLanguage() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], ["LANG": "C"], stdin: "2468\n").status, 0)
        let chinese = try cli(["status", user], ["LANG": "zh_CN.UTF-8"])
        XCTAssertEqual(chinese.status, 0, chinese.stderr)
        for line in ["  生物识别解锁：关闭", "  指纹：未录入", "  口令：PIN（数字）", "  连续失败：指纹 0 次，口令 0 次", "  指纹已锁定：否"] {
            XCTAssertTrue(chinese.stdout.contains(line + "\n"), "\(line)\n\(chinese.stdout)")
        }
        let traditional = try cli(["status", user], ["LANG": "zh_TW.UTF-8"])
        XCTAssertTrue(traditional.stdout.contains("  生物辨識解鎖：關閉\n"), traditional.stdout)
        let german = try cli(["status", user], ["LANG": "de_DE.UTF-8"])
        XCTAssertTrue(german.stdout.contains("  biometrisches Entsperren: aus\n"), german.stdout)
        let english = try cli(["status", user], ["LANG": "C"])
        XCTAssertTrue(english.stdout.contains("  biometric unlock: off\n  fingers: none enrolled\n  passcode: PIN (digits)\n"), english.stdout)
        XCTAssertEqual(try cli(["status", user], ["LANG": "it_IT.UTF-8"]).stdout, english.stdout, "no Italian catalog: English")
    }

    /// A user who is not root, in each language: `status` says it cannot read the store (exit 1).
    func testAUserWhoCannotReadTheStoreIsToldSoInEveryLanguage() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], ["LANG": "C"], stdin: "2468\n").status, 0)
        let messages = [
            "C": "cannot read the biounlock store (\(db)): only root can; run it with sudo",
            "de_DE.UTF-8": "die biounlock-Datenbank (\(db)) kann nicht gelesen werden: nur root kann das; führen Sie den Befehl mit sudo aus",
            "es_ES.UTF-8": "no se puede leer la base de datos de biounlock (\(db)): solo root puede; ejecute la orden con sudo",
            "fr_FR.UTF-8": "impossible de lire la base de données de biounlock (\(db)) : seul root le peut ; relancez la commande avec sudo",
            "ja_JP.UTF-8": "biounlock のデータベース（\(db)）を読み取れません。読み取れるのは root だけです。sudo で実行してください",
            "zh_CN.UTF-8": "无法读取 biounlock 数据库（\(db)）：只有 root 可以读取；请用 sudo 运行",
            "zh_TW.UTF-8": "無法讀取 biounlock 資料庫（\(db)）：只有 root 可以讀取；請用 sudo 執行",
        ]
        for (lang, message) in messages {
            for args in [["status"], ["status", user]] {
                let r = try runProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", cliPath,
                                                            "--db", db, "--sensor", "simulated", "--config", config] + args,
                                       environment: ["PATH": "/usr/bin:/bin", "LANG": lang])
                XCTAssertEqual(r.status, 1, "\(lang) \(args): \(r.stdout)")
                XCTAssertEqual(r.stdout, "", "\(lang) \(args)")
                XCTAssertTrue(r.stderr.contains(message), "\(lang) \(args): \(r.stderr)")
            }
        }
    }

    /// Values inside the translated texts are translated too: the passcode's kind, why it is
    /// required next, what an audit row's outcome was (a Unix password typed at biounlock's
    /// prompt is "handed to the password", not "unavailable"); the audit codes stay as they are.
    func testValuesInTheTextsAreTranslated() throws {
        try "locale_dir = \(cliBuildDirectory)/locale\nrequire_passcode = boot\n".write(toFile: config, atomically: true, encoding: .utf8)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], ["LANG": "C"], stdin: "2468\n").status, 0)
        let store = try Store.open(path: db, mode: .authenticate)
        let now = Int64(Date().timeIntervalSince1970)
        try store.appendEvent(AuditEvent(time: now - 60, user: user, service: "sudo", tty: "", rhost: "",
                                         method: .fingerprint, outcome: "success", reason: "finger-matched"))
        try store.appendEvent(AuditEvent(time: now, user: user, service: "login", tty: "", rhost: "",
                                         method: .password, outcome: "unavailable", reason: "password-handed-over"))
        // language: passcode set, status's kind line, status's requirement line, log's two outcomes
        let expected: [(String, [String], String, String)] = [
            ("C", ["PIN set for daemon.\n", "  passcode: PIN (digits)\n", "  passcode required next: yes, it has never been entered\n"],
             "handed to the password, with what was typed", "unlocked by a finger"),
            ("de_DE.UTF-8", ["PIN für daemon festgelegt.\n", "  Code: PIN (Ziffern)\n", "  Code beim nächsten Mal erforderlich: ja, er wurde noch nie eingegeben\n"],
             "mit der Eingabe an das Passwort übergeben", "mit einem Finger entsperrt"),
            ("es_ES.UTF-8", ["PIN establecido para daemon.\n", "  código de acceso: PIN (dígitos)\n", "  código de acceso necesario la próxima vez: sí, aún no se ha introducido nunca\n"],
             "se pasó a la contraseña con lo que se escribió", "desbloqueado con un dedo"),
            ("fr_FR.UTF-8", ["Code PIN défini pour daemon.\n", "  code d'accès : code PIN (chiffres)\n", "  code d'accès exigé la prochaine fois : oui, il n'a encore jamais été saisi\n"],
             "passé au mot de passe, avec ce qui a été saisi", "déverrouillé par un doigt"),
            ("ja_JP.UTF-8", ["daemon の PIN を設定しました。\n", "  パスコード：PIN（数字）\n", "  次回パスコードが必要：はい（まだ一度も入力されていません）\n"],
             "入力された文字列をパスワードに引き継ぎました", "指紋でロック解除"),
            ("zh_CN.UTF-8", ["已为 daemon 设置 PIN 码。\n", "  口令：PIN（数字）\n", "  下次需要口令：是，口令还从未输入过\n"],
             "已把输入的内容交给密码验证", "已用指纹解锁"),
            ("zh_TW.UTF-8", ["已為 daemon 設定 PIN 碼。\n", "  通行碼：PIN（數字）\n", "  下次需要通行碼：是，通行碼還從未輸入過\n"],
             "已把輸入的內容交給密碼驗證", "已用指紋解鎖"),
        ]
        for (lang, lines, handedOn, touched) in expected {
            let set = try cli(["passcode", "set", user, "--stdin"], ["LANG": lang], stdin: "2468\n")
            XCTAssertEqual(set.stdout, lines[0], lang)
            let status = try cli(["status", user], ["LANG": lang])
            for line in lines.dropFirst() { XCTAssertTrue(status.stdout.contains(line), "\(lang): \(line)\n\(status.stdout)") }
            let log = try cli(["log"], ["LANG": lang])
            XCTAssertTrue(log.stdout.contains("  \(handedOn) (password, unavailable, password-handed-over)\n"), "\(lang):\n\(log.stdout)")
            XCTAssertTrue(log.stdout.contains("  \(touched) (fingerprint, success, finger-matched)\n"), "\(lang):\n\(log.stdout)")
        }
        // JSON keeps the codes.
        let events = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cli(["log", "--json"], ["LANG": "ja_JP.UTF-8"]).stdout.utf8)) as? [String: Any])["events"] as? [[String: Any]]
        XCTAssertEqual(events?.first?["outcome"] as? String, "unavailable")
    }

    /// Japanese says 生体認証 (biometric authentication), the word Japanese systems use, never
    /// 生物認証 ("authentication of living things").
    func testJapaneseSaysSeitaiNinsho() throws {
        let help = try cli(["--help"], ["LANG": "ja_JP.UTF-8"])
        XCTAssertTrue(help.stdout.contains("生体認証によるロック解除をオンにします"), help.stdout)
        let catalog = try String(contentsOfFile: URL(fileURLWithPath: cliBuildDirectory).deletingLastPathComponent().appendingPathComponent("po/ja.po").path, encoding: .utf8)
        XCTAssertFalse(catalog.contains("生物"), "po/ja.po")
        XCTAssertFalse(help.stdout.contains("生物"), help.stdout)
    }

    func testJSONExitCodesAndConfigWordsStayEnglish() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], ["LANG": "C"], stdin: "2468\n").status, 0)
        let english = try cli(["status", user, "--json"], ["LANG": "C"])
        let chinese = try cli(["status", user, "--json"], ["LANG": "zh_CN.UTF-8"])
        XCTAssertEqual(chinese.status, 0)
        XCTAssertEqual(chinese.stdout, english.stdout, "the JSON document does not depend on the language")
        XCTAssertEqual(try cli(["doctor", "--json", "--pam-dir", dir + "/none"], ["LANG": "ja_JP.UTF-8"]).stdout,
                       try cli(["doctor", "--json", "--pam-dir", dir + "/none"], ["LANG": "C"]).stdout)
        // Usage errors: translated message, the same exit code and the option's own name.
        let usage = try cli(["enrol", user, "--toe", "x"], ["LANG": "de_DE.UTF-8"])
        XCTAssertEqual(usage.status, 64)
        XCTAssertTrue(usage.stderr.contains("unbekannte Option „--toe“ für „enrol“"), usage.stderr)
        let frob = try cli(["frobnicate"], ["LANG": "fr_FR.UTF-8"])
        XCTAssertEqual(frob.status, 64)
        XCTAssertTrue(frob.stderr.contains("commande « frobnicate » inconnue"), frob.stderr)
        // A failure: exit 1 in every language.
        let failure = try cli(["reset", "nobody-here"], ["LANG": "es_ES.UTF-8"])
        XCTAssertEqual(failure.status, 1)
        XCTAssertTrue(failure.stderr.contains("«nobody-here» no tiene registro de biounlock"), failure.stderr)
        // --json: the errors are English too.
        let jsonError = try cli(["log", "--json", "--limit", "0"], ["LANG": "zh_CN.UTF-8"])
        XCTAssertEqual(jsonError.status, 64)
        XCTAssertTrue(jsonError.stderr.contains("--limit takes 1-1000000"), jsonError.stderr)
        let jsonUsage = try cli(["enable", user, "--service", "../sudo", "--json"], ["LANG": "de_DE.UTF-8"])
        XCTAssertEqual(jsonUsage.status, 64)
        XCTAssertTrue(jsonUsage.stderr.contains("'../sudo' is neither a PAM service name nor a group of them"), jsonUsage.stderr)
    }

    func testHelpIsTranslatedAndOptionsAreNot() throws {
        let help = try cli(["--help"], ["LANG": "ja_JP.UTF-8"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("コマンド：\n"), help.stdout)
        XCTAssertTrue(help.stdout.contains("  enrol USER [--finger F] [--device D] [--timeout SECONDS]"), "commands and options keep their names")
        XCTAssertTrue(help.stdout.contains("  --db PATH"))
        // Columns line up by terminal width: the help text starts in the same column on every line.
        let zh = try cli(["enrol", "--help"], ["LANG": "zh_CN.UTF-8"])
        XCTAssertTrue(zh.stdout.contains("\n  --finger F              要录入的手指（默认为 right-index-finger）\n"), zh.stdout)
    }

    /// In `biounlock --help` every command's abstract starts in the same terminal column, in
    /// English and in the wide characters of Chinese and Japanese (columns counted by glibc's
    /// wcwidth, not by the code under test); a usage too long for the column has its abstract on
    /// the next line, in that column.
    func testHelpColumnsLineUpInEveryLanguage() throws {
        setlocale(LC_CTYPE, "C.UTF-8")
        // glibc's wcwidth (the Glibc module does not export it).
        typealias WCWidth = @convention(c) (Int32) -> Int32
        let wcwidth = unsafeBitCast(try XCTUnwrap(dlsym(dlopen(nil, RTLD_NOW), "wcwidth")), to: WCWidth.self)
        XCTAssertEqual(wcwidth(Int32(("生" as Unicode.Scalar).value)), 2)
        func columns(_ text: Substring) -> Int {
            text.unicodeScalars.reduce(0) { $0 + max(0, Int(wcwidth(Int32($1.value)))) }
        }
        for lang in ["C", "ja_JP.UTF-8", "zh_CN.UTF-8", "zh_TW.UTF-8", "de_DE.UTF-8"] {
            let help = try cli(["--help"], ["LANG": lang])
            XCTAssertEqual(help.status, 0, help.stderr)
            let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.indices.dropLast().first(where: { !lines[$0].hasPrefix(" ") && lines[$0 + 1].hasPrefix("  enrol ") }) else {
                return XCTFail("\(lang): no command list in\n\(help.stdout)")
            }
            var starts: [Int] = []
            var i = start + 1
            while i < lines.count, !lines[i].isEmpty {
                let line = lines[i]
                XCTAssertTrue(line.hasPrefix("  ") && !line.hasPrefix("   "), "\(lang): a usage line: \(line)")
                if let gap = line.range(of: "  ", range: line.index(line.startIndex, offsetBy: 2)..<line.endIndex) {
                    var abstract = gap.upperBound
                    while line[abstract] == " " { abstract = line.index(after: abstract) }
                    starts.append(columns(line[..<abstract]))
                    i += 1
                } else {
                    let next = lines[i + 1]
                    let abstract = next.firstIndex { $0 != " " } ?? next.endIndex
                    XCTAssertLessThan(abstract, next.endIndex, "\(lang): the abstract under \(line)")
                    starts.append(columns(next[..<abstract]))
                    i += 2
                }
            }
            XCTAssertGreaterThan(starts.count, 15, "\(lang)")
            XCTAssertEqual(Set(starts).count, 1, "\(lang): abstracts start in columns \(starts)\n\(help.stdout)")
        }
    }

    /// What the checker, sensor=auto and migrate added speaks the admin's language too; the JSON
    /// stays English.
    func testDoctorsCheckerAndSensorLinesAndMigrateAreTranslated() throws {
        let checker = "/nonexistent-biounlock-\(getpid())/biounlock-check"   // (under /tmp it would be "writable by others")
        try "locale_dir = \(cliBuildDirectory)/locale\ncheck_helper = \(checker)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let doctor = try cli(["doctor", "--pam-dir", dir + "/none"], ["LANG": "zh_CN.UTF-8"])
        XCTAssertTrue(doctor.stdout.contains("checker: \(checker) 不存在：以用户身份运行的锁屏程序（i3lock、swaylock、xscreensaver）将改用密码\n"),
                      doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("sensor: 正在使用 simulated：已配置 sensor=simulated\n"), doctor.stdout)
        let json = try cli(["doctor", "--json", "--pam-dir", dir + "/none"], ["LANG": "zh_CN.UTF-8"])
        XCTAssertTrue(json.stdout.contains("\"simulated is in use: sensor=simulated is configured\""), json.stdout)
        let migrate = try cli(["migrate"], ["LANG": "fr_FR.UTF-8"])
        XCTAssertEqual(migrate.status, 0, migrate.stderr)
        XCTAssertEqual(migrate.stdout, "Pas encore de base de données à \(db) : rien à migrer.\n")
        let help = try cli(["migrate", "--help"], ["LANG": "de_DE.UTF-8"])
        XCTAssertTrue(help.stdout.contains("Die Datenbank auf das Schema dieser Version bringen"), help.stdout)
    }

    func testALocaleDirectoryWithADamagedCatalogMeansEnglish() throws {
        let locale = dir + "/locale"
        try FileManager.default.copyItem(atPath: cliBuildDirectory + "/locale", toPath: locale)
        let mo = locale + "/zh_CN/LC_MESSAGES/biounlock.mo"
        let good = try Data(contentsOf: URL(fileURLWithPath: mo))
        try good.prefix(good.count / 3).write(to: URL(fileURLWithPath: mo))
        try "locale_dir = \(locale)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let r = try cli(["status", user], ["LANG": "zh_CN.UTF-8"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("  biometric unlock: off\n"), r.stdout)
    }
}
