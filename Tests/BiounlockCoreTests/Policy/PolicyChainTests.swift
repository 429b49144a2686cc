import XCTest
@testable import BiounlockCore

/// The chain's decisions, one test per row of PRODUCT.md's return-code table and per rule of
/// the finger and passcode steps. These use in-memory fakes; the same rows run through real
/// libpam against the built module in PamBiounlockTests.
final class PolicyChainTests: XCTestCase {
    // A cheap Argon2id hash keeps the unit tests fast; the shipped cost is tested in PasscodeTests.
    static let pinHash = try! Passcode.hash(Secret(bytes: Array("2468".utf8))!, opsLimit: 1, memLimit: 8192)

    var store = MemoryStore()
    var conversation = ScriptedConversation()
    var logger = MemoryLogger()
    var options = Options()

    override func setUp() {
        options.sensor = .simulated
        store.users["alice"] = UserRecord(
            name: "alice", enabled: true,
            templates: [Template(finger: .rightIndex, sensor: .simulated, data: Array("alice-ri".utf8), created: 1)],
            passcode: StoredPasscode(hash: PolicyChainTests.pinHash, kind: .pin))
    }

    func run(_ sensor: ScriptedSensor?, user: String = "alice", service: String = "sudo", silent: Bool = false,
             storeResult: Result<AuthStore, StoreFailure>? = nil) -> Decision {
        let store = self.store
        let chain = PolicyChain(
            options: options, conversation: conversation, logger: logger, sensors: ScriptedSensors(sensor: sensor),
            openStore: { storeResult ?? .success(store) },
            lookupAccount: { ["alice", "bob", "root"].contains($0) ? Account(name: $0, uid: 1000) : nil },
            clock: FixedClock())
        return chain.run(AuthRequest(user: user, service: service, tty: "pts/1", silent: silent))
    }

    static func secret(_ s: String) -> ConversationReply { .answer(Secret(bytes: Array(s.utf8))!) }

