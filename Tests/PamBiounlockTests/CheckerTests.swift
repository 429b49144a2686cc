import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// A fixture for the module running as an ordinary user, as screen lockers run it: the built
/// module through real libpam (pam-harness), the harness started as `daemon` (setpriv) in a
/// private mount namespace, and a setuid-root copy of build/biounlock-check in a root-owned
/// directory. Inside the namespace:
/// - /etc/security is the fixture's own directory, whose biounlock.conf names the fixture's
///   store and simulated sensor (the checker reads settings from that file only);
/// - /dev is an overlay of the real /dev with a /dev/log socket, read by a small listener into
///   `dir/syslog`, so that the checker's own syslog lines can be compared with a root caller's.
/// The store, its directory and the sensor socket stay root's (0700/0600): the module as the
/// user cannot read them, only the checker can. Nothing outside the fixture's directories is
/// changed; the setuid copy is removed with its directory in tearDown.
final class CheckerWorld {
    let fixture: ModuleFixture
    let helpers: String
    var checker: String { helpers + "/biounlock-check" }
    var etcSecurity: String { fixture.dir + "/etc-security" }
    var syslogFile: String { fixture.dir + "/syslog" }
    let caller = ModuleFixture.enrolledUser   // daemon, uid 1
    let callerUID = 1

