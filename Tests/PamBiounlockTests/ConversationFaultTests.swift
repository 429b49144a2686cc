import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Conversation faults (docs/SECURITY.md, item 2): a conversation that fails, answers with a NULL
/// array or a NULL text, an empty line, 1 MiB, NUL bytes or invalid UTF-8, at each place the
/// module converses. Never success, never a crash, always an answer in bounded time. The basic
/// rows (@FAIL, @NULL, @NORESP, no answer, @BIG at the passcode prompt) are in ReturnCodeTests.
final class ConversationFaultTests: ModuleTestCase {

    let user = ModuleFixture.enrolledUser

    override func prepare() throws {
        // No reader (sensor=libfprint is not in this build): every transaction goes straight to
        // the passcode prompt.
        try fixture.service("sensor=libfprint")
    }

    /// Runs one transaction with a hang guard: the harness is killed after 30 s.
    func run(_ user: String? = nil, answers: [String], extra: [String] = []) throws -> Transaction {
        let t = try fixture.authenticate(user ?? self.user, answers: answers, extra: extra, timeout: 30)
        XCTAssertFalse(t.raw.timedOut, "the transaction must end by itself: \(t.raw.stdout)")
        XCTAssertEqual(t.raw.status, 0, "the harness (and so the module) must not crash: \(t.raw.stderr)")
        return t
    }

    /// Bytes that cannot be a PIN are not a guess: handed on to the password, not counted.
    func testBytesThatCannotBeAPasscodeAreHandedOnUncounted() throws {
        let cases: [(answer: String, why: String)] = [
            ("@HEX:3234003638", "NUL inside: the module sees \"24\", as any C caller would pass it"),
            ("@HEX:ffc328fe80", "invalid UTF-8"),
            ("@HEX:1b5b41", "an escape sequence"),
        ]
        for c in cases {
            let t = try run(answers: [c.answer])
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", c.why)
            XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0, "not a guess: \(c.why)")
        }
        let longest = try run(answers: [String(repeating: "9", count: Secret.maximumLength)])
        XCTAssertEqual(longest.code, "PAM_AUTHINFO_UNAVAIL", "exactly the longest accepted passcode: a wrong PIN, handed on")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 1, "and counted")
    }

    func testTheRightPasscodeFollowedByANulByteIsTheRightPasscode() throws {
        // A PAM answer is a C string: nothing after the NUL reaches any module. Documented, not a hole.
        XCTAssertEqual(try run(answers: ["@HEX:32343638006a756e6b"]).code, "PAM_SUCCESS")
    }

    func testOneByteOverTheLimitIsRefusedBeforeAnyHashing() throws {
        let t = try run(answers: [String(repeating: "9", count: Secret.maximumLength + 1)], extra: ["--count-argon2"])
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(t.lines("ARGON2"), [], "no Argon2id work for an over-long answer")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0, "longer than any passcode: not a guess")
    }

    func testFailuresOfTheConversationAreNotCountedAsWrongPasscodes() throws {
        for answer in ["@FAIL", "@NULL", "@NORESP"] {
            XCTAssertEqual(try run(answers: [answer]).code, "PAM_CONV_ERR", answer)
        }
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
    }

    /// Without a user, pam_get_user asks for one through the same conversation.
    func testFaultsAtTheUserNamePromptAreNeverSuccess() throws {
        for answer in ["@FAIL", "@NULL", "@NORESP", "", "@BIG", "@HEX:ffc328", "@HEX:0a", "Daemon", "daemon "] {
            let t = try run("@NONE", answers: [answer, ModuleFixture.pin])
            XCTAssertTrue(t.messages.first?.hasPrefix("PROMPT_ON: ") ?? false, "libpam asked for the user: \(t.raw.stdout)")
            XCTAssertNotEqual(t.code, "PAM_SUCCESS", answer)
            XCTAssertNotEqual(t.code, "NONE", "the transaction ended with a result: \(answer)")
        }
        // And when the answer is a user, the transaction goes on as usual.
        XCTAssertEqual(try run("@NONE", answers: [user, ModuleFixture.pin]).code, "PAM_SUCCESS")
    }

    /// A conversation that fails every message, informational ones included: the module carries
    /// on (an info line is not a question) and decides as usual.
    func testAConversationThatFailsEveryMessage() throws {
        XCTAssertEqual(try run(answers: ["@FAIL"], extra: ["--fail-messages"]).code, "PAM_CONV_ERR")
        XCTAssertEqual(try run(answers: ["1357"], extra: ["--fail-messages"]).code, "PAM_AUTHINFO_UNAVAIL")
        XCTAssertEqual(try run(answers: [ModuleFixture.pin], extra: ["--fail-messages"]).code, "PAM_SUCCESS")
    }

    /// Under policy=biometrics the module asks nothing, and the touch request failing to show
    /// changes nothing either.
    func testBiometricsPolicyWithAFailingConversation() throws {
        try fixture.service("timeout=1 policy=biometrics")  // the simulated reader: the touch request is shown
        let t = try run(answers: ["@FAIL"], extra: ["--fail-messages"])
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL")
    }
}
