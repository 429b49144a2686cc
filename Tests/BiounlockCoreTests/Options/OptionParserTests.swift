import XCTest
@testable import BiounlockCore

final class OptionParserTests: XCTestCase {
    func testDefaultsAreTheDocumentedOnes() {
        let o = Options()
        XCTAssertEqual(o.policy, .biometricsOrPasscode)
        XCTAssertEqual(o.sensor, .auto, "resolved when loaded: SensorSelectionTests")
        XCTAssertEqual(o.storePath, "/var/lib/biounlock/biounlock.db")
        XCTAssertEqual(o.configPath, "/etc/security/biounlock.conf")
        XCTAssertNil(o.simSocket)
        XCTAssertEqual(o.timeoutSeconds, 10)
        XCTAssertEqual(o.maxTries, 3)
        XCTAssertFalse(o.debug)
    }

    func testModuleArguments() {
        var o = Options()
        let d = OptionParser.apply(arguments: ["policy=biometrics", "sensor=simulated", "db=/x/y.db", "sim_socket=/run/s",
                                               "timeout=5", "max_tries=1", "debug"], to: &o)
        XCTAssertEqual(d, [])
        XCTAssertEqual(o.policy, .biometrics); XCTAssertEqual(o.sensor, .simulated); XCTAssertEqual(o.storePath, "/x/y.db")
        XCTAssertEqual(o.simSocket, "/run/s"); XCTAssertEqual(o.timeoutSeconds, 5); XCTAssertEqual(o.maxTries, 1)
        XCTAssertTrue(o.debug)
    }

    func testUnknownKeysAndBadValuesAreReportedAndIgnored() {
        var o = Options()
        let d = OptionParser.apply(arguments: ["nouserok", "policy=always", "timeout=-1", "timeout=99999999999999999999",
                                               "max_tries=0", "db=relative.db", "sensor="], to: &o)
        XCTAssertEqual(d.count, 7)
        XCTAssertEqual(d[0].kind, .unknownKey("nouserok"))
        XCTAssertEqual(d[1].kind, .invalidValue(key: "policy", accepts: "biometrics-or-passcode|biometrics"))
        XCTAssertEqual(o, Options(), "nothing invalid changes a setting")
        XCTAssertEqual(d[0].description, "argument 1: unknown option 'nouserok' ignored")
    }

    func testConfigFileSyntax() {
        var o = Options()
        let text = """
            # biounlock
            policy = biometrics   # trailing comment
            sensor=simulated\r
              timeout =  7
            debug
            bogus line with spaces
            config = /elsewhere
            frobnicate = 1
            """
        let d = OptionParser.apply(configText: text, path: "/etc/security/biounlock.conf", to: &o)
        XCTAssertEqual(o.policy, .biometrics); XCTAssertEqual(o.sensor, .simulated)
        XCTAssertEqual(o.timeoutSeconds, 7); XCTAssertTrue(o.debug)
        XCTAssertEqual(d.map(\.location), ["/etc/security/biounlock.conf:6", "/etc/security/biounlock.conf:7", "/etc/security/biounlock.conf:8"])
        XCTAssertEqual(d[1].kind, .notAllowedInConfigFile("config"))
    }

    func testArgumentsWinOverTheConfigFile() throws {
        let loaded = try Configuration.load(arguments: ["config=/c", "timeout=3"]) { path in
            XCTAssertEqual(path, "/c")
            return .success("timeout = 9\nmax_tries = 5\n")
        }.get()
        XCTAssertEqual(loaded.options.timeoutSeconds, 3)
        XCTAssertEqual(loaded.options.maxTries, 5)
        XCTAssertEqual(loaded.options.configPath, "/c")
    }

    func testMissingConfigIsFineButAnUntrustedOneIsRefused() {
        let missing = Configuration.load(arguments: []) { .failure(.missing($0)) }
        XCTAssertNotNil(try? missing.get())
        let named = try? Configuration.load(arguments: ["config=/nope"]) { .failure(.missing($0)) }.get()
        XCTAssertEqual(named?.notes.count, 1)
        let unsafe = Configuration.load(arguments: []) { .failure(.writableByOthers($0, mode: 0o666)) }
        XCTAssertEqual(unsafe.failureValue, .untrustedConfig(.writableByOthers("/etc/security/biounlock.conf", mode: 0o666)))
    }

