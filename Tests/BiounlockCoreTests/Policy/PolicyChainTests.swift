import XCTest
@testable import BiounlockCore
import BiounlockSystem

/// The chain's decisions, one test per row of docs/DESIGN.md's return-code table and per rule of
/// the finger and passcode steps. These use in-memory fakes; the same rows run through real
/// libpam against the built module in PamBiounlockTests.
final class PolicyChainTests: XCTestCase {
    // A cheap Argon2id hash keeps the unit tests fast; the shipped cost is tested in PasscodeTests.
    static let pinHash = try! Passcode.hash(Secret(bytes: Array("2468".utf8))!, opsLimit: 1, memLimit: 8192)

    var store = MemoryStore()
    var conversation = ScriptedConversation()
    var logger = MemoryLogger()
    var options = Options()

    var facts = SessionFacts()
    var bootID: String? = "boot-1"
    var clock = FixedClock()

    override func setUp() {
        options.sensor = .simulated
        options.requirePasscode = .none // the rules have their own tests below
        store.users["alice"] = UserRecord(
            name: "alice", enabled: true,
            templates: [Template(finger: .rightIndex, sensor: .simulated, data: Array("alice-ri".utf8), created: 1)],
            passcode: StoredPasscode(hash: PolicyChainTests.pinHash, kind: .pin))
        store.users["alice"]?.uid = 1000 // alice's account (lookupAccount below)
    }

    func run(_ sensor: ScriptedSensor?, user: String = "alice", service: String = "sudo", silent: Bool = false,
             storeResult: Result<AuthStore, StoreFailure>? = nil, accounts: PolicyChain.AccountLookup? = nil) -> Decision {
        let store = self.store
        let chain = PolicyChain(
            options: options, conversation: conversation, logger: logger, sensors: ScriptedSensors(sensor: sensor),
            openStore: { storeResult ?? .success(store) },
            lookupAccount: accounts ?? { .success(["alice", "bob", "root"].contains($0) ? Account(name: $0, uid: 1000) : nil) },
            clock: clock, sessionFacts: { self.facts }, bootID: { self.bootID })
        return chain.run(AuthRequest(user: user, service: service, tty: "pts/1", silent: silent))
    }

    static func secret(_ s: String) -> ConversationReply { .answer(Secret(bytes: Array(s.utf8))!) }

    /// The prompts a PIN user sees without a terminal (Messages' own strings, for the record).
    static let dialogPrompt = "PROMPT: PIN or password for running a command as root, or touch the reader, then press Enter: "
    static let typePrompt = "PROMPT: PIN or password for running a command as root: "
    static let touchRequest = "INFO: Touch the fingerprint reader to authenticate for running a command as root"