    init() throws {
        fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        chmod(fixture.dir, 0o755)   // the harness, as daemon, reads the service files; db/ stays 0700
        helpers = try trustedScratchDirectory()
        try FileManager.default.copyItem(atPath: buildDirectory + "/biounlock-check", toPath: helpers + "/biounlock-check")
        chown(checker, 0, 0)
        chmod(checker, 0o4755)
        for d in [etcSecurity, fixture.dir + "/dev-upper", fixture.dir + "/dev-work"] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        }
        try config()
        try service()
        fixture.closeStore()
    }

    deinit { try? FileManager.default.removeItem(atPath: helpers) }

    /// The root-owned config file: the store, the sensor and the test rules.
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
        try text.write(toFile: etcSecurity + "/biounlock.conf", atomically: false, encoding: .utf8)
        chmod(etcSecurity + "/biounlock.conf", 0o644)
    }

    /// The locker's pam.d line: only the module's own argument and what a locker line carries.
    func service(_ arguments: String = "", name: String = "biotest", after: String? = nil,
                 control: String = "[success=done ignore=ignore default=die]") throws {
        try fixture.service("check_helper=\(checker) touch_first=0 \(arguments)", name: name, includeDefaults: false,
                            after: after, control: control)
    }

    /// The namespace: /etc/security and /dev/log as above, then CMD as daemon (or as root);
    /// `redirect` is added to CMD's line (closing descriptors for the hostile runs); `before` goes
    /// in front of it (run as root: prlimit), `setpriv` among setpriv's options (as root too: the
    /// bounding set).
    func wrapper(asUser: Bool, redirect: String = "", before: String = "", setpriv: String = "") -> [String] {
        let listener = """
            import os, socket, sys
            path = '/dev/log'
            if os.path.exists(path): os.unlink(path)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(path); os.chmod(path, 0o666)
            open(sys.argv[2], 'w').close(); s.settimeout(60)
            with open(sys.argv[1], 'a') as out:
                while True:
                    line = s.recv(65536).decode('utf-8', 'replace')
                    if 'END-OF-TRANSACTION' in line: break
                    out.write(line + '\\n'); out.flush()
            """
        let script = """
            d=$0
            mount --bind "$d/etc-security" /etc/security || exit 70
            mount -t overlay overlay -o "lowerdir=/dev,upperdir=$d/dev-upper,workdir=$d/dev-work" /dev || exit 71
            if [ -e "$d/etc-shadow" ]; then mount --bind "$d/etc-shadow" /etc/shadow || exit 72; fi
            rm -f "$d/listening"
            python3 -c "$LISTENER" "$d/syslog" "$d/listening" 3<&- & l=$!
            i=0; while [ ! -e "$d/listening" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done
            \(before) \(asUser ? "setpriv \(setpriv) --reuid=\(callerUID) --regid=\(callerUID) --clear-groups " : "")"$@" \(redirect); rc=$?
            logger -u /dev/log END-OF-TRANSACTION 3<&-; wait $l
            exit $rc
            """
        return ["/usr/bin/env", "LISTENER=\(listener)", "/usr/bin/unshare", "--mount", "--propagation", "private",
                "/bin/sh", "-c", script, fixture.dir]
    }

    /// One transaction; `asUser` false runs the same stack as root (the module decides itself).
    func authenticate(_ user: String? = nil, asUser: Bool = true, service: String = "biotest", answers: [String] = [],
                      touches: [SimCommand] = [], touchWait: Int = 5000, extra: [String] = [],
                      environment: [String: String] = [:]) throws -> (Transaction, checkerLog: [String]) {
        try? FileManager.default.removeItem(atPath: syslogFile)
        let t = try fixture.authenticate(user ?? caller, service: service, answers: answers, touches: touches,
                                         extra: ["--syslog"] + extra, environment: environment, wrapper: wrapper(asUser: asUser),
                                         timeout: 60, touchWait: touchWait)
        if ProcessInfo.processInfo.environment["CHECKER_TEST_DEBUG"] != nil { print(t.raw.stdout, t.raw.stderr, (try? String(contentsOfFile: syslogFile, encoding: .utf8)) ?? "") }
        XCTAssertEqual(t.raw.status, 0, "harness: \(t.raw.stdout) \(t.raw.stderr)")
        let log = ((try? String(contentsOfFile: syslogFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        return (t, log)
    }

    /// The message part of a syslog line the checker wrote ("<86>Dec  1 10:00:00 biounlock-check[42]: TEXT").
    static func messages(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            guard let range = line.range(of: "biounlock-check[") else { return nil }
            return line[range.upperBound...].split(separator: " ", maxSplits: 1).dropFirst().first.map(String.init)
        }
    }

    /// A shadow file of the fixture's own over /etc/shadow in the namespace (root:shadow 0640, as
    /// Debian's, so that the locker's pam_unix reads it through unix_chkpwd): `daemon` gets the
    /// Unix password `password`, root stays locked; no host hash is copied.
    func shadow(daemonPassword password: String) throws {
        let hash = try runProcess("/usr/bin/openssl", ["passwd", "-6", "-stdin"], stdin: password)
        guard hash.status == 0, hash.stdout.hasPrefix("$6$") else { throw CocoaError(.fileWriteUnknown) }
        let today = Int(Date().timeIntervalSince1970) / 86400 - 1
        let text = "root:*:\(today):0:99999:7:::\ndaemon:\(hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)):\(today):0:99999:7:::\n"
        let path = fixture.dir + "/etc-shadow"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chown(path, 0, getgrnam("shadow").map { $0.pointee.gr_gid } ?? 0)
        chmod(path, 0o640)
    }

    var events: [AuditEvent] {
        get throws {
            let store = try Store.open(path: fixture.storePath, mode: .administer)
            return try store.recentEvents(limit: 1000)
        }
    }

    func user(_ name: String) throws -> UserRecord? {
        try Store.open(path: fixture.storePath, mode: .administer).loadUser(name)
    }
}

/// The PAM-level matrix for callers that run as the user (issue 14): touch, PIN, wrong PIN,
/// Unix password, another user's name, the checker missing or untrusted.
final class CheckerTests: XCTestCase {
    var world: CheckerWorld!
    override func setUpWithError() throws { world = try CheckerWorld() }
    override func tearDown() { world = nil }

    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let pin = ModuleFixture.pin

    /// What a root caller and a caller running as the user each see, get and leave behind.
    func bothWays(answers: [String], touches: [SimCommand] = [], extra: [String] = [], environment: [String: String] = [:]) throws
        -> (root: Transaction, user: Transaction, rootLog: [String], userLog: [String], rows: [AuditEvent]) {
        let (root, _) = try world.authenticate(asUser: false, answers: answers, touches: touches, extra: extra, environment: environment)
        let (user, checkerLog) = try world.authenticate(answers: answers, touches: touches, extra: extra, environment: environment)
        let rows = Array(try world.events.prefix(2))
        return (root, user, root.syslog, CheckerWorld.messages(checkerLog), rows)
    }

    func testAsTheUserTheFingerThePINAndAWrongPINDoWhatTheyDoForRoot() throws {
        let cases: [(String, [String], [SimCommand], String)] = [
            ("touch", [""], [touch], "PAM_SUCCESS"),
            ("PIN", [pin], [], "PAM_SUCCESS"),
            ("wrong PIN", ["1357"], [], "PAM_AUTHINFO_UNAVAIL"),
            ("Unix password", ["unix-Password-9"], [], "PAM_AUTHINFO_UNAVAIL"),
        ]
        for (name, answers, touches, code) in cases {
            let r = try bothWays(answers: answers, touches: touches)
            XCTAssertEqual(r.user.code, code, "\(name): \(r.user.raw.stdout)")
            XCTAssertEqual(r.user.code, r.root.code, name)
            XCTAssertEqual(r.user.messages, r.root.messages, "\(name): the same prompt and messages")
            XCTAssertEqual(r.user.messages.first, "PROMPT_OFF: PIN or password for biotest, or touch the reader, then press Enter: ", name)
            XCTAssertEqual(r.rows.count, 2, name)
            if r.rows.count == 2 {
                let (u, root) = (r.rows[0], r.rows[1])
                XCTAssertEqual([u.user, u.service, u.tty, u.rhost, u.method.rawValue, u.outcome, u.reason],
                               [root.user, root.service, root.tty, root.rhost, root.method.rawValue, root.outcome, root.reason],
                               "\(name): the same audit row")
            }
            XCTAssertTrue(r.rootLog.contains { $0.hasPrefix("pam_biounlock(biotest:auth): user=") }, name)
            XCTAssertEqual(r.userLog, r.rootLog, "\(name): the checker logs exactly the root caller's lines")
        }
        XCTAssertEqual(try world.user(world.caller)?.passcodeFailures, 2, "both wrong PINs counted, the Unix password not")
    }

    func testTextThatIsNotThePINGoesOnAsPAMAuthtok() throws {
        try world.service(name: "probe", after: "auth optional pam_echo.so @PROBE\nauth requisite pam_debug.so auth=try_again",
                          control: "[success=done ignore=ignore authinfo_unavail=ignore default=die]")
        for typed in ["1357", "unix-Password-9"] {
            let (t, _) = try world.authenticate(service: "probe", answers: [typed])
            XCTAssertEqual(t.lines("PROBE"), ["user=\(world.caller) authtok=set"], "\(typed): \(t.raw.stdout)")
        }
        let (t, _) = try world.authenticate(service: "probe", answers: [pin])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.lines("PROBE"), [], "the stack ends at the PIN: it never becomes PAM_AUTHTOK")
    }

    func testNoOtherUserIsEverAuthenticatedByFingerOrPIN() throws {
        // bin gets a finger and a PIN of its own, so that there is something to steal.
        let store = try Store.open(path: world.fixture.storePath, mode: .administer)
        try store.saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array("bin-right-index".utf8), created: 1), user: "bin")
        try store.setPasscode(StoredPasscode(hash: try Passcode.hash(try XCTUnwrap(Secret(bytes: Array("1111".utf8))), opsLimit: 1, memLimit: 8192),
                                             kind: .pin), user: "bin", at: 1)
        try store.setEnabled(true, user: "bin", service: nil, at: 1)
        let before = try world.events.count
        for (user, answers, touches) in [("bin", ["1111"], [SimCommand]()), ("bin", [""], [ModuleFixture.scan("bin-right-index")]),
                                         ("root", [pin], []), ("daemon ", [pin], [])] {
            // (No reader is opened for a refused request: the touch finds no sensor, and gives up soon.)
            let (t, log) = try world.authenticate(user, answers: answers, touches: touches, touchWait: 300)
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", "\(user): \(t.raw.stdout)")
            XCTAssertEqual(t.messages, [], "\(user): nothing asked")
            XCTAssertTrue(CheckerWorld.messages(log).contains { $0.contains("uid 1 (daemon) asked to authenticate \(sanitizedForLog(user)): refused") },
                          "\(user): logged: \(log)")
        }
        XCTAssertEqual(try world.events.count, before, "no audit row for a refused request")
        XCTAssertEqual(try world.user("bin")?.passcodeFailures, 0)
        XCTAssertNil(try world.user("bin")?.lastSuccess)
    }

    func testWithoutAUsableCheckerTheModuleFallsThroughToThePasswordAndSaysWhy() throws {
        let helpers = world.helpers, checker = world.checker
        let variants: [(String, () -> Void, String)] = [
            ("missing", { rename(checker, checker + ".away") }, "does not exist"),
            ("not setuid", { chmod(checker, 0o755) }, "is not setuid root"),
            ("not root's", { chown(checker, 1, 1); chmod(checker, 0o4755) }, "is owned by uid 1, not root"),
            ("in a directory others can write", { chmod(helpers, 0o777) }, "is writable by group or others"),
        ]
        for (name, breakIt, why) in variants {
            breakIt()
            let (t, log) = try world.authenticate(answers: [pin])
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", name)
            XCTAssertEqual(t.messages, [], "\(name): nothing asked, the password module asks at once")
            XCTAssertTrue(t.syslog.contains { $0.contains("check_helper is refused") && $0.contains(why) }, "\(name): \(t.syslog)")
            XCTAssertEqual(CheckerWorld.messages(log), [], "\(name): the checker never ran")
            // Put it back for the next variant.
            rename(checker + ".away", checker)
            chmod(helpers, 0o755)
            chown(checker, 0, 0)
            chmod(checker, 0o4755)
        }
        XCTAssertEqual(try world.events.count, 0)
    }

    /// A checker that dies, is killed or talks nonsense is the password, at once: never a success.
    func testACheckerThatDiesOrBreaksTheProtocolMeansThePassword() throws {
        // (A checker gone before the request was sent, or after: which one is up to the scheduler.)
        let gone = ["did not take the request", "ended without a decision"]
        for (name, body, why) in [("exits", "exit 0", gone), ("is killed", "kill -KILL $$", gone),
                                  ("sends garbage", "printf '\\000\\000\\000\\002zz' >&3; sleep 1", ["sent a malformed message"])] {
            try writeScript(world.checker, body)
            chmod(world.checker, 0o4755)   // (the kernel ignores setuid on scripts: this one runs as daemon)
            let (t, _) = try world.authenticate(answers: [pin])
            XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", name)
            XCTAssertEqual(t.messages, [], name)
            XCTAssertTrue(t.syslog.contains { line in why.contains { line.contains("biounlock-check \($0); falling back to the password") } },
                          "\(name): \(t.syslog)")
        }
    }

    /// Relaying through the checker leaves the locker as it found it: signal actions and mask,
    /// limits, umask, cwd, threads, descriptors, environment -- and no child behind (reaped, also
    /// when the host reaps or ignores SIGCHLD itself).
    func testTheHostIsLeftAsItWasAndNoChildRemains() throws {
        let (t, _) = try world.authenticate(answers: [pin], extra: ["--host-check"])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.lines("HOST"), ["unchanged after pam_authenticate 1", "unchanged after pam_end"], t.raw.stdout)
        for sigchld in [[], ["--sigchld", "reap"], ["--sigchld", "ignore"]] {
            let (c, _) = try world.authenticate(answers: ["1357"], extra: ["--check-host"] + sigchld)
            XCTAssertEqual(c.code, "PAM_AUTHINFO_UNAVAIL")
            XCTAssertTrue(c.raw.stdout.contains("HOST signals=unchanged mask=unchanged children=none"), "\(sigchld): \(c.raw.stdout)")
        }
    }

    /// The checker speaks the locker's language. It runs in the C locale with a cleared
    /// environment, so the module relays the locale its messages are in and LANGUAGE (plain names
    /// only), and the checker shows what a root caller's module shows in that locale -- from the
    /// catalogs of its own config's locale_dir. The locker here is the harness as daemon with
    /// --setlocale (setlocale(LC_ALL, "") as i3lock and xscreensaver do).
    func testTheCheckerSpeaksTheLockersLanguage() throws {
        try world.config("locale_dir = \(buildDirectory)/locale")
        let dialog: [(String, [String: String], String)] = [
            ("zh_CN", ["LANG": "zh_CN.UTF-8"], "PROMPT_OFF: PIN 码或密码（biotest），或触摸指纹读取器后按回车键："),
            ("LANGUAGE", ["LANG": "C.UTF-8", "LANGUAGE": "zh_CN"], "PROMPT_OFF: PIN 码或密码（biotest），或触摸指纹读取器后按回车键："),
            ("de_DE", ["LANG": "de_DE.UTF-8"], "PROMPT_OFF: PIN oder Passwort für biotest (oder Fingerabdruckleser berühren, dann Eingabetaste): "),
            ("C", ["LANG": "C"], "PROMPT_OFF: PIN or password for biotest, or touch the reader, then press Enter: "),
            ("GB18030", ["LANG": "zh_CN.GB18030"], "PROMPT_OFF: PIN or password for biotest, or touch the reader, then press Enter: "),
            ("a path in LANGUAGE", ["LANG": "C.UTF-8", "LANGUAGE": "../../../tmp/zh_CN"],
             "PROMPT_OFF: PIN or password for biotest, or touch the reader, then press Enter: "),
        ]
        for (name, environment, prompt) in dialog {
            let r = try bothWays(answers: [pin], extra: ["--setlocale"], environment: environment)
            XCTAssertEqual(r.user.code, "PAM_SUCCESS", "\(name): \(r.user.raw.stdout)")
            XCTAssertEqual(r.user.messages, r.root.messages, "\(name): what a root caller shows in that locale")
            XCTAssertEqual(r.user.messages.count, 1, name)
            XCTAssertEqual(r.user.messages.first, prompt, name)
            XCTAssertEqual(r.userLog, r.rootLog, "\(name): the same log lines")
        }
        // A notice and a prompt with the service in it, in French (no finger enrolled).
        try Store.open(path: world.fixture.storePath, mode: .administer).deleteTemplates(user: world.caller, finger: nil)
        let r = try bothWays(answers: [pin], extra: ["--setlocale"], environment: ["LANG": "fr_FR.UTF-8"])
        XCTAssertEqual(r.user.messages, r.root.messages)
        XCTAssertEqual(r.user.messages.first, "ERROR: Aucune empreinte enregistrée.", r.user.raw.stdout)
        XCTAssertEqual(r.user.code, "PAM_SUCCESS")
    }

    /// remote=ignore holds through the checker: what the module relays (PAM_RHOST, SSH_CONNECTION)
    /// can make the session remote, and a remote session is left alone, as for root.
    func testARemoteSessionIsLeftAloneAsForRoot() throws {
        for extra in [["--rhost", "203.0.113.5"], ["--env", "SSH_CONNECTION=203.0.113.5 50000 192.0.2.1 22"]] {
            let (root, _) = try world.authenticate(asUser: false, answers: [pin], extra: extra)
            let (user, _) = try world.authenticate(answers: [pin], extra: extra)
            XCTAssertEqual(user.code, "PAM_TRY_AGAIN", "PAM_IGNORE (the stack's marker): \(user.raw.stdout)")
            XCTAssertEqual(user.code, root.code)
            XCTAssertEqual(user.messages, [], "nothing asked")
        }
        XCTAssertEqual(try world.events.count, 0, "nothing recorded")
    }
}

