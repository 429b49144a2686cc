import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Issue 33, item 1: the desktop's PAM files as Debian ships them, with nothing edited by hand.
/// GDM's `gdm-password` is the gdm3 package's own file, i3lock's and login's those of the i3lock
/// and login packages, SDDM's and LightDM's those of the sddm and lightdm packages
/// (Tests/Fixtures/debian-pam.d, unedited; README.md there),
/// and common-auth/common-account are what Debian's real pam-auth-update writes with biounlock's
/// profile enabled (Tests/EndToEnd/lib/pam-auth-update-layout.sh, in a private mount namespace).
/// libpam resolves `@include` in /etc/pam.d even under pam_start_confdir, so the generated
/// common-* files are bind-mounted over /etc/pam.d's inside the namespace; gdm-password itself
/// comes from the confdir. The module is found where that common-auth names it -- `pam_biounlock.so` in the security
/// directory, an overlay holding build/pam_biounlock.so -- and reads /etc/security/biounlock.conf
/// (an overlay with the fixture's file), pam_unix the fixture's passwd and shadow: the host's
/// files are only read.
final class DebianStackTests: XCTestCase {
    var world: UnixStackFixture!
    var fixture: ModuleFixture { world.module }
    override func tearDown() { world = nil }

    static let fixtures: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/debian-pam.d").path
    }()
    static let layoutScript: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("EndToEnd/lib/pam-auth-update-layout.sh").path
    }()
    static let profile: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/pam-configs/biounlock").path
    }()
    static let securityDirectory = "/lib/x86_64-linux-gnu/security"

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first: \(modulePath) is missing")
        try XCTSkipUnless(UnixStackFixture.available && FileManager.default.isExecutableFile(atPath: "/usr/sbin/pam-auth-update")
                          && FileManager.default.fileExists(atPath: Self.securityDirectory + "/pam_unix.so"),
                          "needs root, unshare, pam-auth-update and Debian's security directory")
        world = try UnixStackFixture()
        try fixture.enrolDefaultUser()
        let layout = try runProcess("/bin/sh", [Self.layoutScript, fixture.confdir, Self.profile])
        XCTAssertEqual(layout.status, 0, layout.stdout + layout.stderr)
        let commonAuth = try String(contentsOfFile: fixture.confdir + "/common-auth", encoding: .utf8)
        XCTAssertTrue(commonAuth.contains("pam_biounlock.so"), "the profile is in common-auth: \(commonAuth)")
        try FileManager.default.copyItem(atPath: Self.fixtures + "/gdm-password", toPath: fixture.confdir + "/gdm-password")
        try FileManager.default.copyItem(atPath: Self.fixtures + "/i3lock", toPath: fixture.confdir + "/i3lock")
        for name in ["other", "sddm", "sddm-greeter", "sddm-autologin", "lightdm", "lightdm-greeter"] {
            try FileManager.default.copyItem(atPath: Self.fixtures + "/" + name, toPath: fixture.confdir + "/" + name)
        }
        for d in ["security-upper", "security-work", "etc-security-upper", "etc-security-work"] {
            try FileManager.default.createDirectory(atPath: fixture.dir + "/" + d, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o755])
        }
        try FileManager.default.copyItem(atPath: modulePath, toPath: fixture.dir + "/security-upper/pam_biounlock.so")
        try config()
    }

    /// /etc/security/biounlock.conf in the namespace: the fixture's store and simulated sensor.
    func config(_ extra: String = "") throws {
        let f = fixture
        let text = """
            db = \(f.storePath)
            sensor = simulated
            sim_socket = \(f.socket)
            timeout = 3
            require_passcode = none
            lid_path = \(f.dir)/lid
            logind_path = \(f.dir)/sessions
            proc_path = \(f.dir)/proc
            \(extra)
            """
        let path = f.dir + "/etc-security-upper/biounlock.conf"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
    }

    var wrapper: [String] {
        let script = """
            d=$0
            mount --bind "$d/etc/passwd" /etc/passwd && mount --bind "$d/etc/group" /etc/group && mount --bind "$d/etc/shadow" /etc/shadow || exit 70
            for f in common-auth common-account common-session common-password; do mount --bind "$d/pam.d/$f" "/etc/pam.d/$f" || exit 73; done
            mount --bind "\(Self.fixtures)/login" /etc/pam.d/login || exit 74
            mount -t overlay overlay -o "lowerdir=\(Self.securityDirectory),upperdir=$d/security-upper,workdir=$d/security-work" \(Self.securityDirectory) || exit 71
            mount -t overlay overlay -o "lowerdir=/etc/security,upperdir=$d/etc-security-upper,workdir=$d/etc-security-work" /etc/security || exit 72
            exec "$@"
            """
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, fixture.dir]
    }

    func gdmPassword(answers: [String], unixAnswer: String? = nil, touches: [SimCommand] = []) throws -> Transaction {
        try transaction("gdm-password", answers: answers, unixAnswer: unixAnswer, touches: touches)
    }

    func transaction(_ service: String, answers: [String], unixAnswer: String? = nil, touches: [SimCommand] = []) throws -> Transaction {
        var extra: [String] = ["--syslog"]
        if let unixAnswer { extra += ["--answer-prompt", ContractText.unixPrompt + "=" + unixAnswer] }
        return try fixture.authenticate(service: service, answers: answers, touches: touches, extra: extra, wrapper: wrapper)
    }

    // MARK: i3lock as Debian ships it: `auth include login` (Debian's login, then common-auth)

    /// i3lock reads what is typed, then answers every prompt with it and shows none of the
    /// module's messages: with Debian's own file the prompt must come at once (no touch request
    /// holding the typed password back touch_first seconds: prompt_first_services), the Unix
    /// password unlocks through pam_unix, and an empty answer waits for the finger, which unlocks.
    /// (As root here; i3lock runs it as the user, where biounlock-check runs the same chain.)
    func testI3lockAsDebianShipsItTakesTheTypedPasswordAtOnceAndTheFinger() throws {
        try assertPromptFirst("i3lock")
    }

    /// A caller of prompt_first_services (it answers every prompt with what was typed before
    /// PAM began): the prompt at once and nothing before it, the Unix password typed there
    /// accepted; an empty answer waits for the finger, which is accepted. The prompt, for more checks.
    @discardableResult
    func assertPromptFirst(_ service: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let prompt = "PROMPT_OFF: " + ContractText.orEnter(ContractText.pinOrPassword, service)
        let typed = try transaction(service, answers: [UnixStackFixture.daemonPassword])
        XCTAssertEqual(typed.code, "PAM_SUCCESS", typed.raw.stdout + typed.raw.stderr, file: file, line: line)
        XCTAssertEqual(typed.messages, [prompt], "the prompt first: no touch request before it", file: file, line: line)

        let finger = try transaction(service, answers: [""], touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", finger.raw.stdout, file: file, line: line)
        XCTAssertEqual(finger.messages.first, prompt, file: file, line: line)
        XCTAssertEqual(try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 1).first?.method, .fingerprint,
                       file: file, line: line)
        return prompt
    }

    /// With `prompt_first_services = none` the same file shows the touch request first (what it
    /// did before issue 33: the typed password waited touch_first seconds behind it).
    func testWithoutPromptFirstServicesI3lockWaitsBehindTheTouchRequest() throws {
        try config("prompt_first_services = none")
        let t = try transaction("i3lock", answers: [UnixStackFixture.daemonPassword])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages.first, "INFO: " + ContractText.touchRequest("i3lock"), "\(t.messages)")
    }

    /// GDM's password stack as Debian ships it, through common-auth with the profile: the prompt
    /// is biounlock's passcode-or-password prompt at once -- no touch request, no touch_first
    /// wait, no "touch the reader, then press Enter" -- and the Unix password or the PIN typed there logs in.
    /// The reader is gdm-fingerprint's: this stack never opens it (a touch answers nothing).
    func testGdmPasswordAsDebianShipsItPutsThePromptUpAtOnceAndLeavesTheReader() throws {
        let atOnce = "PROMPT_OFF: " + ContractText.done(ContractText.pinOrPassword, "gdm-password")
        let password = try gdmPassword(answers: [UnixStackFixture.daemonPassword])
        XCTAssertEqual(password.code, "PAM_SUCCESS", password.raw.stdout + password.raw.stderr)
        XCTAssertEqual(password.messages, [atOnce], "one prompt, at once, typed once")

        let pin = try gdmPassword(answers: [ModuleFixture.pin])
        XCTAssertEqual(pin.code, "PAM_SUCCESS", pin.raw.stdout)
        XCTAssertEqual(pin.messages, [atOnce])

        // A touch meanwhile is never read: the answer is the password, and nothing else happens.
        let touched = try gdmPassword(answers: ["not-the-password"], touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(touched.code, "PAM_AUTH_ERR", touched.raw.stdout)
        XCTAssertEqual(touched.messages, [atOnce])
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.biometricFailures, 0)
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.lastSuccess.map { $0 > 0 }, true)
        let fingerRows = try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 10).filter { $0.method == .fingerprint }
        XCTAssertEqual(fingerRows, [], "no finger in this stack")
    }

    // MARK: KDE Plasma's lock screen on Debian 12: no `kde` or `kde-fingerprint` file

    /// libkscreenlocker5 ships no PAM file, so kscreenlocker's two stacks, `kde` (the password
    /// field) and `kde-fingerprint` (run beside it), both fall to Debian's unedited `other`
    /// (libpam-runtime's: `@include common-auth` ...), which with the profile runs biounlock.
    /// `kde` is in password_services: the prompt is up at once, the Unix password or the PIN
    /// typed there unlocks, and a touch meanwhile is never read -- the reader is left to the
    /// fingerprint stack, where (still through `other`) the touch request comes first and a
    /// touch unlocks. (pam.d/kde-fingerprint, the project's file for that stack, is tested in
    /// FprintdModuleTests against the real fprintd.)
    func testKdeLockScreenStacksFallingToDebiansOtherLeaveTheReaderToTheFingerprintStack() throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.confdir + "/kde"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.confdir + "/kde-fingerprint"))
        let atOnce = "PROMPT_OFF: " + ContractText.done(ContractText.pinOrPassword, "kde")
        let password = try transaction("kde", answers: [UnixStackFixture.daemonPassword])
        XCTAssertEqual(password.code, "PAM_SUCCESS", password.raw.stdout + password.raw.stderr)
        XCTAssertEqual(password.messages, [atOnce], "one prompt, at once, typed once")
        let pin = try transaction("kde", answers: [ModuleFixture.pin])
        XCTAssertEqual(pin.code, "PAM_SUCCESS", pin.raw.stdout)
        XCTAssertEqual(pin.messages, [atOnce])
        let touched = try transaction("kde", answers: ["not-the-password"], touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(touched.code, "PAM_AUTH_ERR", touched.raw.stdout)
        XCTAssertEqual(touched.messages, [atOnce])
        XCTAssertEqual(try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 10).filter { $0.method == .fingerprint }, [],
                       "no finger in the password stack")

        let finger = try transaction("kde-fingerprint", answers: [""], touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", finger.raw.stdout)
        XCTAssertEqual(finger.messages.first, "INFO: " + ContractText.touchRequest("kde-fingerprint"), "\(finger.messages)")
        XCTAssertEqual(try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 1).first?.method, .fingerprint)

        // No touch: kde-fingerprint is in fingerprint_services, so biounlock is the reader alone
        // there -- the touch request until the timeout, and no PIN prompt of its own (before issue
        // 33 a PIN-or-password prompt came after touch_first). What follows is common-auth's
        // pam_unix, which the lock screen's fingerprint stack does not show.
        let untouched = try transaction("kde-fingerprint", answers: ["", ModuleFixture.pin])
        XCTAssertNotEqual(untouched.code, "PAM_SUCCESS", untouched.raw.stdout)
        XCTAssertEqual(untouched.messages.first, "INFO: " + ContractText.touchRequest("kde-fingerprint"), "\(untouched.messages)")
        XCTAssertFalse(untouched.messages.contains { $0.contains(ContractText.pinOrPassword) },
                       "no PIN prompt in the fingerprint stack: \(untouched.messages)")
        XCTAssertEqual(try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 1).first?.reason, "timed-out")
    }

    /// kde-fingerprint with `fingerprint_services = none`: a dialog like any other, so after
    /// touch_first biounlock's PIN-or-password prompt comes up in the fingerprint stack (what
    /// Debian's layout did before issue 33). This is also what shows the test above would see it.
    func testWithoutFingerprintServicesTheFingerprintStackAsksForThePIN() throws {
        try config("fingerprint_services = none")
        let t = try transaction("kde-fingerprint", answers: [ModuleFixture.pin])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertTrue(t.messages.contains { $0.hasPrefix("PROMPT_OFF: ") && $0.contains(ContractText.pinOrPassword) }, "\(t.messages)")
    }

    // MARK: SDDM (KDE's login screen) and LightDM as Debian ships them

    /// SDDM's greeter takes the user's name and password before PAM starts; its helper then runs
    /// `sddm` (`@include common-auth`) and answers every prompt with that password, while
    /// messages only go to the greeter's message line (sddm's PamBackend::converse) -- a caller
    /// like i3lock. `sddm` is in prompt_first_services: the prompt comes at once (no touch request
    /// holding the password back touch_first seconds), the Unix password or the PIN typed in the
    /// greeter logs in, and Login with the field empty waits for the finger, which logs in.
    /// SDDM has no fingerprint stack of its own, so the reader is biounlock's there.
    func testSddmAsDebianShipsItTakesTheGreetersPasswordAtOnceAndTheFinger() throws {
        let prompt = try assertPromptFirst("sddm")
        let pin = try transaction("sddm", answers: [ModuleFixture.pin])
        XCTAssertEqual(pin.code, "PAM_SUCCESS", pin.raw.stdout)
        XCTAssertEqual(pin.messages, [prompt])
        let wrong = try transaction("sddm", answers: ["not-the-password"])
        XCTAssertEqual(wrong.code, "PAM_AUTH_ERR", wrong.raw.stdout)
    }

    /// With `prompt_first_services = none`, sddm's stack shows the touch request first and holds
    /// the greeter's password back touch_first seconds (what Debian's layout did before).
    func testWithoutPromptFirstServicesSddmWaitsBehindTheTouchRequest() throws {
        try config("prompt_first_services = none")
        let t = try transaction("sddm", answers: [UnixStackFixture.daemonPassword])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages.first, "INFO: " + ContractText.touchRequest("sddm"), "\(t.messages)")
    }

    /// GNU screen's lock (C-a x): Debian ships no `screen` file, so the stack is `other`
    /// (common-auth with the profile). screen reads "Password:" itself, then answers every prompt
    /// with it and drops every text (lockers.sh runs the real one): the prompt at once, the typed
    /// Unix password or PIN taken; Enter alone waits for the finger.
    func testGnuScreensLockAsDebianShipsItTakesTheTypedSecretAtOnceAndTheFinger() throws {
        let prompt = try assertPromptFirst("screen")
        let pin = try transaction("screen", answers: [ModuleFixture.pin])
        XCTAssertEqual(pin.code, "PAM_SUCCESS", pin.raw.stdout)
        XCTAssertEqual(pin.messages, [prompt])
    }

    /// The greeters' own stacks start the greeter as its system user (sddm-greeter, lightdm-greeter:
    /// `auth required pam_permit.so`), and sddm-autologin logs in without a secret: biounlock never
    /// runs there -- no message, no reader, no audit row -- even for an enrolled user's name, and
    /// the profile's account line in common-account (sddm-greeter, sddm-autologin include it)
    /// changes nothing.
    func testTheGreetersOwnStacksAndAutologinNeverRunBiounlock() throws {
        let before = try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 100).count
        for service in ["sddm-greeter", "sddm-autologin", "lightdm-greeter"] {
            let t = try fixture.authenticate(service: service, touches: [ModuleFixture.scan(ModuleFixture.fingerID)],
                                             extra: ["--syslog", "--acct-mgmt"], wrapper: wrapper, touchWait: 500)
            XCTAssertEqual(t.code, "PAM_SUCCESS", service + ": " + t.raw.stdout + t.raw.stderr)
            XCTAssertTrue(t.raw.stdout.contains("ACCT 0 PAM_SUCCESS"), service + ": " + t.raw.stdout)
            XCTAssertEqual(t.messages, [], service)
            XCTAssertEqual(t.syslog, [], service)
        }
        XCTAssertEqual(try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 100).count, before)
    }

    /// LightDM's greeters (lightdm-gtk-greeter, slick-greeter) show each PAM message and prompt
    /// as it comes and wait for the user's answer, like a dialog; light-locker runs no PAM of its
    /// own (it switches to LightDM's greeter, whose `lightdm` stack unlocks). With Debian's
    /// `lightdm` file (`@include common-auth`): the touch request, a touch logs in; or the
    /// prompt after touch_first, where the PIN or the Unix password logs in.
    func testLightdmAsDebianShipsItAsksAsADialog() throws {
        let touchRequest = "INFO: " + ContractText.touchRequest("lightdm")
        let finger = try transaction("lightdm", answers: [""], touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", finger.raw.stdout + finger.raw.stderr)
        XCTAssertEqual(finger.messages.first, touchRequest, "\(finger.messages)")
        XCTAssertEqual(try fixture.store.recentEvents(user: ModuleFixture.enrolledUser, limit: 1).first?.method, .fingerprint)

        let prompt = "PROMPT_OFF: " + ContractText.orEnter(ContractText.pinOrPassword, "lightdm")
        for secret in [ModuleFixture.pin, UnixStackFixture.daemonPassword] {
            let t = try transaction("lightdm", answers: [secret])
            XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
            XCTAssertEqual(t.messages, [touchRequest, prompt])
        }
    }

    /// The same stack with `password_services = none`: gdm-password may use the reader again,
    /// so the touch request comes first (what Debian's layout did before issue 33), and a touch
    /// logs in. This is also what shows the test above would see a reader if there were one.
    func testWithoutPasswordServicesTheStackClaimsTheReaderAsBefore() throws {
        try config("password_services = none")
        let t = try gdmPassword(answers: [""], touches: [ModuleFixture.scan(ModuleFixture.fingerID)])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(t.messages.first, "INFO: " + ContractText.touchRequest("gdm-password"), "\(t.messages)")
    }
}