    func testMatchingTouchSucceedsWithoutAPrompt() {
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))
        XCTAssertEqual(conversation.transcript, [Self.touchRequest])
        XCTAssertEqual(sensor.waits, ["window"], "the touch came within touch_first: no prompt at all")
        XCTAssertEqual(sensor.closed, 1)
        XCTAssertEqual(store.events.map(\.outcome), ["success"])
        XCTAssertEqual(store.events.first?.reason, "finger-matched")
        XCTAssertEqual(conversation.handedOver, [], "nothing handed on after a success")
    }

    /// After a match the store is closed (its last reference let go) before the chain waits for
    /// the reader's release: the store's close runs while the helper releases the reader, not
    /// after it. Without a match the reading session keeps it until the reader is closed.
    func testAMatchClosesTheStoreBeforeWaitingForTheReader() {
        let journal = Journal()
        let sensor = ScriptedSensor([.match(.rightIndex)])
        sensor.journal = journal
        let users = store.users
        // A store only the chain holds (made when it opens one), as the module's is.
        let chain = PolicyChain(
            options: options, conversation: conversation, logger: logger, sensors: ScriptedSensors(sensor: sensor),
            openStore: {
                let own = MemoryStore()
                own.users = users
                own.journal = journal
                own.journalsItsEnd = true
                return .success(own)
            },
            lookupAccount: { .success($0 == "alice" ? Account(name: $0, uid: 1000) : nil) },
            clock: clock, sessionFacts: { self.facts }, bootID: { self.bootID })
        XCTAssertEqual(chain.run(AuthRequest(user: "alice", service: "sudo", tty: "pts/1", silent: false)).outcome, .success(.fingerprint))
        XCTAssertEqual(journal.entries, ["reader: closing started", "store: success recorded", "store: closed", "reader: closed"])
    }

    /// After a match the reader's release starts at once and ends after the success is recorded
    /// (the helper releases the reader while the store writes), before the transaction returns;
    /// every other end releases it before the decision's rows are written, as before.
    func testAMatchReleasesTheReaderWhileTheSuccessIsRecorded() {
        let journal = Journal()
        store.journal = journal
        let sensor = ScriptedSensor([.match(.rightIndex)])
        sensor.journal = journal
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))
        XCTAssertEqual(journal.entries, ["reader: closing started", "store: success recorded", "reader: closed"])
        XCTAssertEqual(sensor.closed, 1, "closed once")

        let timeout = Journal()
        let silent = ScriptedSensor([.timedOut])
        silent.journal = timeout
        store.journal = timeout
        _ = run(silent)
        XCTAssertEqual(timeout.entries, ["reader: closed"], "no touch: released when the reader ended, nothing to overlap")
    }

    /// NSS could not say whether the name has an account (a directory service down): not an
    /// unknown user -- that would tell the stack something false -- but unavailable, logged,
    /// with nothing asked, counted or recorded, and no password success to note.
    func testAnAccountLookupThatFailsIsUnavailableNotUnknown() {
        let decision = run(ScriptedSensor([.match(.rightIndex)]), storeResult: nil, accounts: { _ in
            .failure(Errno(.ioError, call: "getpwnam_r"))
        })
        XCTAssertEqual(decision.outcome, .unavailable)
        XCTAssertEqual(decision.reason, .accountsUnavailable)
        XCTAssertFalse(PasswordWitness.handsOnToPassword(decision), "no account checked: no password success recorded for the name")
        XCTAssertEqual(conversation.transcript, [], "nothing shown or asked")
        XCTAssertEqual(store.events.count, 0, "no audit row for a name that could not be looked up")
        XCTAssertTrue(logger.lines.contains { $0.0 == .error && $0.1.contains("cannot look up alice in the account database: getpwnam_r: Input/output error") },
                      logger.lines.map(\.1).joined(separator: "\n"))
        XCTAssertEqual(run(nil, user: "nobody-here", accounts: { _ in .success(nil) }).outcome, .userUnknown, "no such account: unknown, as before")
    }

    func testASuccessResetsTheCountersAndWritesItsAuditRowInOneTransaction() {
        store.users["alice"]?.biometricFailures = 2
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint))
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 0)
        XCTAssertEqual(store.transactions, 1)
        XCTAssertEqual(store.eventsInTransaction, 1)

        conversation.replies = [Self.secret("0000")]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .unavailable)
        XCTAssertEqual(store.transactions, 1, "a failure is counted on its own, at once")
        XCTAssertEqual(store.events.map(\.reason), ["finger-matched", "wrong-passcode"])

        // A right passcode: the counters cleared and the audit row written in one commit, after
        // the count (AuthStore.attemptPasscode's onAccepted), and the row written once.
        conversation.replies = [Self.secret("2468")]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .success(.passcode))
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 0)
        XCTAssertEqual(store.transactions, 2)
        XCTAssertEqual(store.eventsInTransaction, 2)
        XCTAssertEqual(store.events.map(\.reason), ["finger-matched", "wrong-passcode", "passcode-accepted"])
    }

    func testUserWhoHasNotEnabledIsIgnoredWithoutAnyMessage() {
        store.users["alice"]?.enabled = false
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .ignore)
        XCTAssertEqual(conversation.transcript, [])
        XCTAssertEqual(sensor.verifyCalls, 0)
        XCTAssertEqual(run(sensor, user: "bob").outcome, .ignore, "no row at all")
        // Stepping aside writes nothing: no audit row (sudo would pay a synced write for every
        // user who never opted in), only a debug-level log line.
        XCTAssertEqual(store.events, [])
        XCTAssertTrue(logger.text.contains("outcome=ignore reason=not-enabled"), logger.text)
    }

    /// The name alice now belongs to another account than the one the row was made for (the old
    /// alice was deleted and the name given to someone else): the new alice inherits neither the
    /// fingers nor the PIN. As for a user who has not enabled biometric unlock, plus a warning.
    func testARowOfAnotherAccountIsNotEnabled() {
        for stale: UInt32? in [1001, nil] {
            store.users["alice"]?.uid = stale
            conversation = ScriptedConversation([Self.secret("2468")])
            let sensor = ScriptedSensor([.match(.rightIndex)])
            let decision = run(sensor)
            XCTAssertEqual(decision.outcome, .ignore)
            XCTAssertEqual(decision.reason, .recordOfAnotherAccount)
            XCTAssertEqual(conversation.transcript, [], "nothing asked")
            XCTAssertEqual(sensor.verifyCalls, 0)
            XCTAssertEqual(store.events, [])
            XCTAssertEqual(store.users["alice"]?.passcodeFailures, 0, "nothing counted")
            XCTAssertTrue(logger.lines.contains { $0.0 == .warning && $0.1.contains("belongs to \(stale.map { "uid \($0)" } ?? "no account"), but alice is uid 1000 now")
                && $0.1.contains("biounlock forget alice") }, logger.text)
        }
        store.users["alice"]?.uid = 1000
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint), "its own account's row")
    }

    /// Off for this service, on for another (`disable --service gdm-password` beside the greeter's
    /// fingerprint stack): PAM_IGNORE with nothing asked or written, and the password that follows
    /// is witnessed (pam_sm_setcred records it). Off everywhere, or a row of another account: not.
    func testAServiceBiounlockIsOffForWitnessesThePasswordOfAnEnabledUser() {
        store.users["alice"]?.serviceOverrides = ["gdm-password": false]
        let off = run(ScriptedSensor([.match(.rightIndex)]), service: "gdm-password")
        XCTAssertEqual(off, Decision(.ignore, .disabledForService))
        XCTAssertTrue(PasswordWitness.handsOnToPassword(off))
        XCTAssertEqual(conversation.transcript, [])
        XCTAssertEqual(store.events, [], "no audit row: biounlock stayed out")
        store.users["alice"]?.uid = 4242
        XCTAssertEqual(run(nil, service: "gdm-password").reason, .notEnabled, "another account's row: nothing to witness")
        store.users["alice"]?.uid = 1000
        store.users["alice"]?.enabled = false
        store.users["alice"]?.serviceOverrides = [:]
        let nowhere = run(nil, service: "gdm-password")
        XCTAssertEqual(nowhere, Decision(.ignore, .notEnabled))
        XCTAssertFalse(PasswordWitness.handsOnToPassword(nowhere), "off everywhere: nothing of theirs is written")
        store.users["alice"]?.serviceOverrides = ["gdm-fingerprint": true]
        XCTAssertEqual(run(nil, service: "gdm-password").reason, .disabledForService, "on through an override alone")
        XCTAssertFalse(PasswordWitness.handsOnToPassword(Decision(.ignore, .remoteSession)))
        XCTAssertFalse(PasswordWitness.handsOnToPassword(Decision(.ignore, .recordOfAnotherAccount)))
    }

    func testPerServiceOverrideWinsOverTheUsersToggle() {
        store.users["alice"]?.serviceOverrides = ["sudo": false]
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "sudo").outcome, .ignore)
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "login").outcome, .success(.fingerprint))
        store.users["alice"]?.enabled = false
        store.users["alice"]?.serviceOverrides = ["su": true]
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "su").outcome, .success(.fingerprint))
    }

    /// An unknown name does what a known user without biometric unlock does -- one lookup in the
    /// store, no Argon2id, nothing shown, no audit row -- so neither time nor text tells them apart.
    func testUnknownUserIsUserUnknownAfterTheSameWorkAsNotEnabled() {
        XCTAssertEqual(run(ScriptedSensor([]), user: "mallory").outcome, .userUnknown)
        XCTAssertEqual(store.loads, 1)
        store.users["alice"]?.enabled = false
        XCTAssertEqual(run(ScriptedSensor([])).outcome, .ignore)
        XCTAssertEqual(store.loads, 2)
        XCTAssertEqual(conversation.transcript, [])
        XCTAssertEqual(store.events, [])
    }

    func testStoreThatCannotOpenOrReadIsUnavailableNeverIgnoreOrSuccess() {
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), storeResult: .failure(StoreFailure("missing"))).outcome, .unavailable)
        XCTAssertTrue(logger.text.contains("store unavailable"))
        store.failReads = true
        logger.lines = []
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .unavailable)
        XCTAssertTrue(logger.text.contains("store unavailable: read failed"), logger.text)
        XCTAssertEqual(store.events, [], "no audit row is tried in a store that could not be read")
        XCTAssertFalse(logger.text.contains("cannot write audit event"), logger.text)
    }

    func testWrongFingersThenRightPasscode() {
        conversation.replies = [Self.secret("2468")]
        let sensor = ScriptedSensor([.noMatch, .noMatch, .noMatch])
        XCTAssertEqual(run(sensor).outcome, .success(.passcode))
        XCTAssertEqual(conversation.transcript, [
            Self.touchRequest,
            "ERROR: Fingerprint not recognised. 2 tries left.",
            "ERROR: Fingerprint not recognised. 1 try left.",
            "ERROR: Fingerprint not recognised.",
            Self.typePrompt,
        ])
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 0, "a passcode success clears the finger counter")
    }

    /// A wrong passcode is counted, shown nothing, and handed on: the password module decides
    /// whether it was the Unix password (sshd's password mode and lockers answer every prompt with it).
    func testAWrongPasscodeIsCountedAndHandedOnToThePassword() {
        conversation.replies = [Self.secret("0000")]
        let decision = run(ScriptedSensor([.noMatch, .noMatch, .noMatch]))
        XCTAssertEqual(decision, Decision(.unavailable, .wrongPasscode, method: .passcode))
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 3)
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 1)
        XCTAssertEqual(conversation.transcript.last, Self.typePrompt, "no 'wrong passcode': the caller reports the final failure")
        XCTAssertEqual(conversation.handedOver, ["0000"])
        XCTAssertTrue(PasswordWitness.handsOnToPassword(decision), "a Unix-password success clears the count (setcred)")
    }

    /// Text that cannot be the user's passcode (letters for a PIN, a broken pattern) is the Unix
    /// password: handed on at once, no Argon2id, not counted.
    func testTextThatCannotBeThePasscodeIsHandedOnUncounted() {
        for typed in ["alice-unix-Pw-7", "123", "12 34"] {
            conversation.replies = [Self.secret(typed)]
            XCTAssertEqual(run(ScriptedSensor([.timedOut])), Decision(.unavailable, .passwordHandedOver, method: .password), typed)
        }
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 0)
        XCTAssertEqual(conversation.handedOver, ["alice-unix-Pw-7", "123", "12 34"])
    }

    /// The one-secret callers: the Unix password given to the first prompt goes on to pam_unix.
    func testThePasswordGivenToTheFirstPromptIsHandedOn() {
        conversation.replies = [Self.secret("alice-unix-Pw-7")]
        XCTAssertEqual(run(ScriptedSensor([.interrupted])), Decision(.unavailable, .passwordHandedOver, method: .password))
        XCTAssertEqual(conversation.transcript, [Self.touchRequest, Self.dialogPrompt])
        XCTAssertEqual(conversation.handedOver, ["alice-unix-Pw-7"])
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
        XCTAssertEqual(conversation.transcript, ["ERROR: No fingerprint enrolled.", Self.typePrompt])
        XCTAssertEqual(sensor.verifyCalls, 0)
        options.policy = .biometrics
        XCTAssertEqual(run(sensor).outcome, .unavailable)
    }

    func testTemplatesOfAnotherSensorDoNotCount() {
        store.users["alice"]?.templates[0].sensor = .libfprint
        options.policy = .biometrics
        let decision = run(ScriptedSensor([.match(.rightIndex)]))
        XCTAssertEqual(decision, Decision(.unavailable, .nothingEnrolled))
    }

    func testNoPasscodeSetFallsToThePassword() {
        store.users["alice"]?.passcode = nil
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .noMatch, .noMatch])).outcome, .unavailable)
        XCTAssertFalse(conversation.transcript.contains { $0.hasPrefix("PROMPT") }, "nothing biounlock could take: pam_unix asks")
    }

    func testConversationFailureIsNeverSuccess() {
        conversation.replies = [.failed]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .conversationFailed)
        conversation.replies = [.tooLong]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])), Decision(.unavailable, .passcodeTooLong))
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 0, "longer than any passcode: not a guess")
        XCTAssertEqual(conversation.handedOver, [])
    }

    func testCorruptStoredHashIsUnavailableNotSuccess() {
        store.users["alice"]?.passcode = StoredPasscode(hash: "$argon2id$v=19$m=999999999,t=2,p=1$AAAA$BBBB", kind: .pin)
        conversation.replies = [Self.secret("2468")]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .unavailable)
        XCTAssertTrue(logger.text.contains("biounlock passcode set alice"))
    }

    func testSilentSuppressesNoticesButNotTheExchange() {
        conversation.replies = [Self.secret("0000")]
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .retry(.tooShort), .unavailable(SensorUnavailable("gone"))]), silent: true).outcome, .unavailable)
        XCTAssertEqual(conversation.transcript, [
            Self.touchRequest,
            "ERROR: Fingerprint not recognised. 2 tries left.",
            "INFO: Try again: the touch was too short.",
            Self.typePrompt,
        ], "no 'reader not available' under PAM_SILENT")
    }

    func testAFailedMatchThatCannotBeCountedStopsTheFingerStep() {
        store.failWrites = true
        conversation.replies = [Self.secret("2468")]
        let sensor = ScriptedSensor([.noMatch, .match(.rightIndex)])
        XCTAssertEqual(run(sensor), Decision(.unavailable, .storeUnavailable, method: .passcode),
                       "a passcode attempt that cannot be counted is not made either: the password decides")
        XCTAssertEqual(sensor.verifyCalls, 1, "no second guess after an uncounted failure")
    }

    /// Attempts made at the same moment each read "not locked"; the count taken before hashing
    /// still stops them at the threshold (scripts/bench found 64 parallel guesses all checked).
    func testAttemptsThatRaceTheLockoutAreRefusedByTheAtomicCount() {
        options.passcodeLockout = 2
        store.users["alice"]?.passcodeFailures = 1
        store.users["alice"]?.passcodeFailureAt = clock.seconds
        let stale = store.users["alice"]! // what every concurrent attempt read at its start
        store.users["alice"]?.passcodeFailures = 2 // another attempt counted meanwhile: locked now
        let chain = PolicyChain(options: options, conversation: conversation, logger: logger, sensors: ScriptedSensors(sensor: nil),
                                openStore: { .success(self.store) }, clock: clock)
        let decision = chain.decideTyped(Secret(bytes: Array("2468".utf8))!, user: stale, passcodeLocked: false,
                                         request: AuthRequest(user: "alice", service: "sudo"), store: store)
        XCTAssertEqual(decision, Decision(.unavailable, .passcodeLocked, method: .passcode), "even the right PIN is not checked")
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 2, "a refused attempt is not counted")
        XCTAssertEqual(conversation.transcript, ["ERROR: PIN locked for 1 min: use your password."])
    }

    /// Every passcode attempt is counted before it is checked: one that cannot be counted would be
    /// a free guess (a read-only or full store, a lock held too long, RLIMIT_FSIZE set by the caller).
    func testAPasscodeAttemptThatCannotBeCountedIsNotChecked() {
        store.failWrites = true
        for pin in ["2468", "1357"] {
            conversation.replies = [Self.secret(pin)]
            let decision = run(ScriptedSensor([.timedOut]))
            XCTAssertEqual(decision.outcome, .unavailable, "PIN \(pin)")
            XCTAssertEqual(decision.reason, .storeUnavailable)
        }
        XCTAssertTrue(logger.text.contains("cannot count the passcode attempt of alice"), logger.text)
        XCTAssertFalse(store.events.contains { $0.outcome == "success" })
    }

    func testAMatchThatCannotBeRecordedStillSucceeds() {
        store.failWrites = true
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint), "the decision stands")
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