    func testMatchingTouchSucceedsWithoutAPrompt() {
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))
        XCTAssertEqual(conversation.transcript, ["INFO: Touch the fingerprint reader to authenticate for sudo"])
        XCTAssertEqual(sensor.closed, 1)
        XCTAssertEqual(store.events.map(\.outcome), ["success"])
        XCTAssertEqual(store.events.first?.reason, "finger-matched")
    }

    func testUserWhoHasNotEnabledIsIgnoredWithoutAnyMessage() {
        store.users["alice"]?.enabled = false
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .notEnabled)
        XCTAssertEqual(conversation.transcript, [])
        XCTAssertEqual(sensor.verifyCalls, 0)
        XCTAssertEqual(run(sensor, user: "bob").outcome, .notEnabled, "no row at all")
    }

    func testPerServiceOverrideWinsOverTheUsersToggle() {
        store.users["alice"]?.serviceOverrides = ["sudo": false]
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "sudo").outcome, .notEnabled)
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "login").outcome, .success(.fingerprint))
        store.users["alice"]?.enabled = false
        store.users["alice"]?.serviceOverrides = ["su": true]
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "su").outcome, .success(.fingerprint))
    }

    func testUnknownUserIsUserUnknown() {
        XCTAssertEqual(run(ScriptedSensor([]), user: "mallory").outcome, .userUnknown)
        XCTAssertEqual(conversation.transcript, [])
    }

    func testStoreThatCannotOpenOrReadIsUnavailableNeverIgnoreOrSuccess() {
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), storeResult: .failure(StoreFailure("missing"))).outcome, .unavailable)
        XCTAssertTrue(logger.text.contains("store unavailable"))
        store.failReads = true
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .unavailable)
    }

    func testWrongFingersThenRightPasscode() {
        conversation.replies = [Self.secret("2468")]
        let sensor = ScriptedSensor([.noMatch, .noMatch, .noMatch])
        XCTAssertEqual(run(sensor).outcome, .success(.passcode))
        XCTAssertEqual(conversation.transcript, [
            "INFO: Touch the fingerprint reader to authenticate for sudo",
            "ERROR: Fingerprint not recognised. 2 tries left.",
            "ERROR: Fingerprint not recognised. 1 try left.",
            "ERROR: Fingerprint not recognised.",
            "PROMPT: biounlock PIN for sudo (Enter alone for your password): ",
        ])
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 0, "a passcode success clears the finger counter")
    }

    func testWrongFingersThenWrongPasscodeIsDeniedAndCounted() {
        conversation.replies = [Self.secret("0000")]
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .noMatch, .noMatch])).outcome, .denied)
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 3)
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 1)
        XCTAssertEqual(conversation.transcript.last, "ERROR: Wrong passcode.")
    }

    func testMaxTriesUnderBiometricsPolicy() {
        options.policy = .biometrics
        options.maxTries = 2
        let sensor = ScriptedSensor([.noMatch, .noMatch, .match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .maxTries)
        XCTAssertEqual(sensor.verifyCalls, 2)
        XCTAssertFalse(conversation.transcript.contains { $0.hasPrefix("PROMPT") }, "biometrics policy never asks for biounlock's passcode")
    }

    func testRetryIsNotAFailure() {
        options.maxTries = 1
        let sensor = ScriptedSensor([.retry(.centerFinger), .retry(.tooShort), .match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))
        XCTAssertTrue(conversation.transcript.contains("INFO: Try again: centre your finger on the reader."))
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 0)
    }

    func testUnavailableReaderOrTimeoutFallsBackWithoutCounting() {
        for result in [VerifyResult.unavailable(SensorUnavailable("unplugged")), .timedOut] {
            conversation.replies = [.empty]
            XCTAssertEqual(run(ScriptedSensor([result])).outcome, .unavailable, "\(result): Enter alone goes to the password")
            XCTAssertEqual(store.users["alice"]?.biometricFailures, 0)
            XCTAssertEqual(store.users["alice"]?.passcodeFailures, 0)
            options.policy = .biometrics
            XCTAssertEqual(run(ScriptedSensor([result])).outcome, .unavailable)
            options.policy = .biometricsOrPasscode
        }
    }

    func testNoReaderUnderBiometricsPolicyIsUnavailable() {
        options.policy = .biometrics
        XCTAssertEqual(run(nil).outcome, .unavailable)
        XCTAssertEqual(conversation.transcript, ["ERROR: Fingerprint reader not available."])
    }

    func testNothingEnrolledGoesStraightToThePasscode() {
        store.users["alice"]?.templates = []
        conversation.replies = [Self.secret("2468")]
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.passcode))
        XCTAssertEqual(sensor.verifyCalls, 0)
        options.policy = .biometrics
        XCTAssertEqual(run(sensor).outcome, .unavailable)
    }

    func testTemplatesOfAnotherSensorDoNotCount() {
        store.users["alice"]?.templates[0].sensor = .libfprint
        options.policy = .biometrics
        let decision = run(ScriptedSensor([.match(.rightIndex)]))
        XCTAssertEqual(decision, Decision(.unavailable, .nothingEnrolled, method: .fingerprint))
    }

    func testNoPasscodeSetFallsToThePassword() {
        store.users["alice"]?.passcode = nil
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .noMatch, .noMatch])).outcome, .unavailable)
        XCTAssertFalse(conversation.transcript.contains { $0.hasPrefix("PROMPT") })
    }

    func testConversationFailureIsNeverSuccess() {
        conversation.replies = [.failed]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .conversationFailed)
        conversation.replies = [.tooLong]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .denied)
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 1)
    }

    func testCorruptStoredHashIsUnavailableNotSuccess() {
        store.users["alice"]?.passcode = StoredPasscode(hash: "$argon2id$v=19$m=999999999,t=2,p=1$AAAA$BBBB", kind: .pin)
        conversation.replies = [Self.secret("2468")]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .unavailable)
        XCTAssertTrue(logger.text.contains("biounlock passcode set alice"))
    }

    func testSilentSuppressesNoticesButNotTheExchange() {
        conversation.replies = [Self.secret("0000")]
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .retry(.tooShort), .unavailable(SensorUnavailable("gone"))]), silent: true).outcome, .denied)
        XCTAssertEqual(conversation.transcript, [
            "INFO: Touch the fingerprint reader to authenticate for sudo",
            "ERROR: Fingerprint not recognised. 2 tries left.",
            "INFO: Try again: the touch was too short.",
            "PROMPT: biounlock PIN for sudo (Enter alone for your password): ",
        ], "no 'reader not available', no 'wrong passcode' under PAM_SILENT")
    }

    func testAFailedMatchThatCannotBeCountedStopsTheFingerStep() {
        store.failWrites = true
        conversation.replies = [Self.secret("2468")]
        let sensor = ScriptedSensor([.noMatch, .match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.passcode), "the decision stands although nothing can be written")
        XCTAssertEqual(sensor.verifyCalls, 1, "no second guess after an uncounted failure")
    }

    func testAuditEventHoldsNoSecret() throws {
        conversation.replies = [Self.secret("2468")]
        _ = run(ScriptedSensor([.timedOut]))
        let event = try XCTUnwrap(store.events.last)
        XCTAssertEqual(event.user, "alice"); XCTAssertEqual(event.service, "sudo"); XCTAssertEqual(event.tty, "pts/1")
        XCTAssertEqual(event.method, .passcode); XCTAssertEqual(event.reason, "passcode-accepted")
        XCTAssertFalse("\(event)".contains("2468"))
        XCTAssertFalse(logger.text.contains("2468"))
    }
}