/// Issue 33, item 4, for lockers that run as the user: the Unix password typed at such a locker
/// ends the passcode's escalation as a PIN would -- because the checker, as root, saw it is the
/// password (CheckerService.witnessUnixPassword), never because the caller says so. The real
/// setuid checker, the real pam_unix after the module (through unix_chkpwd, as the user), the
/// fixture's own shadow file in the namespace.
final class CheckerPasswordWitnessTests: XCTestCase {
    var world: CheckerWorld!
    let password = "daemon-Unix-pw-4"
    override func setUpWithError() throws {
        try XCTSkipUnless(getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "needs root and openssl")
        world = try CheckerWorld()
        try world.shadow(daemonPassword: password)
        // The locker's stack: Debian's i3lock through login's common-auth with the profile, in short.
        try world.service(after: """
            auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
            auth requisite pam_deny.so
            auth required pam_permit.so
            """, control: ModuleFixture.recommendedControl)
    }
    override func tearDown() { world = nil }

    private func escalate() throws {
        let store = try Store.open(path: world.fixture.storePath, mode: .administer)
        for _ in 0..<6 { _ = try store.recordPasscodeFailure(user: world.caller, at: SystemClock().now() - 3600) }
    }

    func testTheUnixPasswordAtALockerEndsTheEscalation() throws {
        try escalate()
        let (t, _) = try world.authenticate(answers: [password])
        XCTAssertEqual(t.code, "PAM_SUCCESS", "pam_unix (unix_chkpwd) took the handed-on password: \(t.raw.stdout)")
        XCTAssertEqual(try world.user(world.caller)?.passcodeFailures, 0, "the checker saw the password: counts cleared")
        XCTAssertNotNil(try world.user(world.caller)?.passcodeSuccessAt)
    }

