import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockSensors

/// Issue 32, items 2 and 3: the Unix password kept for the boot in a root-only kernel key after a
/// password login at a login service, and handed on as PAM_AUTHTOK after a finger or PIN login
/// there -- never elsewhere. Real libpam, real pam_unix with the fixture's shadow file, the real
/// kernel keyring.
///
/// The keyring is the test's own: every transaction runs (nsenter) in one user namespace of the
/// test's (uids and gids mapped to themselves, so root is root and pam_unix reads the fixture's
/// shadow file as root) with its own mount namespace; the kernel gives each user namespace its
/// own user keyrings, so the module's "root's user keyring" here is not the host's, and it goes
/// with the namespace when the test ends.
final class KeptPasswordTests: XCTestCase {
    var unix: UnixStackFixture!
    var holder: Process?
    var fixture: ModuleFixture { unix.module }
    let user = ModuleFixture.enrolledUser
    let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    let restart = "INFO: Password required after a restart."

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first: \(modulePath) is missing")
        try XCTSkipUnless(UnixStackFixture.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/keyctl"),
                          "needs root, unshare, openssl and keyctl (scripts/deps)")
        unix = try UnixStackFixture()
        try fixture.enrolDefaultUser()
        // The namespace holder: a sleep in a new user and mount namespace (stopped in tearDown).
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        p.arguments = ["--user", "--mount", "--propagation", "private", "--", "/bin/sleep", "120"]
        try launch(p)
        holder = p
        let mine = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/user")
        let deadline = Date().addingTimeInterval(10)
        while (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(p.processIdentifier)/ns/user")) == mine {
            guard Date() < deadline else { throw CocoaError(.fileReadUnknown) }
            usleep(5000)
        }
        for map in ["uid_map", "gid_map"] {
            try "0 0 4294967295\n".write(toFile: "/proc/\(p.processIdentifier)/\(map)", atomically: false, encoding: .utf8)
        }
        let mounted = try inside(["/bin/sh", "-c",
            #"mount --bind "$0/passwd" /etc/passwd && mount --bind "$0/group" /etc/group && mount --bind "$0/shadow" /etc/shadow"#, unix.etc])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        try loginStack()
    }

    override func tearDown() {
        if let holder, holder.isRunning { holder.terminate(); holder.waitUntilExit() }
        holder = nil
        unix = nil
    }

    /// `command` in the test's namespaces, as root.
    /// (Every descriptor but 0-2 closed first: Foundation's Process leaves one of its own open in
    /// its children, and a daemon started from there -- dbus-daemon, gnome-keyring-daemon -- would
    /// hold it and keep the test waiting for the command's end.)
    var wrapper: [String] {
        ["/usr/bin/nsenter", "--target", "\(holder?.processIdentifier ?? 0)", "--user", "--mount", "--", "/bin/bash", "-c",
         #"for f in /proc/$$/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ]; then exec {n}>&-; fi; done 2>/dev/null; exec "$@""#, "bash"]
    }
    func inside(_ command: [String]) throws -> ProcessResult {
        let full = wrapper + command
        return try runProcess(full[0], Array(full.dropFirst()), environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"])
    }

    /// The module's defaults as ModuleFixture writes them (for the keep_password line).
    var defaults: String { "db=\(fixture.storePath) \(fixture.sensorArguments) config=\(fixture.dir)/none.conf lid_path=\(fixture.dir)/lid logind_path=\(fixture.dir)/sessions proc_path=\(fixture.dir)/proc" }

    /// Debian's login stacks as pam-auth-update writes common-auth (a success of biounlock jumps
    /// to pam_permit, so the lines after the password block run either way), the keep_password
    /// line, then a probe standing where pam_gnome_keyring reads PAM_AUTHTOK.
    func loginStack(name: String = "login", arguments: String = "require_passcode=boot") throws {
        try fixture.service(arguments, name: name, after: """
            auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
            auth requisite pam_deny.so
            auth required pam_permit.so
            auth optional \(modulePath) \(defaults) \(arguments) keep_password
            auth optional pam_echo.so @PROBETOKEN
            """, control: "[success=2 ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die]")
    }

    func login(service: String = "login", unix password: String? = nil, answers: [String] = [], touches: [SimCommand] = []) throws -> Transaction {
        var extra = ["--setcred"]
        if let password { extra += ["--answer-prompt", ContractText.unixPrompt + "=" + password] }
        return try fixture.authenticate(service: service, answers: answers, touches: touches, extra: extra, wrapper: wrapper)
    }

    var keyName: String { "biounlock:password:\(getpwnam(user)?.pointee.pw_uid ?? 0)" }

    /// The key's id in the namespace's root user keyring, or nil.
    func keyID() throws -> String? {
        let r = try inside(["/usr/bin/keyctl", "search", "@u", "user", keyName])
        return r.status == 0 ? r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }

    /// Item 2 and 3 together: the first login of the boot takes the Unix password and keeps it;
    /// the finger and the PIN at login then hand it on; sudo and su never get it.
    func testThePasswordOfTheBootIsKeptAndHandedOnAfterTheFingerOnlyAtLogin() throws {
        let password = try login(unix: UnixStackFixture.daemonPassword)
        XCTAssertEqual(password.code, "PAM_SUCCESS", password.raw.stdout)
        XCTAssertEqual(password.messages.first, restart, "no finger at the first login of the boot")
        XCTAssertEqual(password.lines("PROBE"), ["authtok=\(UnixStackFixture.daemonPassword)"], "pam_unix's own")
        let id = try XCTUnwrap(try keyID(), "kept in root's user keyring")

        // Root-only: possessor nothing, owner root everything, group and other nothing.
        let described = try inside(["/usr/bin/keyctl", "rdescribe", id])
        XCTAssertEqual(described.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "user;0;0;003f0000;\(keyName)")
        XCTAssertEqual(try inside(["/usr/bin/keyctl", "print", id]).stdout.trimmingCharacters(in: .newlines), UnixStackFixture.daemonPassword, "root reads it")
        // The user it belongs to cannot read it, not even holding root's user keyring through a
        // session keyring inherited from root (possession grants nothing).
        let uid = "\(getpwnam(user)?.pointee.pw_uid ?? 1)"
        let asUser = try inside(["/usr/bin/keyctl", "session", "-", "/bin/sh", "-c",
            "keyctl link @u @s >/dev/null && exec setpriv --reuid=\(uid) --regid=\(uid) --clear-groups keyctl print \(id)"])
        XCTAssertNotEqual(asUser.status, 0, asUser.stdout)
        XCTAssertFalse(asUser.stdout.contains(UnixStackFixture.daemonPassword))

        // The finger at login: PAM_AUTHTOK is the kept password for the modules below.
        let finger = try login(touches: [touch])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", finger.raw.stdout)
        XCTAssertEqual(finger.messages, ["INFO: " + ContractText.touchRequest("login")])
        XCTAssertEqual(finger.lines("PROBE"), ["authtok=\(UnixStackFixture.daemonPassword)"])
        XCTAssertEqual(try keyID(), id, "a finger login neither renews nor replaces it")
        // The PIN at login: the same.
        let pin = try login(answers: [ModuleFixture.pin])
        XCTAssertEqual(pin.code, "PAM_SUCCESS", pin.raw.stdout)
        XCTAssertEqual(pin.lines("PROBE"), ["authtok=\(UnixStackFixture.daemonPassword)"])

        // sudo and su (no login services): the finger succeeds, PAM_AUTHTOK stays unset.
        for service in ["sudo", "su"] {
            try loginStack(name: service)
            let t = try login(service: service, touches: [touch])
            XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
            XCTAssertEqual(t.lines("PROBE"), ["authtok=(unset)"], "\(service) never gets the kept password")
        }
        // A password login renews it (a new key, the old one invalidated).
        XCTAssertEqual(try login(unix: UnixStackFixture.daemonPassword, answers: [UnixStackFixture.daemonPassword]).code, "PAM_SUCCESS")
        let renewed = try XCTUnwrap(try keyID())
        XCTAssertNotEqual(renewed, id)
        XCTAssertNotEqual(try inside(["/usr/bin/keyctl", "print", id]).status, 0, "the earlier key is gone")
    }

    /// A changed password: the kept one no longer matches the shadow hash, is not handed on and
    /// is dropped; the next password login keeps the new one.
    func testAChangedPasswordIsDroppedNotHandedOn() throws {
        XCTAssertEqual(try login(unix: UnixStackFixture.daemonPassword).code, "PAM_SUCCESS")
        XCTAssertNotNil(try keyID())
        let hash = try runProcess("/usr/bin/openssl", ["passwd", "-6", "-stdin"], stdin: "a-new-password-7")
        var shadow = try String(contentsOfFile: unix.etc + "/shadow", encoding: .utf8)
        shadow = shadow.split(separator: "\n").map { line in
            line.hasPrefix("daemon:") ? "daemon:\(hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)):19000:0:99999:7:::" : String(line)
        }.joined(separator: "\n") + "\n"
        try shadow.write(toFile: unix.etc + "/shadow", atomically: false, encoding: .utf8)  // the bind-mounted inode
        let finger = try login(touches: [touch])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", finger.raw.stdout)
        XCTAssertEqual(finger.lines("PROBE"), ["authtok=(unset)"])
        XCTAssertNil(try keyID(), "dropped")
        XCTAssertEqual(try login(unix: "a-new-password-7", answers: ["a-new-password-7"]).code, "PAM_SUCCESS")
        XCTAssertNotNil(try keyID())
    }

    /// Only a password the stack accepted and that is the account's is kept: a wrong password
    /// fails the stack; the keep_password line without biounlock's note (biounlock did not hand
    /// this user on) keeps nothing; a service that is no login service keeps nothing.
    func testNothingIsKeptWithoutTheNoteOrOutsideTheLoginServices() throws {
        XCTAssertEqual(try login(unix: "wrong").code, "PAM_AUTH_ERR")
        XCTAssertNil(try keyID())
        try loginStack(name: "sudo")
        XCTAssertEqual(try login(service: "sudo", unix: UnixStackFixture.daemonPassword, answers: [UnixStackFixture.daemonPassword]).code, "PAM_SUCCESS")
        XCTAssertNil(try keyID(), "sudo is no login service")
        // Biometric unlock off for the user: biounlock leaves no note, nothing is kept.
        try fixture.store.setEnabled(false, user: user, service: nil, at: 2)
        let off = try login(unix: UnixStackFixture.daemonPassword)
        XCTAssertEqual(off.code, "PAM_SUCCESS", off.raw.stdout)
        XCTAssertNil(try keyID())
    }

    /// `biounlock forget-password`, `disable`, `passcode clear` and `unenrol` drop the key (the
    /// CLI as root, in the test's namespaces); the next login at a login service keeps it again.
    func testTheCLIDropsIt() throws {
        fixture.closeStore()
        let cli = [buildDirectory + "/biounlock", "--db", fixture.storePath, "--config", fixture.dir + "/none.conf",
                   "--sensor", "simulated", "--sim-socket", fixture.socket]
        func keep() throws {
            try fixture.store.setEnabled(true, user: user, service: nil, at: 3)
            fixture.closeStore()
            let reset = try runProcess("/usr/bin/sqlite3", [fixture.storePath, "UPDATE users SET password_boot_id = NULL"])
            XCTAssertEqual(reset.status, 0, reset.stderr)
            let t = try login(unix: UnixStackFixture.daemonPassword)
            XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
            XCTAssertNotNil(try keyID(), "kept")
        }
        try keep()
        let forgot = try inside(cli + ["forget-password", user])
        XCTAssertEqual(forgot.status, 0, forgot.stderr)
        XCTAssertEqual(forgot.stdout, "Dropped the password kept for \(user).\n")
        XCTAssertNil(try keyID())
        XCTAssertEqual(try inside(cli + ["forget-password", user]).stdout, "No password is kept for \(user).\n")
        XCTAssertNotEqual(try inside(cli + ["forget-password", "no-such-user-32"]).status, 0)
        for command in [["disable", user], ["passcode", "clear", user], ["unenrol", user, "--all"]] {
            try keep()
            let r = try inside(cli + command)
            XCTAssertEqual(r.status, 0, "\(command): \(r.stderr)")
            XCTAssertNil(try keyID(), "\(command) drops it")
        }
    }

    /// Issue 32, item 5: Debian's gnome-keyring and pam_gnome_keyring in the login stack (its
    /// auth line and its session line with auto_start, as Debian's gdm-password has them), the
    /// user's own session bus, everything in the test's namespaces. The first login of the boot
    /// takes the Unix password, which creates the login keyring; a secret is stored in it; the
    /// session ends (its daemon is stopped). Then a finger login: the login keyring
    /// opens with the kept password and secret-tool reads the secret with no prompt; the same
    /// with the PIN. With the kept password dropped, the finger login leaves the keyring locked
    /// and secret-tool gets nothing (no prompter here: it cannot ask).
    func testTheFingerLoginOpensTheGnomeKeyring() throws {
        for tool in ["/usr/bin/gnome-keyring-daemon", "/usr/bin/secret-tool", "/usr/bin/dbus-daemon",
                     "/lib/x86_64-linux-gnu/security/pam_gnome_keyring.so"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: tool), "\(tool) is missing (scripts/deps)")
        }
        let uid = getpwnam(user)?.pointee.pw_uid ?? 1
        // The user's home and runtime directory on a tmpfs of the namespace's own (/home there).
        var passwd = try String(contentsOfFile: unix.etc + "/passwd", encoding: .utf8)
        passwd = passwd.split(separator: "\n").map { line in
            line.hasPrefix("\(user):") ? "\(user):x:\(uid):\(uid):\(user):/home/h:/bin/sh" : String(line)
        }.joined(separator: "\n") + "\n"
        try passwd.write(toFile: unix.etc + "/passwd", atomically: false, encoding: .utf8)
        // The session bus without service activation: only the daemon pam_gnome_keyring starts
        // serves the secrets, and it ends with the session (an activated one would outlive it
        // and keep the keyring open from one login to the next).
        let busConfig = """
            <busconfig><type>session</type><listen>unix:path=/home/k/bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """
        try busConfig.write(toFile: fixture.dir + "/bus.conf", atomically: false, encoding: .utf8)
        chmod(fixture.dir, 0o755)
        chmod(fixture.dir + "/bus.conf", 0o644)
        let prepared = try inside(["/bin/sh", "-c", """
            mount -t tmpfs -o mode=0755 tmpfs /home && mkdir -m 0700 /home/h /home/k && chown \(uid):\(uid) /home/h /home/k &&
            setpriv --reuid=\(uid) --regid=\(uid) --clear-groups env -i HOME=/home/h XDG_RUNTIME_DIR=/home/k \
                dbus-daemon --config-file=\(fixture.dir)/bus.conf --fork --print-pid >/home/k/bus.pid 2>/dev/null </dev/null &&
            cat /home/k/bus.pid
            """])
        XCTAssertEqual(prepared.status, 0, prepared.stderr)
        let bus = Int32(prepared.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        defer { if bus > 0 { kill(bus, SIGTERM) } }
        try fixture.service("require_passcode=boot", name: "login", after: """
            auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
            auth requisite pam_deny.so
            auth required pam_permit.so
            auth optional \(modulePath) \(defaults) require_passcode=boot keep_password
            auth optional pam_gnome_keyring.so
            session optional pam_gnome_keyring.so auto_start
            """, control: "[success=2 ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die]")
        let secret = "the-secret-of-issue-32"
        // As the desktop's autostart does: the secrets component of the daemon PAM started.
        let asUser = "setpriv --reuid=\(uid) --regid=\(uid) --clear-groups env HOME=/home/h"
        let start = "\(asUser) gnome-keyring-daemon --start --components=secrets >/dev/null; "
        // Logging out: pam_gnome_keyring's close_session leaves the daemon it started running
        // here, so the session's command stops it (its pid from the bus that it owns a name on),
        // so that each login starts a daemon of its own with a locked login keyring.
        let stop = "; p=$(\(asUser) dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '/uint32/ { print $2 }'); "
            + "[ -n \"$p\" ] && kill $p; i=0; while [ -n \"$p\" ] && kill -0 $p 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; echo STOPPED-$p-$i"
        func session(_ command: String, unix password: String? = nil, answers: [String] = [], touches: [SimCommand] = []) throws -> Transaction {
            var extra = ["--setcred", "--session", command,
                         "--env", "XDG_RUNTIME_DIR=/home/k", "--env", "DBUS_SESSION_BUS_ADDRESS=unix:path=/home/k/bus"]
            if let password { extra += ["--answer-prompt", ContractText.unixPrompt + "=" + password] }
            return try fixture.authenticate(service: "login", answers: answers, touches: touches, extra: extra, wrapper: wrapper)
        }
        // (A locked keyring makes secret-tool wait for a prompter that never comes: `timeout` ends it.)
        func lookup(_ seconds: Int) -> String { start + "\(asUser) timeout \(seconds) secret-tool lookup issue 32; echo LOOKUP-DONE" + stop }
        let first = try session(start + "printf %s \(secret) | \(asUser) timeout 10 secret-tool store --label=issue32 issue 32 && echo STORED" + stop,
                                unix: UnixStackFixture.daemonPassword)
        XCTAssertEqual(first.messages.first, restart)
        XCTAssertTrue(first.raw.stdout.contains("STORED"), first.raw.stdout + first.raw.stderr)
        XCTAssertTrue(first.raw.stdout.contains("SESSION-CLOSE 0"), first.raw.stdout)

        let finger = try session(lookup(30), touches: [touch])
        XCTAssertEqual(finger.code, "PAM_SUCCESS", finger.raw.stdout)
        XCTAssertTrue(finger.raw.stdout.contains(secret + "LOOKUP-DONE") || finger.raw.stdout.contains(secret + "\nLOOKUP-DONE"),
                      "the login keyring opened after the finger: \(finger.raw.stdout) \(finger.raw.stderr)")
        let pin = try session(lookup(30), answers: [ModuleFixture.pin])
        XCTAssertEqual(pin.code, "PAM_SUCCESS", pin.raw.stdout)
        XCTAssertTrue(pin.raw.stdout.contains(secret), "after the PIN too: \(pin.raw.stdout)")

        // Without the kept password the finger opens the session but not the keyring.
        let id = try XCTUnwrap(try keyID())
        XCTAssertEqual(try inside(["/usr/bin/keyctl", "invalidate", id]).status, 0)
        XCTAssertNil(try keyID())
        let locked = try session(lookup(2), touches: [touch])
        XCTAssertEqual(locked.code, "PAM_SUCCESS", locked.raw.stdout)
        XCTAssertTrue(locked.raw.stdout.contains("LOOKUP-DONE"), locked.raw.stdout)
        XCTAssertFalse(locked.raw.stdout.contains(secret), "no kept password, no keyring: \(locked.raw.stdout)")
    }

    /// A screen locker runs PAM as the user: the module relays to biounlock-check (setuid root)
    /// and never hands the kept password on there, even under a login service's name and after
    /// the finger succeeded. The same stack run as root (the control) does hand it on.
    func testALockerRunningAsTheUserNeverGetsIt() throws {
        XCTAssertEqual(try login(unix: UnixStackFixture.daemonPassword).code, "PAM_SUCCESS")
        XCTAssertNotNil(try keyID())
        let helpers = try trustedScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: helpers) }
        let checker = helpers + "/biounlock-check"
        try FileManager.default.copyItem(atPath: buildDirectory + "/biounlock-check", toPath: checker)
        chown(checker, 0, 0)
        chmod(checker, 0o4755)
        let etcSecurity = fixture.dir + "/etc-security"
        try FileManager.default.createDirectory(atPath: etcSecurity, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try """
            db = \(fixture.storePath)
            sensor = simulated
            sim_socket = \(fixture.socket)
            timeout = 3
            require_passcode = boot
            lid_path = \(fixture.dir)/lid
            logind_path = \(fixture.dir)/sessions
            proc_path = \(fixture.dir)/proc
            """.write(toFile: etcSecurity + "/biounlock.conf", atomically: false, encoding: .utf8)
        chmod(etcSecurity + "/biounlock.conf", 0o644)
        chmod(fixture.dir, 0o755)   // the harness, as the user, reads the service files; db/ stays 0700
        XCTAssertEqual(try inside(["/bin/mount", "--bind", etcSecurity, "/etc/security"]).status, 0)
        // A locker whose service is named like a login service: the worst case.
        try fixture.service("check_helper=\(checker) touch_first=120", name: "login", includeDefaults: false,
                            after: "auth optional pam_echo.so @PROBETOKEN", control: "[success=ok default=die]")
        fixture.closeStore()
        let uid = "\(getpwnam(user)?.pointee.pw_uid ?? 1)"
        let asUser = try fixture.authenticate(service: "login", touches: [touch],
                                              wrapper: wrapper + ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"])
        XCTAssertEqual(asUser.code, "PAM_SUCCESS", "the finger through the checker: \(asUser.raw.stdout) \(asUser.raw.stderr)")
        XCTAssertEqual(asUser.lines("PROBE"), ["authtok=(unset)"], "a locker never gets the kept password")
        let asRoot = try fixture.authenticate(service: "login", touches: [touch], wrapper: wrapper)
        XCTAssertEqual(asRoot.code, "PAM_SUCCESS", asRoot.raw.stdout)
        XCTAssertEqual(asRoot.lines("PROBE"), ["authtok=\(UnixStackFixture.daemonPassword)"], "the control: as root at login it is handed on")
    }

    /// The keep_password line trusts no order of the stack: text the stack accepted that is not
    /// the account's password (pam_permit standing in for a password module that accepts
    /// anything) is not kept; the account's password through the same stack is.
    func testOnlyTheAccountsPasswordIsKeptWhateverTheStackAccepted() throws {
        XCTAssertEqual(try login(unix: UnixStackFixture.daemonPassword).code, "PAM_SUCCESS")   // this boot's password
        let id = try XCTUnwrap(try keyID())
        XCTAssertEqual(try inside(["/usr/bin/keyctl", "invalidate", id]).status, 0)
        try fixture.service("require_passcode=boot", name: "login", after: """
            auth required pam_permit.so
            auth optional \(modulePath) \(defaults) require_passcode=boot keep_password
            auth optional pam_echo.so @PROBETOKEN
            """, control: "[success=1 ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die]")
        let other = try login(answers: ["not-the-password-3"])
        XCTAssertEqual(other.code, "PAM_SUCCESS", other.raw.stdout)
        XCTAssertEqual(other.lines("PROBE"), ["authtok=not-the-password-3"], "handed on by biounlock's prompt")
        XCTAssertNil(try keyID(), "not the account's password: not kept")
        XCTAssertEqual(try login(answers: [UnixStackFixture.daemonPassword]).code, "PAM_SUCCESS")
        XCTAssertNotNil(try keyID(), "the account's password: kept")
    }
}