    /// A file saved with a UTF-8 byte-order mark (some Windows editors do) used to lose its first
    /// setting: the mark became part of the first key, an unknown one.
    func testAByteOrderMarkDoesNotHideTheFirstSetting() throws {
        var o = Options()
        XCTAssertEqual(OptionParser.apply(configText: "\u{FEFF}policy = biometrics\ntimeout = 7\n", path: "/c", to: &o), [])
        XCTAssertEqual(o.policy, .biometrics)
        XCTAssertEqual(o.timeoutSeconds, 7)
        let loaded = try Configuration.load(arguments: []) { _ in .success(String(decoding: [0xEF, 0xBB, 0xBF] + Array("sensor = simulated\n".utf8), as: UTF8.self)) }.get()
        XCTAssertEqual(loaded.options.sensor, .simulated)
        XCTAssertEqual(loaded.diagnostics, [])
        var p = Options()
        XCTAssertEqual(OptionParser.apply(configText: "timeout = 7\n\u{FEFF}policy = biometrics\n", path: "/c", to: &p).map(\.kind),
                       [.unknownKey("???policy")], "only a mark at the very start is one")
    }

    /// A key given twice: the diagnostic names the value really in force, and where it came from.
    func testAKeyGivenTwiceSaysWhichValueIsKept() throws {
        var o = Options()
        let invalid = OptionParser.apply(arguments: ["timeout=5", "timeout=abc"], to: &o)
        XCTAssertEqual(o.timeoutSeconds, 5)
        XCTAssertEqual(invalid.map(\.description), ["argument 2: invalid value for 'timeout' (expects seconds, 1-120); keeping 5 (argument 1)"])

        o = Options()
        let again = OptionParser.apply(arguments: ["timeout=5", "debug", "timeout=7"], to: &o)
        XCTAssertEqual(o.timeoutSeconds, 7)
        XCTAssertEqual(again.map(\.description), ["argument 3: 'timeout' given again (also argument 1); using 7 (argument 3), not 5"])

        o = Options()
        XCTAssertEqual(OptionParser.apply(arguments: ["timeout=abc"], to: &o).map(\.description),
                       ["argument 1: invalid value for 'timeout' (expects seconds, 1-120); keeping the default"])

        let text = "timeout = 9\nmax_tries = 2\nmax_tries = 4\n"
        let loaded = try Configuration.load(arguments: ["config=/c", "timeout=-1"]) { _ in .success(text) }.get()
        XCTAssertEqual(loaded.options.timeoutSeconds, 9)
        XCTAssertEqual(loaded.options.maxTries, 4)
        XCTAssertEqual(loaded.diagnostics.map(\.description), [
            "/c:3: 'max_tries' given again (also /c:2); using 4 (/c:3), not 2",
            "argument 2: invalid value for 'timeout' (expects seconds, 1-120); keeping 9 (/c:1)",
        ])
        XCTAssertEqual(try Configuration.load(arguments: ["config=/c", "timeout=3"]) { _ in .success(text) }.get().diagnostics.count, 1,
                       "an argument over the file is the documented order, not a repeat")
    }

    func testSanitizedForLogKeepsOneShortPrintableLine() {
        XCTAssertEqual(sanitizedForLog("a\nb\u{1b}[31m"), "a?b?[31m")
        XCTAssertEqual(sanitizedForLog(String(repeating: "x", count: 100)).count, 65)
    }