    /// A wrong password (or a wrong PIN) clears nothing, and neither does a caller that merely
    /// claims success: the module running as the user has no way to tell the checker anything
    /// but its answers.
    func testAWrongPasswordAtALockerClearsNothing() throws {
        try escalate()
        let (t, _) = try world.authenticate(answers: ["not-the-password"])
        XCTAssertEqual(t.code, "PAM_AUTH_ERR")
        XCTAssertEqual(try world.user(world.caller)?.passcodeFailures, 6)
        let (pinLike, _) = try world.authenticate(answers: ["13579"])
        XCTAssertEqual(pinLike.code, "PAM_AUTH_ERR")
        XCTAssertEqual(try world.user(world.caller)?.passcodeFailures, 7, "a wrong PIN (the wait is over) is counted, nothing cleared")
    }

    /// Nothing to clear: the checker does not check the password at all (no extra hash on the
    /// typed unlock), and nothing is written.
    func testNothingToClearNothingChecked() throws {
        try world.config("debug")
        let (t, log) = try world.authenticate(answers: ["not-the-password"])
        XCTAssertEqual(t.code, "PAM_AUTH_ERR")
        XCTAssertFalse(CheckerWorld.messages(log).contains { $0.contains("Unix password") }, "\(log)")
        try escalate()
        let (again, againLog) = try world.authenticate(answers: ["not-the-password"])
        XCTAssertEqual(again.code, "PAM_AUTH_ERR")
        XCTAssertTrue(CheckerWorld.messages(againLog).contains { $0.contains("is not the Unix password; nothing cleared") }, "\(againLog)")
    }
}