/// Callers without a terminal: the touch request for touch_first seconds, then a prompt behind
/// which the reader keeps waiting.
extension PolicyChainTests {
    func testTheReaderKeepsWaitingBehindThePromptAndEnterAloneWaitsForIt() {
        conversation.replies = [.empty]
        let sensor = ScriptedSensor([.interrupted, .noMatch, .match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))
        XCTAssertEqual(conversation.transcript, [Self.touchRequest, Self.dialogPrompt, "ERROR: Fingerprint not recognised. 2 tries left."])
        XCTAssertEqual(sensor.waits, ["window", "reader", "reader"], "after Enter alone: until the reader's own deadline")
    }

    func testOnceTheReaderGaveUpThePromptTakesThePasscodeOrThePassword() {
        conversation.replies = [.empty, Self.secret("2468")]
        XCTAssertEqual(run(ScriptedSensor([.interrupted, .timedOut])).outcome, .success(.passcode))
        XCTAssertEqual(conversation.transcript, [Self.touchRequest, Self.dialogPrompt, "INFO: No touch in time.", Self.typePrompt])
        conversation = ScriptedConversation([.empty, .empty])
        XCTAssertEqual(run(ScriptedSensor([.interrupted, .timedOut])), Decision(.unavailable, .timedOut, method: .fingerprint),
                       "Enter alone once the reader is done: the password")
    }