    /// split and trim work on bytes; they agree with the Character versions they replaced on
    /// every text where "=" and the blanks are characters of their own (not followed by a
    /// combining mark, as in no option anyone writes).
    func testSplitAndTrimAgreeWithCharacterSearch() {
        let alphabet = ["a", "=", " ", "\t", "\r", "é", "🙂", "z", "==", "ß", "\u{10FFFF}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...10, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "" }.joined()
            let expected: (String, String?) = text.firstIndex(of: "=").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, nil)
            let got = OptionParser.split(text)
            XCTAssertEqual(got.0, expected.0, text.debugDescription)
            XCTAssertEqual(got.1, expected.1, text.debugDescription)
            var trimmed = Substring(text)
            while let c = trimmed.first, c == " " || c == "\t" || c == "\r" { trimmed.removeFirst() }
            while let c = trimmed.last, c == " " || c == "\t" || c == "\r" { trimmed.removeLast() }
            XCTAssertEqual(OptionParser.trim(text), String(trimmed), text.debugDescription)
        }
        XCTAssertTrue(OptionParser.split("timeout").1 == nil)
        XCTAssertEqual(OptionParser.split("db=/a=b").1, "/a=b")
        XCTAssertEqual(OptionParser.trim(" \t value \r"), "value")
    }

    /// The config file's lines are found on bytes; they are the lines the Character split found,
    /// CR LF and the Unicode line separators included, and so are the comments cut at "#".
    func testConfigLinesAreTheLinesOfTheCharacterSplit() {
        let alphabet = ["a", "=", " ", "#", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}",
                        "\u{2027}", "\u{84}", "é", "\u{FEFF}", "🙂", "\n\r"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "" }.joined()
            let expected = Substring(text).split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            var lines: [Substring] = []
            let bytes = Array(text.utf8)
            bytes.withUnsafeBufferPointer { buffer in
                OptionParser.forEachLineRange(in: buffer) { lines.append(Substring(String(decoding: bytes[$0..<$1], as: UTF8.self))) }
            }
            XCTAssertEqual(lines, expected, text.debugDescription)
            // The settings: each line's text before a '#', trimmed, when not empty, with its number.
            let settings = expected.enumerated().compactMap { (index, line) -> String? in
                let beforeComment = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let trimmed = OptionParser.trim(String(beforeComment))
                return trimmed.isEmpty ? nil : "\(index + 1):\(trimmed)"
            }
            var found: [String] = []
            OptionParser.forEachSetting(of: Substring(text)) { found.append("\($0):\($1)") }
            XCTAssertEqual(found, settings, text.debugDescription)
        }
        // And the whole file: the same options and diagnostics, line numbers included.
        let text = "# c\r\ntimeout = 7\r\n\rmax_tries=2 # two\u{2028}bogus\n = 1\nreason = a=b#c\n"
        var options = Options()
        let diagnostics = OptionParser.apply(configText: text, path: "f", to: &options)
        XCTAssertEqual(options.timeoutSeconds, 7)
        XCTAssertEqual(options.maxTries, 2)
        XCTAssertEqual(options.reason, "a=b")
        XCTAssertEqual(diagnostics.map(\.location), ["f:5", "f:6"])
    }

    func testNewOptionsParse() {
        var o = Options()
        let d = OptionParser.apply(arguments: ["bio_lockout=3", "bio_unlock_time=1h", "passcode_lockout=7", "require_passcode=boot",
                                               "remote=allow", "lid=ignore", "lid_path=/t/lid", "lid_usb_path=/t/usb", "lid_reader_ids=/t/ids", "logind_path=/t/s",
                                               "reason=Approve %s with a finger"], to: &o)
        XCTAssertEqual(d, [])
        XCTAssertEqual(o.biometricLockout, 3); XCTAssertEqual(o.biometricUnlockSeconds, 3600); XCTAssertEqual(o.passcodeLockout, 7)
        XCTAssertEqual(o.requirePasscode.description, "boot"); XCTAssertEqual(o.remote, .allow); XCTAssertEqual(o.lid, .ignore)
        XCTAssertEqual(o.lidUSBPath, "/t/usb"); XCTAssertEqual(o.lidReaderIDsPath, "/t/ids")
        XCTAssertEqual(OptionParser.apply(arguments: ["lid_usb_path=relative", "lid_reader_ids=x"], to: &o).count, 2, "absolute paths only")
        XCTAssertEqual(Messages.touchPrompt(template: o.reason, service: "sudo"), "Approve sudo with a finger")
        XCTAssertEqual(OptionParser.apply(arguments: ["reason=bad\u{7}", "remote=maybe", "bio_lockout=0", "touch_first=121"], to: &o).count, 4)
        XCTAssertEqual(OptionParser.apply(arguments: ["remote=skip", "touch_first=0"], to: &o), [])
        XCTAssertEqual(o.remote, .passcode, "0.1.0's remote=skip is remote=passcode")
        XCTAssertEqual(o.touchFirstSeconds, 0)
        XCTAssertEqual(Options().remote, .ignore, "remote sessions are left alone by default")
        XCTAssertEqual(Options().touchFirstSeconds, 2)
    }
}

extension Result {
    var failureValue: Failure? { if case .failure(let f) = self { return f }; return nil }
}
