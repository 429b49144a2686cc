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

    func testSanitizedForLogKeepsOneShortPrintableLine() {
        XCTAssertEqual(sanitizedForLog("a\nb\u{1b}[31m"), "a?b?[31m")
        XCTAssertEqual(sanitizedForLog(String(repeating: "x", count: 100)).count, 65)
    }
}

extension Result {
    var failureValue: Failure? { if case .failure(let f) = self { return f }; return nil }
}