    func testTouchFirstZeroPutsThePromptUpAtOnce() {
        options.touchFirstSeconds = 0
        conversation.replies = [.empty]
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))
        XCTAssertEqual(conversation.transcript, [Self.dialogPrompt], "no touch request first: the prompt says it")
        XCTAssertEqual(sensor.waits, ["reader"])
        conversation.replies = [Self.secret("alice-unix-Pw-7")]
        XCTAssertEqual(run(ScriptedSensor([])), Decision(.unavailable, .passwordHandedOver, method: .password), "what i3lock answers goes on to pam_unix")
    }
}

/// The LocalAuthentication rules: lockouts, passcode required, context checks.
extension PolicyChainTests {
    func testBiometricLockoutAcrossTransactionsGoesStraightToThePasscode() {
        options.biometricLockout = 5
        conversation.replies = [.empty]
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .noMatch, .noMatch])).outcome, .unavailable)
        conversation = ScriptedConversation([.empty])
        let second = ScriptedSensor([.noMatch, .noMatch, .match(.rightIndex)])
        XCTAssertEqual(run(second).outcome, .unavailable, "locked at the 5th failure, mid-transaction")
        XCTAssertEqual(second.verifyCalls, 2)
        XCTAssertTrue(conversation.transcript.contains("ERROR: Fingerprint locked after too many failed attempts: use your PIN or your password."))

        conversation = ScriptedConversation([Self.secret("2468")])
        let third = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(third).outcome, .success(.passcode))
        XCTAssertEqual(third.verifyCalls, 0, "locked: the finger is not asked for")
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 0, "the passcode lifts the lockout")
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint))
    }

    func testBiometricLockoutUnderBiometricsPolicyLiftsAfterTheUnlockTime() {
        options.policy = .biometrics
        store.users["alice"]?.biometricFailures = 5
        store.users["alice"]?.biometricFailureAt = clock.seconds - 60
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])), Decision(.unavailable, .biometricsLocked))
        XCTAssertTrue(conversation.transcript.contains("ERROR: Fingerprint locked for 14 min after too many failed attempts: use your password."))
        clock.seconds += 15 * 60
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint))
    }

    /// A passcode lockout takes away the passcode only: the finger and the password still work,
    /// the user is told how long, and what is typed goes to the password without being checked.
    func testAPasscodeLockoutLeavesTheFingerAndThePassword() {
        store.users["alice"]?.passcodeFailures = 5
        store.users["alice"]?.passcodeFailureAt = clock.seconds - 10
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint))
        XCTAssertEqual(conversation.transcript, ["ERROR: PIN locked for 50 s: use your finger or your password.", Self.touchRequest])

        conversation = ScriptedConversation([Self.secret("2468")])
        XCTAssertEqual(run(ScriptedSensor([.interrupted])), Decision(.unavailable, .passcodeLocked, method: .passcode),
                       "even the right PIN is not checked while locked")
        XCTAssertEqual(conversation.transcript.last, "PROMPT: Password for running a command as root, or touch the reader, then press Enter: ")
        XCTAssertEqual(conversation.handedOver, ["2468"])
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 5, "nor counted")

        conversation = ScriptedConversation()
        XCTAssertEqual(run(ScriptedSensor([.timedOut])), Decision(.unavailable, .timedOut, method: .fingerprint),
                       "nothing biounlock can take once the reader gave up: pam_unix asks, no prompt of ours")
        XCTAssertFalse(conversation.transcript.contains { $0.hasPrefix("PROMPT") })

        clock.seconds += 50
        conversation = ScriptedConversation([Self.secret("2468")])
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .success(.passcode), "the wait is over")
    }

    func testBothLockedGoesStraightToThePassword() {
        store.users["alice"]?.passcodeFailures = 5
        store.users["alice"]?.passcodeFailureAt = clock.seconds
        store.users["alice"]?.biometricFailures = 5
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor), Decision(.unavailable, .passcodeLocked))
        XCTAssertEqual(conversation.transcript, ["ERROR: Fingerprint locked after too many failed attempts: use your password.",
                                                 "ERROR: PIN locked for 1 min: use your password."])
        XCTAssertEqual(sensor.verifyCalls, 0)
    }

    /// At the lockout while other attempts are being checked (their counts are in the record
    /// already, and one may be right): the passcode is still asked for, and the attempt decides.
    func testALockoutThatAttemptsInFlightMayLiftStillAsksForThePasscode() {
        store.users["alice"]?.templates = []
        store.users["alice"]?.passcodeFailures = 5
        store.users["alice"]?.passcodeFailureAt = clock.seconds - 10
        store.attemptsInFlight = true
        conversation.replies = [Self.secret("2468")]
        _ = run(nil)
        XCTAssertTrue(conversation.transcript.contains(Self.typePrompt), "\(conversation.transcript)")
        store.attemptsInFlight = false
        conversation = ScriptedConversation([Self.secret("2468")])
        XCTAssertEqual(run(nil), Decision(.unavailable, .passcodeLocked))
        XCTAssertEqual(conversation.transcript, ["ERROR: No fingerprint enrolled.", "ERROR: PIN locked for 50 s: use your password."],
                       "nothing in flight: locked, and nothing biounlock can take")
    }

    func testWrongPasscodesEscalate() {
        for attempt in 1...6 {
            conversation = ScriptedConversation([Self.secret("0000")])
            let decision = run(ScriptedSensor([.interrupted]))
            XCTAssertEqual(decision.reason, attempt == 6 ? .passcodeLocked : .wrongPasscode, "attempt \(attempt)")
            XCTAssertEqual(decision.outcome, .unavailable, "attempt \(attempt): handed on to the password")
        }
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 5, "refused attempts are not counted")
    }

    func testPasscodeRequiredAfterBootSkipsTheFinger() {
        options.requirePasscode = .default
        conversation.replies = [Self.secret("2468")]
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.passcode))
        XCTAssertEqual(sensor.verifyCalls, 0)
        XCTAssertEqual(conversation.transcript, ["INFO: PIN required: enter it once before using your finger.", Self.typePrompt])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint), "satisfied until the next boot")
        bootID = "boot-2"
        conversation.replies = [.empty]
        XCTAssertEqual(run(sensor), Decision(.unavailable, .passcodeDeclined))
    }

    /// Issue 32: at a login service the rule "after a restart" takes the Unix password: nothing is
    /// asked (neither the reader nor the PIN), the decision hands on to the password (which
    /// pam_sm_setcred then records, PasswordWitness), and only a password of this boot satisfies
    /// it; an unreadable boot id counts as a new boot; names compare byte for byte.
    func testLoginServiceTakesTheUnixPasswordOncePerBoot() {
        options.requirePasscode = .default
        store.users["alice"]?.passcodeSuccessAt = clock.seconds
        store.users["alice"]?.passcodeBootID = "boot-1" // the PIN this boot: not enough at login
        store.users["alice"]?.passcodeEnrolmentVersion = 0
        let sensor = ScriptedSensor([.match(.rightIndex)])
        conversation.replies = [Self.secret("2468")] // never asked for
        let decision = run(sensor, service: "gdm-password")
        XCTAssertEqual(decision, Decision(.unavailable, .passwordRequiredAfterBoot))
        XCTAssertTrue(PasswordWitness.handsOnToPassword(decision), "the password that follows is recorded")
        XCTAssertEqual(conversation.transcript, ["INFO: Password required after a restart."], "no prompt, no touch request")
        XCTAssertEqual(sensor.verifyCalls, 0)
        XCTAssertEqual(store.events.last?.reason, "password-required-boot")
        conversation.replies = []
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "sudo").outcome, .success(.fingerprint), "not a login service")

        // The password's success in this boot (what pam_sm_setcred records): the finger at login.
        PasswordWitness.recordPasswordSuccess(user: "alice", store: store, logger: logger, clock: clock, bootID: "boot-1")
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "login").outcome, .success(.fingerprint))
        bootID = nil
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "login"), Decision(.unavailable, .passwordRequiredAfterBoot), "no boot id: a new boot")
        bootID = "boot-2"
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "lightdm"), Decision(.unavailable, .passwordRequiredAfterBoot))
        // A passcode success in the new boot does not stand in for the password.
        XCTAssertNoThrow(try store.recordSuccess(user: "alice", method: .passcode, at: clock.seconds, bootID: "boot-2"))
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "sddm"), Decision(.unavailable, .passwordRequiredAfterBoot))
        options.loginServices = ["\u{212A}de"] // KELVIN SIGN: canonically equal to "Kde", not byte for byte
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "Kde").outcome, .success(.fingerprint))
        options.loginServices = []
        // lightdm, not gdm-password: gdm-password is a password_services stack (issue 33), the reader never opens there.
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "lightdm").outcome, .success(.fingerprint), "login_services=: none")
        options.loginServices = Options.defaultLoginServices
        options.requirePasscode = PasscodeRequirementRules(parsing: "enrolment")!
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "lightdm").outcome, .success(.fingerprint), "the rule 'boot' off")
        options.requirePasscode = .default
        options.passcodeOnly = true
        conversation.replies = [Self.secret("2468")]
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "login").outcome, .success(.passcode), "passcode_only is no login")
    }

    func testPasscodeRequiredAfterEnrolmentChangeUnderBiometricsPolicyIsUnavailable() {
        options.policy = .biometrics
        options.requirePasscode = PasscodeRequirementRules(parsing: "enrolment")!
        store.users["alice"]?.enrolmentVersion = 2
        store.users["alice"]?.passcodeEnrolmentVersion = 1
        store.users["alice"]?.passcodeSuccessAt = clock.seconds - 60
        let decision = run(ScriptedSensor([.match(.rightIndex)]))
        XCTAssertEqual(decision, Decision(.unavailable, .passcodeRequiredAfterEnrolment))
        XCTAssertEqual(conversation.transcript, ["INFO: Password required: the enrolled fingers have changed."])
        XCTAssertTrue(PasswordWitness.handsOnToPassword(decision))
        PasswordWitness.recordPasswordSuccess(user: "alice", store: store, logger: logger, clock: clock, bootID: "boot-1")
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint), "the password satisfied the rule")
    }

    /// sensor=fprintd: prints added or deleted in fprintd (GNOME Settings, fprintd-enroll), which
    /// the store never sees being made, are an enrolment change as `biounlock enrol`'s are: with
    /// require_passcode=enrolment the reader is released at once and the passcode asked for.
    func testAChangeOfFprintdsPrintsRequiresThePasscodeOnce() {
        options.sensor = .fprintd
        options.requirePasscode = PasscodeRequirementRules(parsing: "enrolment")!
        func print(_ finger: Finger, device: String = "0") -> Template {
            Template(finger: finger, sensor: .fprintd, data: [], driver: "fprintd", device: device, created: 0)
        }
        store.users["alice"]?.templates = [print(.rightIndex)]
        store.users["alice"]?.passcodeSuccessAt = clock.seconds - 60
        store.users["alice"]?.passcodeEnrolmentVersion = 0
        store.users["alice"]?.fprintdPrints = "0:right-index-finger"
        let sensor = ScriptedSensor([.match(.rightIndex), .match(.rightIndex), .match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint), "the prints biounlock last saw: the finger")
        XCTAssertEqual(store.users["alice"]?.enrolmentVersion, 0)

        // A finger added in fprintd: the passcode, and the reader released without a touch.
        store.users["alice"]?.templates.append(print(.leftThumb))
        conversation = ScriptedConversation([Self.secret("2468")])
        XCTAssertEqual(run(sensor).outcome, .success(.passcode))
        XCTAssertEqual(conversation.transcript, ["INFO: PIN required: the enrolled fingers have changed.", Self.typePrompt])
        XCTAssertEqual(sensor.verifyCalls, 1, "no touch was waited for")
        XCTAssertEqual(sensor.closed, 2)
        XCTAssertEqual(store.users["alice"]?.fprintdPrints, "0:left-thumb,0:right-index-finger")
        XCTAssertEqual(store.users["alice"]?.enrolmentVersion, 1)
        XCTAssertTrue(logger.text.contains("the prints fprintd holds for alice are not the ones biounlock last saw"), logger.text)
        conversation = ScriptedConversation()
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint), "the passcode satisfied the rule")

        // A finger deleted in fprintd is a change too; without the rule it is recorded, and the finger used.
        options.requirePasscode = .none
        store.users["alice"]?.templates = [print(.leftThumb)]
        XCTAssertEqual(run(ScriptedSensor([.match(.leftThumb)])).outcome, .success(.fingerprint))
        XCTAssertEqual(store.users["alice"]?.fprintdPrints, "0:left-thumb")
        XCTAssertEqual(store.users["alice"]?.enrolmentVersion, 2)
    }

    /// No set recorded (a store from before schema 5, a user enabled under another backend), one
    /// that does not parse, or one that cannot be written: the passcode, when in doubt.
    func testUnknownFprintdPrintsCountAsAChange() {
        options.sensor = .fprintd
        options.requirePasscode = PasscodeRequirementRules(parsing: "enrolment")!
        store.users["alice"]?.templates = [Template(finger: .rightIndex, sensor: .fprintd, data: [], driver: "fprintd", device: "0", created: 0)]
        store.users["alice"]?.passcodeSuccessAt = clock.seconds - 60
        store.users["alice"]?.passcodeEnrolmentVersion = 0
        for stored in [nil, "0:right-index-finger,", "right-index-finger", "0:nose"] as [String?] {
            store.users["alice"]?.fprintdPrints = stored
            store.users["alice"]?.enrolmentVersion = 0
            conversation = ScriptedConversation([.empty])
            let sensor = ScriptedSensor([.match(.rightIndex)])
            XCTAssertEqual(run(sensor), Decision(.unavailable, .passcodeDeclined), "\(stored ?? "nil")")
            XCTAssertEqual(conversation.transcript, ["INFO: PIN required: the enrolled fingers have changed.", Self.typePrompt])
            XCTAssertEqual(sensor.verifyCalls, 0)
            XCTAssertEqual(store.users["alice"]?.fprintdPrints, "0:right-index-finger")
            XCTAssertEqual(store.users["alice"]?.enrolmentVersion, 1)
        }
        store.users["alice"]?.fprintdPrints = nil
        store.users["alice"]?.enrolmentVersion = 0
        store.failWrites = true
        conversation = ScriptedConversation([.empty])
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])), Decision(.unavailable, .passcodeDeclined))
        XCTAssertEqual(conversation.transcript.first, "INFO: PIN required: the enrolled fingers have changed.")
        XCTAssertTrue(logger.lines.contains { $0.0 == .error && $0.1 == "cannot record the enrolment change of alice: disk full" },
                      logger.lines.map(\.1).joined(separator: " | "))
    }

    func testRemoteSessionsAreLeftAloneByDefault() {
        facts = SessionFacts(remote: "PAM_TTY=ssh")
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor), Decision(.ignore, .remoteSession))
        XCTAssertEqual(run(sensor, user: "mallory"), Decision(.ignore, .remoteSession), "before the name is even looked up")
        XCTAssertEqual(conversation.transcript, [], "no prompt, no message")
        XCTAssertEqual(store.events, [], "no audit row")
        XCTAssertEqual(sensor.verifyCalls, 0)
        XCTAssertEqual(store.loads, 0, "not even read")
    }

    func testRemotePasscodeAndAllowAndClosedLids() {
        facts = SessionFacts(remote: "SSH_CONNECTION")
        options.remote = .passcode
        conversation.replies = [Self.secret("2468")]
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.passcode))
        XCTAssertEqual(sensor.verifyCalls, 0)
        XCTAssertEqual(conversation.transcript, ["INFO: Fingerprint skipped: remote session.", Self.typePrompt])
        options.remote = .allow
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))

        facts = SessionFacts(lidClosed: true)
        options.policy = .biometrics
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])), Decision(.unavailable, .lidClosed))
        options.lid = .ignore
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.fingerprint))
    }

    /// The prints are read when a reader is opened for them, not with the row: an attempt that
    /// never asks for the finger never reads them; one whose read fails goes on without the finger.
    func testThePrintsAreReadOnlyWhenTheReaderIsOpened() {
        facts = SessionFacts(lidClosed: true)
        conversation.replies = [Self.secret("2468")]
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)])).outcome, .success(.passcode))
        XCTAssertEqual(store.templateReads, 0, "the lid is closed: the finger is not asked for")
        XCTAssertEqual(run(nil, user: "bob").reason, .notEnabled)
        XCTAssertEqual(store.templateReads, 0, "not enabled")

        facts = SessionFacts()
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor).outcome, .success(.fingerprint))
        XCTAssertEqual(store.templateReads, 1)
        XCTAssertEqual(sensor.verifyCalls, 1)

        store.failTemplateReads = true
        conversation.replies = [Self.secret("2468")]
        let unused = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(unused).outcome, .success(.passcode), "no prints to compare with: the passcode still works")
        XCTAssertEqual(unused.verifyCalls, 0)
        XCTAssertTrue(logger.text.contains("store unreadable"), logger.text)
    }

    func testPatternPasscodesAreComparedCanonically() throws {
        let hash = try Passcode.hash(try Pattern.canonicalSecret(Secret(bytes: Array("12369".utf8))!).get(), opsLimit: 1, memLimit: 8192)
        store.users["alice"]?.passcode = StoredPasscode(hash: hash, kind: .pattern)
        conversation.replies = [Self.secret("1369")]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])).outcome, .success(.passcode))
        XCTAssertTrue(conversation.transcript.contains("PROMPT: Pattern or password for running a command as root: "))
        conversation.replies = [Self.secret("1231")]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])), Decision(.unavailable, .passwordHandedOver, method: .password), "not a pattern: not counted")
        conversation.replies = [Self.secret("3214")]
        XCTAssertEqual(run(ScriptedSensor([.timedOut])), Decision(.unavailable, .wrongPasscode, method: .passcode))
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 1)
    }

    func testReasonSetsTheTouchPrompt() {
        options.reason = "Approve %s: touch the reader"
        _ = run(ScriptedSensor([.match(.rightIndex)]), service: "polkit-1")
        XCTAssertEqual(conversation.transcript.first, "INFO: Approve polkit-1: touch the reader")
    }
}

