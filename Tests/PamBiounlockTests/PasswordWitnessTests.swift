import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Issue 33, item 4: a Unix password that succeeds in a stack with biounlock ends the passcode's
/// escalation as a PIN success would, also for callers that never call pam_setcred (polkit's
/// agent helper: pam_authenticate, then pam_acct_mgmt). Through real libpam with real pam_unix
/// and known passwords (UnixStackFixture), and the pam-auth-update profile's account line
/// (`account optional pam_biounlock.so`, PamBiounlock's pam_sm_acct_mgmt).
///
/// What proves the password there is pam_unix's own verdict on the handle, newer than
/// biounlock's hand-off -- never the caller's order of calls (the harness's --acct-mgmt runs
/// pam_acct_mgmt whatever pam_authenticate returned, as a careless caller might).
final class PasswordWitnessTests: XCTestCase {
    var world: UnixStackFixture!
    var fixture: ModuleFixture { world.module }
    override func tearDown() { world = nil }

    let user = ModuleFixture.enrolledUser
    let password = UnixStackFixture.daemonPassword

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first: \(modulePath) is missing")
        try XCTSkipUnless(UnixStackFixture.available, "needs root and unshare (private mount namespaces for pam_unix's files)")
        world = try UnixStackFixture()
        try fixture.enrolDefaultUser()
    }

    /// The module's line in the account phase, as the profile writes it into common-account.
    private var accountLines: String {
        """
        account optional \(modulePath) db=\(fixture.storePath) config=\(fixture.dir)/none.conf
        account required pam_permit.so
        """
    }

    /// The recommended auth lines (pam_unix after the module), then the account lines.
    private func profileStack() throws {
        try fixture.service("touch_first=0", name: UnixStackFixture.service, after: """
            auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
            auth requisite pam_deny.so
            auth required pam_permit.so
            \(accountLines)
            """, control: ModuleFixture.recommendedControl)
    }

    private var passcodeFailures: Int { get throws { try fixture.store.loadUser(user)?.passcodeFailures ?? -1 } }

    /// Six wrong PINs: the second lockout (5 min) is running, the next wrong one would start 15.
    private func escalate() throws {
        for _ in 0..<6 { _ = try fixture.store.recordPasscodeFailure(user: user, at: SystemClock().now() - 3600) }
        XCTAssertEqual(Lockouts.passcodeWait(afterFailures: try passcodeFailures + 1, threshold: 5), 15 * 60)
    }

    func testTheUnixPasswordSeenInTheAccountPhaseEndsTheEscalation() throws {
        try profileStack()
        try escalate()
        let t = try world.authenticate(answers: [password], extra: ["--acct-mgmt"])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertTrue(t.raw.stdout.contains("ACCT 0 PAM_SUCCESS"), "the account phase still succeeds: \(t.raw.stdout)")
        XCTAssertEqual(try passcodeFailures, 0, "no pam_setcred, yet the password cleared the counts")
        XCTAssertEqual(Lockouts.passcodeWait(afterFailures: 5, threshold: 5), 60, "the next lockout is the first again")
        XCTAssertNotNil(try fixture.store.loadUser(user)?.passcodeSuccessAt, "and satisfied the passcode rules, as pam_setcred's witness does")
    }

    /// The same password typed at pam_unix's own prompt (Enter alone at biounlock's prompt twice:
    /// the reader waits out its timeout, the prompt comes once more, then pam_unix asks).
    func testThePasswordTypedAtPamUnixsOwnPromptCountsToo() throws {
        try fixture.service("touch_first=0 timeout=1", name: UnixStackFixture.service, after: """
            auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
            auth requisite pam_deny.so
            auth required pam_permit.so
            \(accountLines)
            """, control: ModuleFixture.recommendedControl)
        try escalate()
        let t = try world.authenticate(answers: ["", ""], unixAnswer: password, extra: ["--acct-mgmt"])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertTrue(t.messages.contains("PROMPT_OFF: " + ContractText.unixPrompt), "\(t.messages)")
        XCTAssertEqual(try passcodeFailures, 0)
    }

    /// A wrong password: pam_unix's verdict is a failure. Even a caller that runs the account phase
    /// after a failed authentication clears nothing.
    func testAWrongPasswordClearsNothingWhateverTheCallerCalls() throws {
        try profileStack()
        try escalate()
        let t = try world.authenticate(answers: ["not-the-password"], extra: ["--acct-mgmt"])
        XCTAssertEqual(t.code, "PAM_AUTH_ERR")
        XCTAssertEqual(try passcodeFailures, 6)
    }

    /// The finger or the PIN succeeding leaves no note; the account phase records nothing more
    /// (the success itself cleared what it clears).
    func testNoNoteNoWitness() throws {
        try profileStack()
        try escalate()
        // Another user's right password: pam_unix's verdict is a success, but biounlock never
        // handed `daemon` on in this handle (bin has no biounlock row: PAM_IGNORE, no note).
        let other = try world.authenticate(ModuleFixture.otherUser, answers: [UnixStackFixture.binPassword],
                                           unixAnswer: UnixStackFixture.binPassword, extra: ["--acct-mgmt"])
        XCTAssertEqual(other.code, "PAM_SUCCESS", other.raw.stdout)
        XCTAssertEqual(try passcodeFailures, 6)
        XCTAssertNil(try fixture.store.loadUser(ModuleFixture.otherUser), "nothing written for a user without biounlock")
    }

    /// pam_unix BEFORE biounlock's line: its verdict (a success here) predates the hand-off, so the
    /// account phase cannot tell it from one of an earlier pam_authenticate on the handle, and
    /// records nothing; pam_setcred (the whole stack succeeded) still does.
    func testAVerdictFromBeforeTheHandOffIsNotTakenInTheAccountPhase() throws {
        try fixture.service("touch_first=0", name: UnixStackFixture.service, after: """
            auth required pam_permit.so
            \(accountLines)
            """, control: ModuleFixture.recommendedControl)
        let text = try String(contentsOfFile: fixture.confdir + "/" + UnixStackFixture.service, encoding: .utf8)
        try ("auth optional pam_unix.so nullok\n" + text).write(toFile: fixture.confdir + "/" + UnixStackFixture.service,
                                                                 atomically: true, encoding: .utf8)
        try escalate()
        let t = try world.authenticate(answers: ["typed-after-the-password"], unixAnswer: password, extra: ["--acct-mgmt"])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(try passcodeFailures, 6, "pam_unix's success came before the hand-off")
        let withSetcred = try world.authenticate(answers: ["typed-after-the-password"], unixAnswer: password, extra: ["--acct-mgmt", "--setcred"])
        XCTAssertEqual(withSetcred.code, "PAM_SUCCESS")
        XCTAssertEqual(try passcodeFailures, 0, "pam_setcred's witness: the stack succeeded")
    }

    /// pam_authenticate twice on one handle: the password right the first time (its stack then
    /// failed at a module after pam_unix), and the second attempt ending without pam_unix (the
    /// conversation failed at biounlock's prompt): the old verdict is not this attempt's.
    func testAnEarlierAttemptsVerdictOnTheHandleIsNotTaken() throws {
        try fixture.service("touch_first=0", name: UnixStackFixture.service, after: """
            auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
            auth requisite pam_deny.so
            auth required pam_permit.so
            \(accountLines)
            """, control: ModuleFixture.recommendedControl)
        try escalate()
        let t = try world.authenticate(answers: [password, "@FAIL"], extra: ["--auth-count", "2", "--acct-mgmt"])
        XCTAssertEqual(t.codes, ["PAM_SUCCESS", "PAM_CONV_ERR"], t.raw.stdout)
        XCTAssertEqual(try passcodeFailures, 6, "the last attempt handed nobody on")
    }
}
