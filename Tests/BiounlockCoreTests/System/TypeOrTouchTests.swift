import XCTest
import Glibc
@testable import BiounlockCore

/// Type or touch: one prompt, a touch or a typed line, whichever comes first. The chain's asking
/// step with a scripted TypeOrTouchTerminal (Policy/Fakes.swift); the real terminal on a pty is
/// in PamBiounlockTests (LibfprintTypeOrTouchTests) and Tests/EndToEnd/type-or-touch.sh.
final class TypeOrTouchTests: XCTestCase {
    static let pinHash = PolicyChainTests.pinHash
    var store = MemoryStore()
    var conversation = ScriptedConversation()
    var options = Options()

    override func setUp() {
        options.sensor = .simulated
        options.requirePasscode = .none
        store.users["alice"] = UserRecord(
            name: "alice", enabled: true,
            templates: [Template(finger: .rightIndex, sensor: .simulated, data: Array("alice-ri".utf8), created: 1)],
            passcode: StoredPasscode(hash: Self.pinHash, kind: .pin))
        store.users["alice"]?.uid = 1
    }

    func run(_ sensor: ScriptedSensor, _ terminal: ScriptedTerminal?, service: String = "sudo") -> Decision {
        let store = self.store
        return PolicyChain(options: options, conversation: conversation, logger: MemoryLogger(), sensors: ScriptedSensors(sensor: sensor),
                           openStore: { .success(store) }, lookupAccount: { .success(Account(name: $0, uid: 1)) }, clock: FixedClock(),
                           bootID: { "b" }, terminal: { terminal }).run(AuthRequest(user: "alice", service: service))
    }

    /// GNU screen's lock run by root (the module in-process, on screen's terminal): screen read
    /// "Password:" itself and answers the conversation's prompt with it, so the terminal is not
    /// the module's to prompt on (prompt_first_services): the typed PIN is taken from the
    /// conversation, at once, and nothing is written to or read from the terminal.
    func testAPromptFirstCallerOnATerminalIsAskedThroughTheConversation() {
        conversation = ScriptedConversation([.answer(Secret(bytes: Array("2468".utf8))!)])
        let terminal = ScriptedTerminal([Self.line("1111")])
        XCTAssertEqual(run(ScriptedSensor([.interrupted]), terminal, service: "screen").outcome, .success(.passcode))
        XCTAssertEqual(terminal.transcript, [], "the terminal is not touched")
        XCTAssertEqual(conversation.transcript, ["PROMPT: PIN or password for screen, or touch the reader, then press Enter: "])
        // Elsewhere the same terminal is the module's (type or touch).
        options.promptFirstServices = []
        conversation = ScriptedConversation()
        XCTAssertEqual(run(ScriptedSensor([.interrupted]), ScriptedTerminal([Self.line("2468")]), service: "screen").outcome, .success(.passcode))
        XCTAssertEqual(conversation.transcript, [])
    }

    static func line(_ s: String) -> TerminalInput { .line(Secret(bytes: Array(s.utf8))!) }

    func testTouchWithNoKeyPressed() {
        let terminal = ScriptedTerminal([])
        let sensor = ScriptedSensor([.match(.rightIndex)])
        XCTAssertEqual(run(sensor, terminal).outcome, .success(.fingerprint))
        XCTAssertEqual(terminal.transcript, ["PROMPT: PIN or password for running a command as root, or touch the reader: "])
        XCTAssertEqual(terminal.finished, [false], "the terminal is restored")
        XCTAssertEqual(conversation.transcript, [], "nothing through the conversation")
        XCTAssertEqual(sensor.closed, 1)
    }

    func testTypingThePasscodeWhileTheReaderWaits() {
        let terminal = ScriptedTerminal([.pending, Self.line("2468")])
        let sensor = ScriptedSensor([.interrupted, .interrupted, .match(.rightIndex)])
        XCTAssertEqual(run(sensor, terminal).outcome, .success(.passcode))
        XCTAssertEqual(sensor.verifyCalls, 2, "Enter ended the wait; the reader was released")
        XCTAssertEqual(sensor.closed, 1)
        XCTAssertEqual(conversation.transcript, [], "no second prompt")
    }

    func testEnterAloneMovesOnAtOnce() {
        let terminal = ScriptedTerminal([.empty])
        XCTAssertEqual(run(ScriptedSensor([.interrupted]), terminal), Decision(.unavailable, .passcodeDeclined, method: .fingerprint))
    }