/// Issue 33: a greeter's or a lock screen's fingerprint stack (`fingerprint_services`:
/// gdm-fingerprint, kde-fingerprint -- which Debian 12 lets fall to `other`, common-auth) is the
/// reader alone: the touch request, no prompt of biounlock's before or after the reader's
/// timeout, a PIN never asked for (the password stack beside it takes what is typed).
extension PolicyChainTests {
    static let unlockRequest = "INFO: Touch the fingerprint reader to authenticate for unlocking the screen"

    func testAFingerprintStackIsTheReaderAlone() {
        conversation.replies = [Self.secret("2468")] // never asked for
        let silent = ScriptedSensor([.interrupted, .timedOut])
        XCTAssertEqual(run(silent, service: "kde-fingerprint"), Decision(.unavailable, .timedOut, method: .fingerprint))
        XCTAssertEqual(conversation.transcript, [Self.unlockRequest, "INFO: No touch in time."], "no prompt: the reader until its timeout")

        conversation = ScriptedConversation([Self.secret("2468")])
        options.maxTries = 2
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .noMatch]), service: "kde-fingerprint").outcome, .maxTries,
                       "wrong fingers: the stack fails, nothing typed")
        XCTAssertFalse(conversation.transcript.contains { $0.hasPrefix("PROMPT") }, "\(conversation.transcript)")

        conversation = ScriptedConversation()
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "gdm-fingerprint").outcome, .success(.fingerprint))

        // The same configuration elsewhere is unchanged: a dialog asks after touch_first.
        conversation = ScriptedConversation([Self.secret("2468")])
        XCTAssertEqual(run(ScriptedSensor([.interrupted, .timedOut]), service: "sudo").outcome, .success(.passcode))
        XCTAssertEqual(conversation.transcript.filter { $0.hasPrefix("PROMPT") }, [Self.dialogPrompt])

        // fingerprint_services=none: kde-fingerprint is a dialog like any other (before issue 33).
        options.fingerprintServices = []
        conversation = ScriptedConversation([Self.secret("2468")])
        XCTAssertEqual(run(ScriptedSensor([.interrupted, .timedOut]), service: "kde-fingerprint").outcome, .success(.passcode))
    }

    /// The policy stays the configured one: a finger lockout made in the fingerprint stack is
    /// not lifted by time there (as policy=biometrics would), it waits for the PIN -- typed in
    /// the password stack beside it -- and the fingerprint stack asks for nothing meanwhile.
    func testAFingerLockoutInAFingerprintStackWaitsForThePasscode() {
        options.biometricLockout = 2
        options.maxTries = 2
        conversation.replies = []
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .noMatch]), service: "kde-fingerprint").outcome, .unavailable, "locked at the 2nd")
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 2)
        XCTAssertFalse(conversation.transcript.contains { $0.hasPrefix("PROMPT") }, "\(conversation.transcript)")
        clock.seconds += Int64(options.biometricUnlockSeconds) + 60
        conversation = ScriptedConversation([Self.secret("2468")]) // never asked for here
        let locked = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(locked, service: "kde-fingerprint"), Decision(.unavailable, .biometricsLocked))
        XCTAssertEqual(locked.verifyCalls, 0, "still locked after bio_unlock_time: the passcode lifts it")
        XCTAssertFalse(conversation.transcript.contains { $0.hasPrefix("PROMPT") }, "\(conversation.transcript)")
        XCTAssertTrue(conversation.transcript.contains { $0.contains("use your PIN or your password") }, "\(conversation.transcript)")
        // The PIN in the password stack beside it (kde) lifts it.
        conversation = ScriptedConversation([Self.secret("2468")])
        XCTAssertEqual(run(ScriptedSensor([]), service: "kde").outcome, .success(.passcode))
        conversation = ScriptedConversation()
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), service: "kde-fingerprint").outcome, .success(.fingerprint))
    }

    func testServingAFingerprintStackTakesNothingTyped() {
        var o = Options()
        o.policy = .biometricsOrPasscode
        o.timeoutSeconds = 120
        let stack = o.serving("kde-fingerprint")
        XCTAssertTrue(stack.readerAlone)
        XCTAssertEqual(stack.prompt, .sequential)
        XCTAssertEqual(stack.policy, .biometricsOrPasscode, "the lockout rules of the configured policy")
        XCTAssertEqual(stack.timeoutSeconds, 120)
        XCTAssertFalse(o.serving("kde").readerAlone)
        XCTAssertFalse(o.serving("KDE-fingerprint").readerAlone, "names compare byte for byte")
        o.fingerprintServices = []
        XCTAssertFalse(o.serving("kde-fingerprint").readerAlone)
    }
}
