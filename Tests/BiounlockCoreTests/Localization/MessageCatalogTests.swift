import XCTest
import Foundation
@testable import BiounlockCore

/// The checks that stand between a damaged catalog and glibc's gettext, which crashes (SIGSEGV),
/// loops forever or raises SIGFPE on one (MessageCatalog). Catalogs come from msgfmt itself
/// (gettext, installed by scripts/deps) and from hand-made byte layouts.
final class MessageCatalogTests: XCTestCase {
    static let po = """
        msgid ""
        msgstr ""
        "Content-Type: text/plain; charset=UTF-8\\n"
        "Plural-Forms: nplurals=2; plural=(n != 1);\\n"

        msgid "PIN or password for {service}: "
        msgstr "PIN oder Passwort für {service}: "

        msgid "Fingerprint not recognised. 1 try left."
        msgid_plural "Fingerprint not recognised. {count} tries left."
        msgstr[0] "Nicht erkannt. Noch ein Versuch."
        msgstr[1] "Nicht erkannt. Noch {count} Versuche."

        """

    var dir = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/bu-mo.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// msgfmt's output for `po` (with its hash table), in the given byte order.
    func compiled(_ po: String = MessageCatalogTests.po, endianness: String = "little") throws -> [UInt8] {
        let source = dir + "/x.po", mo = dir + "/x.mo"
        try po.write(toFile: source, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/msgfmt")
        p.arguments = ["--endianness=\(endianness)", "-o", mo, source]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "msgfmt (Debian package gettext: run scripts/deps)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: mo)))
    }

    func word(_ bytes: [UInt8], _ offset: Int) -> Int {
        Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
    }

    func setWord(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }

    func testMsgfmtsCatalogsPassInBothByteOrders() throws {
        XCTAssertNil(MessageCatalog.problem(try compiled()))
        XCTAssertNil(MessageCatalog.problem(try compiled(endianness: "big")))
    }

    func testEveryTruncationIsRefused() throws {
        let mo = try compiled()
        for length in 0..<mo.count {
            XCTAssertNotNil(MessageCatalog.problem(Array(mo.prefix(length))), "truncated to \(length) of \(mo.count) bytes")
        }
    }

    func testAnyDamageIsCheckedWithoutATrap() throws {
        let mo = try compiled()
        var accepted = 0
        for offset in 0..<mo.count {
            for value: UInt8 in [0x00, 0xff, 0x7f, mo[offset] ^ 0x01] {
                var damaged = mo
                damaged[offset] = value
                if MessageCatalog.problem(damaged) == nil { accepted += 1 }
            }
        }
        // A changed letter inside a string is still a well-formed catalog; the tables are not.
        XCTAssertGreaterThan(accepted, 0)
        XCTAssertNotNil(MessageCatalog.problem([UInt8](repeating: 0xff, count: 4096)))
        XCTAssertNotNil(MessageCatalog.problem([UInt8](repeating: 0, count: MessageCatalog.maximumSize + 1)))
    }

    func testAHashTableGlibcWouldLoopInIsRefused() throws {
        let mo = try compiled()
        let size = word(mo, 20), offset = word(mo, 24)
        XCTAssertGreaterThan(size, 2, "msgfmt writes a hash table")
        var full = mo
        for slot in 0..<size { setWord(&full, offset + 4 * slot, 1) }
        XCTAssertEqual(MessageCatalog.problem(full), "hash table without an empty slot")
        var composite = mo
        setWord(&composite, 20, 4)
        XCTAssertEqual(MessageCatalog.problem(composite), "hash table of size 4")
        var tiny = mo
        setWord(&tiny, 20, 2)
        XCTAssertNotNil(MessageCatalog.problem(tiny), "glibc computes % (size - 2)")
        var past = mo
        setWord(&past, offset, UInt32(word(mo, 8) + 1))
        XCTAssertNotNil(MessageCatalog.problem(past), "an entry past the strings")
    }

    func testTheHeaderMustSayUTF8AndThePluralRuleMustNotDivideByZero() throws {
        func header(_ fields: String) throws -> String? {
            let po = MessageCatalogTests.po.replacingOccurrences(
                of: "\"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"", with: fields)
            return MessageCatalog.problem(try compiled(po))
        }
        XCTAssertEqual(try header("\"Content-Type: text/plain; charset=ISO-8859-1\\n\"\n\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\""),
                       "not a UTF-8 catalog")
        XCTAssertNil(MessageCatalog.headerProblem("Content-Type: text/plain; charset=utf-8\nPlural-Forms: nplurals=1; plural=0;\n"))
        XCTAssertNotNil(MessageCatalog.headerProblem("Content-Type: text/plain; charset=UTF-8;\n"), "glibc would read 'UTF-8;'")
        XCTAssertNotNil(MessageCatalog.headerProblem("Plural-Forms: nplurals=2; plural=n != 1;\n"), "no charset")
        let russian = "n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2"
        XCTAssertNil(MessageCatalog.pluralRuleProblem(russian))
        XCTAssertNil(MessageCatalog.pluralRuleProblem("(n > 1)"))
        XCTAssertNotNil(MessageCatalog.pluralRuleProblem("n/0"))
        XCTAssertNotNil(MessageCatalog.pluralRuleProblem("n % 00"))
        XCTAssertNotNil(MessageCatalog.pluralRuleProblem("n%(n-1)"))
        XCTAssertNotNil(MessageCatalog.pluralRuleProblem(String(repeating: "(", count: 600)))
    }

    func testSystemDependentStringsAreRefused() throws {
        // Minor revision 1: words 7-11 of the header describe system-dependent strings (here they
        // are the first words of the string table, so not zero).
        var mo = try compiled()
        setWord(&mo, 4, 1)
        XCTAssertEqual(MessageCatalog.problem(mo), "system-dependent strings")
        var major = try compiled()
        setWord(&major, 4, 2 << 16)
        XCTAssertNotNil(MessageCatalog.problem(major))
    }

    func testADirectoryIsUsableOnlyWhenEveryCatalogInItIs() throws {
        let mo = try compiled()
        func put(_ lang: String, _ bytes: [UInt8], mode: Int = 0o644) throws -> String {
            let path = "\(dir)/locale/\(lang)/LC_MESSAGES"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: path + "/biounlock.mo", contents: Data(bytes), attributes: [.posixPermissions: mode])
            return path + "/biounlock.mo"
        }
        let locale = dir + "/locale"
        XCTAssertNil(CatalogDirectory.problem(dir + "/none", domain: "biounlock"), "no directory: English, nothing wrong")
        _ = try put("de", mo)
        try FileManager.default.createDirectory(atPath: dir + "/locale/fr/LC_MESSAGES", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir + "/locale/fr/LC_MESSAGES/other.mo", contents: Data([1, 2, 3]))
        XCTAssertNil(CatalogDirectory.problem(locale, domain: "biounlock"), "another domain's file is not ours to check")
        let broken = try put("zh_TW", Array(mo.prefix(100)))
        XCTAssertEqual(CatalogDirectory.problem(locale, domain: "biounlock")?.hasPrefix("\(broken): "), true, "a truncated catalog")
        _ = try put("zh_TW", mo, mode: 0o666)
        XCTAssertEqual(CatalogDirectory.problem(locale, domain: "biounlock"), "\(broken): not root-owned, or writable by group or others")
        try FileManager.default.removeItem(atPath: broken)
        XCTAssertEqual(mkfifo(broken, 0o644), 0)
        XCTAssertEqual(CatalogDirectory.problem(locale, domain: "biounlock"), "\(broken): not a regular file", "a FIFO blocks no one")
    }
}