    func testWrongFingersThenTypedPasscodeOnTheSamePrompt() {
        let terminal = ScriptedTerminal([Self.line("2468")])
        let sensor = ScriptedSensor([.noMatch, .noMatch, .noMatch, .match(.rightIndex)])
        XCTAssertEqual(run(sensor, terminal).outcome, .success(.passcode))
        XCTAssertEqual(terminal.transcript, ["PROMPT: PIN or password for running a command as root, or touch the reader: ",
                                             "MSG: Fingerprint not recognised. 2 tries left.",
                                             "MSG: Fingerprint not recognised. 1 try left.",
                                             "PROMPT NOW: PIN or password for running a command as root: ",
                                             "MSG: Fingerprint not recognised."])
        XCTAssertEqual(sensor.verifyCalls, 3, "released after max_tries; the prompt kept taking keys")
        XCTAssertEqual(store.users["alice"]?.biometricFailures, 0)
    }

    func testAWrongTypedPasscodeIsCountedAndHandedOn() {
        XCTAssertEqual(run(ScriptedSensor([.interrupted]), ScriptedTerminal([Self.line("1111")])),
                       Decision(.unavailable, .wrongPasscode, method: .passcode))
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 1)
        XCTAssertEqual(conversation.handedOver, ["1111"])
    }

    /// The Unix password typed by habit at the type-or-touch prompt: pam_unix takes it.
    func testTheUnixPasswordTypedByHabitIsHandedOnUncounted() {
        XCTAssertEqual(run(ScriptedSensor([.interrupted]), ScriptedTerminal([Self.line("alice-unix-Pw-7")])),
                       Decision(.unavailable, .passwordHandedOver, method: .password))
        XCTAssertEqual(store.users["alice"]?.passcodeFailures, 0)
        XCTAssertEqual(conversation.handedOver, ["alice-unix-Pw-7"])
        XCTAssertEqual(conversation.transcript, [], "no second prompt, no message")
    }

    func testTimeoutKeepsThePromptForTyping() {
        let terminal = ScriptedTerminal([Self.line("2468")])
        XCTAssertEqual(run(ScriptedSensor([.timedOut]), terminal).outcome, .success(.passcode))
    }

    func testUnderBiometricsPolicyTheTypedPasswordIsHandedOn() {
        options.policy = .biometrics
        let terminal = ScriptedTerminal([Self.line("unix-password")])
        XCTAssertEqual(run(ScriptedSensor([.interrupted]), terminal), Decision(.unavailable, .passwordHandedOver, method: .password))
        XCTAssertEqual(terminal.transcript.first, "PROMPT: Password for running a command as root, or touch the reader: ")
        XCTAssertEqual(conversation.handedOver, ["unix-password"])
    }

    /// Ctrl-C restores the terminal, writes the attempt's audit row, and only then delivers the
    /// SIGINT (which ends sudo or su before they could return to the module).
    func testCtrlCCancelsRestoresTheTerminalAndSignalsAfterTheAuditRow() {
        let terminal = ScriptedTerminal([.cancelled])
        var rowsWhenSignalled: [String] = []
        terminal.onInterrupt = { rowsWhenSignalled = self.store.events.map(\.reason) }
        XCTAssertEqual(run(ScriptedSensor([.interrupted]), terminal), Decision(.conversationFailed, .cancelled))
        XCTAssertEqual(terminal.finished, [true])
        XCTAssertEqual(terminal.interruptsDelivered, 1)
        XCTAssertEqual(rowsWhenSignalled, ["cancelled"])
    }

    func testSequentialWhenNoTerminalOrWhenAskedTo() {
        conversation.replies = [.answer(Secret(bytes: Array("2468".utf8))!)]
        XCTAssertEqual(run(ScriptedSensor([.noMatch, .noMatch, .noMatch]), nil).outcome, .success(.passcode))
        XCTAssertEqual(conversation.transcript.first, "INFO: Touch the fingerprint reader to authenticate for running a command as root")
        options.prompt = .sequential
        let terminal = ScriptedTerminal([])
        XCTAssertEqual(run(ScriptedSensor([.match(.rightIndex)]), terminal).outcome, .success(.fingerprint))
        XCTAssertEqual(terminal.transcript, [], "prompt=sequential never touches the terminal")
    }
}

/// Who gets type or touch at all (ControllingTerminal.forConversation): only a caller whose
/// standard input is its controlling terminal; `sudo -S` (a pipe) and graphical callers do not.
extension TypeOrTouchTests {
    func testAGraphicalCallerGetsNoTerminal() {
        XCTAssertNil(ControllingTerminal.forConversation(pamTTY: ":0"))
        XCTAssertNil(ControllingTerminal.forConversation(pamTTY: ":1.0"))
    }

    func testStandardInputFromAPipeGetsNoTerminal() throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        let saved = dup(STDIN_FILENO)
        XCTAssertGreaterThanOrEqual(saved, 0)
        XCTAssertEqual(dup2(fds[0], STDIN_FILENO), STDIN_FILENO)
        defer {
            dup2(saved, STDIN_FILENO)
            close(saved); close(fds[0]); close(fds[1])
        }
        XCTAssertNil(ControllingTerminal.forConversation(pamTTY: "/dev/pts/3"), "sudo -S: standard input is a pipe")
    }
}
