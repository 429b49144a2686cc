import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// A hostile caller (docs/SECURITY.md, item 5): everything the invoking user controls -- the
/// environment, umask, cwd, open descriptors, resource limits, the user name typed -- changes
/// nothing that matters. PAM_USER is never changed, and PAM_AUTHTOK is set only for a password
/// typed at the type-or-touch prompt under policy=biometrics.
/// (SSH_CONNECTION, SSH_CLIENT and XDG_SESSION_ID are read, on purpose, and can only make the
/// module skip the finger: PolicyRuleTests.)
final class HostileCallerTests: ModuleTestCase {

    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let wrong = ModuleFixture.scan("mallory")
    var evil = ""

    override func prepare() throws {
        try fixture.service()
        // A directory the caller owns, full of things the module must not use.
        evil = fixture.dir + "/evil"
        try FileManager.default.createDirectory(atPath: evil + "/etc/security", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o777])
        for bait in ["biounlock.db", "etc/security/biounlock.conf", "sim"] {
            _ = FileManager.default.createFile(atPath: evil + "/" + bait, contents: Data("policy = biometrics\n".utf8))
        }
    }

    struct Scenario {
        let name: String
        let user: String
        let answers: [String]
        let touches: [SimCommand]
    }

    var scenarios: [Scenario] {
        [Scenario(name: "touch", user: user, answers: [], touches: [touch]),
         Scenario(name: "wrong finger, then the PIN", user: user, answers: [ModuleFixture.pin], touches: [wrong, .unplug]),
         Scenario(name: "a wrong PIN", user: user, answers: ["1357"], touches: [.unplug]),
         Scenario(name: "not enabled", user: ModuleFixture.otherUser, answers: [], touches: []),
         Scenario(name: "unknown user", user: "biounlock-no-such-user", answers: [], touches: [])]
    }

    /// Result code and everything shown, for comparison.
    func outcome(_ s: Scenario, environment: [String: String] = [:], extra: [String] = [], wrapper: [String] = []) throws -> [String] {
        let t = try fixture.authenticate(s.user, answers: s.answers, touches: s.touches, extra: extra,
                                         environment: environment, wrapper: wrapper, timeout: 30)
        XCTAssertEqual(t.raw.status, 0, "\(s.name): \(t.raw.stderr)")
        return [t.code] + t.messages
    }

    var evilIsUntouched: Bool {
        let contents = (try? FileManager.default.subpathsOfDirectory(atPath: evil))?.sorted() ?? []
        return contents == ["biounlock.db", "etc", "etc/security", "etc/security/biounlock.conf", "sim"]
    }

    func testTheEnvironmentChangesNothing() throws {
        var hostile: [String: String] = [:]
        for name in ["BIOUNLOCK_DB", "BIOUNLOCK_CONFIG", "BIOUNLOCK_SIM_SOCKET", "BIOUNLOCK_STORE", "FP_VIRTUAL_DEVICE",
                     "FP_VIRTUAL_IMAGE", "GIO_MODULE_DIR", "GIO_EXTRA_MODULES", "HOME", "TMPDIR", "SQLITE_TMPDIR",
                     "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "LD_LIBRARY_PATH"] {
            hostile[name] = evil
        }
        hostile.merge(["BIOUNLOCK_POLICY": "biometrics", "BIOUNLOCK_DEBUG": "1", "BIOUNLOCK_SENSOR": "simulated",
                       "FP_DEVICE_EMULATION": "1", "G_MESSAGES_DEBUG": "all", "G_DEBUG": "fatal-warnings",
                       "G_SLICE": "always-malloc", "GIO_USE_VFS": "local", "LANG": "tr_TR.UTF-8", "LC_ALL": "tr_TR.UTF-8",
                       "MALLOC_PERTURB_": "165", "SQLITE_DEBUG": "1", "PAM_USER": "root"]) { $1 }
        for s in scenarios {
            XCTAssertEqual(try outcome(s, environment: hostile), try outcome(s), s.name)
        }
        XCTAssertTrue(evilIsUntouched, "nothing was created in the caller's directories")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 2, "both wrong PINs counted in the real store")
    }

    /// umask 000 and a cwd full of bait. The simulated sensor's socket is 0600 whatever the umask.
    func testUmaskAndWorkingDirectoryChangeNothing() throws {
        let careless = ["/bin/sh", "-c", "umask 000; cd \"$0\" && exec \"$@\"", evil]
        for s in scenarios {
            XCTAssertEqual(try outcome(s, wrapper: careless), try outcome(s), s.name)
        }
        XCTAssertTrue(evilIsUntouched)

        // Catch the socket while the reader listens, then touch.
        final class Seen { var mode: mode_t = 0 }
        let seen = Seen()
        let socket = fixture.socket
        let watcher = Thread {
            var st = stat()
            let deadline = Date().addingTimeInterval(10)
            while lstat(socket, &st) != 0 || (st.st_mode & S_IFMT) != S_IFSOCK {
                if Date() > deadline { return }
                usleep(500)
            }
            seen.mode = st.st_mode & 0o7777
            _ = SimulatedFinger.send(ModuleFixture.scan(ModuleFixture.fingerID), to: socket, waitMilliseconds: 5000)
        }
        watcher.start()
        let t = try fixture.authenticate(wrapper: careless)
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(seen.mode, 0o600, "the control socket is root's alone, whatever the caller's umask")
    }

    /// Standard input, output and error closed: the store must not become descriptor 0, 1 or 2
    /// (where a stray write would corrupt it), and the transaction goes on as usual.
    func testClosedStandardDescriptorsChangeNothing() throws {
        for s in scenarios {
            XCTAssertEqual(try outcome(s, extra: ["--close-std"]), try outcome(s), s.name)
        }
        let check = try runProcess("/usr/bin/sqlite3", [fixture.storePath, "PRAGMA integrity_check"])
        XCTAssertEqual(check.stdout, "ok\n", check.stderr)
        XCTAssertEqual(try fixture.store.recentEvents(limit: 100).count, 2 * (scenarios.count - 2),
                       "every transaction audited (but the unknown user's and the one of a user who has not enabled biometric unlock)")
    }

    /// Resource limits the caller sets. Too few descriptors: whatever cannot be opened (store,
    /// sensor socket) is unavailable and the stack moves on; never success without the finger or
    /// passcode, never a crash.
    func testTooFewDescriptors() throws {
        for s in scenarios {
            let t = try fixture.authenticate(s.user, answers: s.answers, touches: s.touches,
                                             wrapper: ["/usr/bin/prlimit", "--nofile=6:6", "--"], timeout: 30, touchWait: 1000)
            XCTAssertEqual(t.raw.status, 0, "\(s.name): \(t.raw.stderr)")
            XCTAssertNotEqual(t.code, "NONE", s.name)
            if s.answers != [ModuleFixture.pin] && s.touches.first != touch {
                XCTAssertNotEqual(t.code, "PAM_SUCCESS", s.name)
            }
        }
    }

    /// Counted means checked: whatever the descriptor limit, a passcode attempt is either counted
    /// and checked against the hash, or neither. (With 6 descriptors a right PIN used to be
    /// counted as a failure and never checked: the WAL could not be opened for the sync that
    /// follows the count.)
    func testTooFewDescriptorsNeverCountAnAttemptThatIsNotChecked() throws {
        try fixture.service("sensor=libfprint") // no reader: straight to the passcode
        for limit in 4...24 { // with fewer, the dynamic linker cannot even load the harness
            for pin in [ModuleFixture.pin, "1357"] {
                let before = try XCTUnwrap(fixture.store.loadUser(user)?.passcodeFailures)
                let t = try fixture.authenticate(answers: [pin], extra: ["--count-argon2", "--syslog"],
                                                 wrapper: ["/usr/bin/prlimit", "--nofile=\(limit):\(limit)", "--"], timeout: 30)
                XCTAssertEqual(t.raw.status, 0, "limit \(limit): \(t.raw.stderr)")
                let checked = t.lines("ARGON2").contains { $0.hasPrefix("verify") }
                let after = try XCTUnwrap(fixture.store.loadUser(user)?.passcodeFailures)
                if pin == ModuleFixture.pin {
                    XCTAssertEqual(after, 0, "limit \(limit): a right PIN is never left counted as a failure:\n\(t.raw.stdout)")
                    XCTAssertEqual(t.code == "PAM_SUCCESS", checked, "limit \(limit): checked means accepted:\n\(t.raw.stdout)")
                } else {
                    XCTAssertEqual(after - before, checked ? 1 : 0, "limit \(limit): counted if and only if checked:\n\(t.raw.stdout)")
                    XCTAssertNotEqual(t.code, "PAM_SUCCESS")
                }
                try fixture.store.resetCounters(user: user, biometric: true, passcode: true)
            }
        }
    }

    /// 'ulimit -f 0' with SIGXFSZ ignored, while another process holds the store open (so it can be
    /// read): no write can extend a file, so no attempt can be counted. Before the count-first rule
    /// this was a free, uncounted guess per try (and the right PIN was accepted); now no passcode
    /// is checked. A touch still succeeds.
    func testAFileSizeLimitBuysNoUncountedGuesses() throws {
        _ = try fixture.store.loadUser(user) // this test's connection keeps -shm and -wal in place
        let truncate = try runProcess("/usr/bin/sqlite3", [fixture.storePath, "PRAGMA wal_checkpoint(TRUNCATE)"])
        XCTAssertEqual(truncate.status, 0, truncate.stderr)
        let limited = ["/usr/bin/prlimit", "--fsize=0:0", "--"]
        for pin in [ModuleFixture.pin, "1357", "0000"] {
            let t = try fixture.authenticate(answers: [pin], touches: [.unplug], extra: ["--host-check", "--syslog"], wrapper: limited)
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", "PIN \(pin): \(t.raw.stdout)")
            XCTAssertTrue(t.syslog.contains { $0.contains("cannot count the passcode attempt") }, t.raw.stdout)
        }
        let touched = try fixture.authenticate(touches: [touch], extra: ["--host-check"], wrapper: limited)
        XCTAssertEqual(touched.code, "PAM_SUCCESS")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
    }

    func testNamesThatAreAlmostAUserMatchNothing() throws {
        let before = try fixture.store.userNames()
        let names = ["DAEMON", " daemon", "daemon\t", "daemon\n", "daemon/", "./daemon", "daemon:x", "d\u{0430}emon",
                     "daemon\u{200B}", "daemon%s", "%n%n%n", String(repeating: "a", count: Accounts.maximumNameLength + 1),
                     "\u{FF}\u{FE}", "-daemon", "*"]
        for name in names {
            let t = try fixture.authenticate(name, answers: [ModuleFixture.pin], extra: ["--syslog"])
            XCTAssertEqual(t.code, "PAM_USER_UNKNOWN", name.debugDescription)
            XCTAssertTrue(t.syslog.allSatisfy { $0.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f } || $0.contains("…") }, "log lines are sanitised")
        }
        XCTAssertEqual(try fixture.store.userNames(), before, "no row for any of them")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
    }

    /// The module reads PAM_USER and never writes it; it sets PAM_AUTHTOK only to hand on text
    /// typed at its prompt that is not the biounlock passcode (so that pam_unix try_first_pass
    /// decides whether it is the Unix password) -- never the passcode itself, never after a
    /// touch, never when nothing was typed. A probe after the module reads both from inside the stack.
    func testPamUserIsNeverChangedAndAuthtokIsOnlyTextThatIsNotThePasscode() throws {
        let probe = "auth optional pam_echo.so @PROBE"
        try fixture.service(after: probe, control: "optional")
        try fixture.service("policy=biometrics max_tries=1", name: "fingeronly", after: probe, control: "optional")
        var cases = scenarios.map { ($0, "biotest", $0.name == "a wrong PIN" ? "set" : "unset") }
        cases += [(Scenario(name: "Enter alone", user: user, answers: [""], touches: [.unplug]), "biotest", "unset"),
                  (Scenario(name: "the Unix password", user: user, answers: ["unix-password"], touches: [.unplug]), "biotest", "set"),
                  (Scenario(name: "a failed conversation", user: user, answers: ["@FAIL"], touches: [.unplug]), "biotest", "unset"),
                  (Scenario(name: "finger only, wrong", user: user, answers: [], touches: [wrong]), "fingeronly", "unset"),
                  (Scenario(name: "finger only, right", user: user, answers: [], touches: [touch]), "fingeronly", "unset"),
                  (Scenario(name: "a name that is almost the user", user: "Daemon", answers: [], touches: []), "biotest", "unset")]
        for (s, service, authtok) in cases {
            let t = try fixture.authenticate(s.user, service: service, answers: s.answers, touches: s.touches)
            XCTAssertEqual(t.lines("PROBE"), ["user=\(s.user) authtok=\(authtok)"], "\(s.name): \(t.raw.stdout)")
        }
    }

    /// The same on a real terminal (script(1) gives the harness a pty as its controlling
    /// terminal), at the type-or-touch prompt: the password typed there is handed on, under either
    /// policy; the right PIN never is; and with nothing typed, nothing is.
    func testAuthtokAtTheTypeOrTouchPrompt() throws {
        let probe = "auth optional pam_echo.so @PROBE"
        try fixture.service("policy=biometrics", name: "fingeronly", after: probe, control: "optional")
        try fixture.service(after: probe, control: "optional")
        let cases: [(service: String, typed: String, authtok: String)] = [
            ("fingeronly", "unix-password", "set"),
            ("biotest", "unix-password", "set"),
            ("biotest", ModuleFixture.pin, "unset"),
            ("biotest", "1357", "set"),
            ("biotest", "", "unset"),
        ]
        for c in cases {
            let harness = [harnessPath, "--confdir", fixture.confdir, "--service", c.service, "--user", user].joined(separator: " ")
            let r = try runProcess("/usr/bin/script", ["-qec", harness, "/dev/null"], stdin: c.typed + "\r", timeout: 30)
            let probed = r.stdout.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("PROBE: ") }
            XCTAssertEqual(probed, ["PROBE: user=\(user) authtok=\(c.authtok)"], "\(c.service), typed \(c.typed): \(r.stdout)")
        }
    }
}
