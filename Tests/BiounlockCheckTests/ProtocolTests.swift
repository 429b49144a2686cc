import BiounlockSystem
import XCTest
import BiounlockCore
import BiounlockFprintProtocol
import BiounlockCheckProtocol

/// The module <-> biounlock-check messages: what goes out comes back, and nothing else parses.
final class ProtocolTests: XCTestCase {
    let request = CheckRequest(user: "alice", service: "i3lock", tty: ":0", rhost: "", silent: true,
                               words: ["touch_first=0", "check_helper=/usr/libexec/biounlock/biounlock-check"],
                               environment: ["SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"], locale: "zh_CN.UTF-8", language: "zh_CN:zh")

    func testRequestsRoundTrip() throws {
        guard case .authenticate(let back)? = ModuleMessage(payload: ModuleMessage.authenticate(request).payload) else { return XCTFail() }
        XCTAssertEqual(back, request)
    }

    func testAnswersRoundTripAndCarryTheSecretOnlyInTheFrame() throws {
        let pin = try XCTUnwrap(Secret(bytes: Array("2468".utf8)))
        let payload = ModuleMessage.answer(.answer(pin)).payload
        guard case .answer(.answer(let back))? = ModuleMessage(payload: payload) else { return XCTFail() }
        XCTAssertTrue(back.constantTimeEquals(pin))
        for reply in [CheckAnswer.empty, .tooLong, .failed] {
            guard case .answer(let got)? = ModuleMessage(payload: ModuleMessage.answer(reply).payload) else { return XCTFail() }
            XCTAssertEqual("\(got.reply)", "\(reply.reply)")
        }
        var copy = payload
        Memory.zero(&copy)
        XCTAssertEqual(copy, [UInt8](repeating: 0, count: payload.count))
    }

    func testCheckerMessagesRoundTrip() {
        let messages: [CheckerMessage] = [
            .info("Touch the fingerprint reader to authenticate for unlocking the screen"), .error("PIN locked for 4 min: use your password."),
            .prompt("PIN or password for unlocking the screen, or touch the reader, then press Enter: "), .handOn,
            .result(Decision(.success(.fingerprint), .matched, method: .fingerprint)),
            .result(Decision(.success(.passcode), .passcodeAccepted, method: .passcode)),
            .result(Decision(.unavailable, .wrongPasscode, method: .passcode)),
            .result(Decision(.ignore, .remoteSession)), .result(Decision(.maxTries, .wrongFinger, method: .fingerprint)),
            .result(Decision(.userUnknown, .unknownUser)), .result(Decision(.conversationFailed, .cancelled)),
            .result(Decision(.unavailable, .otherUserRefused)),
        ]
        for m in messages { XCTAssertEqual(CheckerMessage(payload: m.payload), m) }
    }

    func testAnythingElseIsRefused() {
        let good = ModuleMessage.authenticate(request).payload
        var otherVersion = good
        otherVersion[0] = CheckProtocol.version &+ 1
        let bad: [[UInt8]] = [
            [], [CheckProtocol.version], otherVersion, good + [0], Array(good.dropLast()),
            [CheckProtocol.version, 99],
            [CheckProtocol.version, 2, 1, 0, 0, 0, 0],                      // an empty answer carried as text
            [CheckProtocol.version, 2, 1, 0, 0, 2, 1] + [UInt8](repeating: 0x31, count: 513),  // longer than any secret
            [CheckProtocol.version, 2, 1, 0, 0, 0, 5, 0x31],                 // shorter than announced
            [CheckProtocol.version, 2, 2, 0],                                // trailing byte
            [CheckProtocol.version, 2, 9],
        ]
        for b in bad { XCTAssertNil(ModuleMessage(payload: b), "\(b.prefix(12))") }

        var environment = request
        environment.environment = ["XDG_SESSION_ID": "c1"]
        guard case .authenticate(let filtered)? = ModuleMessage(payload: ModuleMessage.authenticate(environment).payload) else { return XCTFail() }
        XCTAssertEqual(filtered.environment, [:], "only SSH_CONNECTION and SSH_CLIENT travel")

        var invalidUTF8 = WireWriter()
        invalidUTF8.u8(CheckProtocol.version); invalidUTF8.u8(1)
        invalidUTF8.data([0xc3, 0x28]); for _ in 0..<3 { invalidUTF8.string("x") }
        invalidUTF8.u8(0); invalidUTF8.u32(0); invalidUTF8.u32(0); invalidUTF8.string(""); invalidUTF8.string("")
        XCTAssertNil(ModuleMessage(payload: invalidUTF8.bytes), "a user name that is not UTF-8")

        // The language is two more names: both must be there, and be UTF-8.
        var english = request
        english.locale = ""; english.language = ""
        let withoutLanguage = Array(ModuleMessage.authenticate(english).payload.dropLast(8))
        XCTAssertNil(ModuleMessage(payload: withoutLanguage), "a request without the language fields")
        var badLocale = WireWriter()
        badLocale.u8(CheckProtocol.version); badLocale.u8(1)
        for _ in 0..<4 { badLocale.string("x") }
        badLocale.u8(0); badLocale.u32(0); badLocale.u32(0); badLocale.data([0xff, 0xfe]); badLocale.string("")
        XCTAssertNil(ModuleMessage(payload: badLocale.bytes), "a locale that is not UTF-8")

        // A success must say how; "success by password" or by nothing does not exist.
        for method in ["password", "none", ""] {
            var w = WireWriter()
            w.u8(CheckProtocol.version); w.u8(14); w.u8(1); w.string(method); w.string("finger-matched"); w.string("fingerprint")
            XCTAssertNil(CheckerMessage(payload: w.bytes), method)
        }
        var unknownReason = WireWriter()
        unknownReason.u8(CheckProtocol.version); unknownReason.u8(14); unknownReason.u8(3); unknownReason.string("")
        unknownReason.string("granted"); unknownReason.string("none")
        XCTAssertNil(CheckerMessage(payload: unknownReason.bytes))
        XCTAssertNil(CheckerMessage(payload: CheckerMessage.handOn.payload + [0]))
    }

    func testALanguageTooLongToParseIsSentAsEnglish() {
        var r = request
        r.locale = String(repeating: "a", count: CheckProtocol.maximumNameLength + 1)
        guard case .authenticate(let back)? = ModuleMessage(payload: ModuleMessage.authenticate(r).payload) else { return XCTFail() }
        XCTAssertEqual(back.locale, "")
        XCTAssertEqual(back.language, "zh_CN:zh")
    }

    func testLongWordsAreNotRelayed() {
        var r = request
        r.words = [String(repeating: "a", count: CheckProtocol.maximumWordLength + 1)] + (0..<100).map { "touch_first=\($0 % 10)" }
        guard case .authenticate(let back)? = ModuleMessage(payload: ModuleMessage.authenticate(r).payload) else { return XCTFail() }
        XCTAssertEqual(back.words.count, CheckProtocol.maximumWords)
        XCTAssertLessThanOrEqual(ModuleMessage.authenticate(r).payload.count, CheckProtocol.maximumFrameLength)
    }
}
