import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore

let cliBuildDirectory: String = {
    if let dir = ProcessInfo.processInfo.environment["BIOUNLOCK_BUILD_DIR"] { return dir }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("build").path
}()
let cliPath = cliBuildDirectory + "/biounlock"

/// The built CLI, end to end: exit codes, messages, JSON parsed (not grepped).
final class CLITests: XCTestCase {
    var dir = ""
    var db: String { dir + "/db/biounlock.db" }
    var socket: String { dir + "/sim" }
    let user = "daemon" // an existing system account; the host's /etc/passwd is never touched

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: cliPath), "run scripts/build first: \(cliPath)")
        var template = Array("/tmp/bu-cli.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        FileManager.default.createFile(atPath: dir + "/biounlock.conf", contents: Data("# test config\n".utf8))
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    @discardableResult
    func cli(_ args: [String], stdin: String? = nil, asUser uid: Int? = nil) throws -> ProcessResult {
        let globals = ["--db", db, "--sensor", "simulated", "--sim-socket", socket, "--config", dir + "/biounlock.conf"]
        if let uid {
            return try runProcess("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", cliPath] + globals + args, stdin: stdin)
        }
        return try runProcess(cliPath, globals + args, stdin: stdin)
    }

    func json(_ r: ProcessResult) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    func enrol(_ id: String = "daemon-ri", finger: String = "right-index") throws -> ProcessResult {
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            for _ in 0..<5 { _ = try? self.cli(["sim", "scan", id]) }
            group.leave()
        }
        let r = try cli(["enrol", user, "--finger", finger, "--timeout", "20"])
        group.wait()
        return r
    }

    func testHelpAndUsageErrors() throws {
        let help = try runProcess(cliPath, ["--help"])
        XCTAssertEqual(help.status, 0)
        for command in ["enrol", "passcode set", "enable", "disable", "status", "sim scan"] {
            XCTAssertTrue(help.stdout.contains(command), command)
        }
        for group in [["sim"], ["sim", "--help"], ["passcode"]] {
            let r = try runProcess(cliPath, group)
            XCTAssertEqual(r.status, 0, "\(group)")
            XCTAssertTrue(r.stdout.contains("COMMANDS:"), r.stdout)
        }
        XCTAssertTrue(try runProcess(cliPath, ["frobnicate"]).stderr.contains("see 'biounlock --help'"))
        let enrolHelp = try runProcess(cliPath, ["enrol", "--help"])
        XCTAssertEqual(enrolHelp.status, 0)
        XCTAssertTrue(enrolHelp.stdout.contains("USAGE: biounlock enrol USER [--finger F]"), enrolHelp.stdout)

        let cases: [([String], String)] = [
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["enrol"], "missing USER"),
            (["enrol", "daemon", "--toe", "x"], "unknown option '--toe'"),
            (["enrol", "daemon", "--finger"], "--finger needs a value"),
            (["status", "a", "b"], "unexpected argument 'b'"),
            (["enrol", "daemon", "--finger", "nose"], "unknown finger 'nose'"),
            (["passcode", "set", "daemon", "--kind", "tattoo"], "unknown kind 'tattoo'"),
        ]
        for (args, message) in cases {
            let r = try runProcess(cliPath, args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
    }

    /// Values are checked by the parser from each option's kind (OptionValueKind), before the
    /// command runs: every command taking --service refuses the same names, numbers follow Core's
    /// integer rule (no sign, no spaces, in range), and nothing is created on the way.
    func testOptionValuesAreCheckedBeforeTheCommandRuns() throws {
        let cases: [([String], String)] = [
            (["enable", user, "--service", "../sudo"], "'../sudo' is not a PAM service name"),
            (["disable", user, "--service", "su do"], "'su do' is not a PAM service name"),
            (["verify", user, "--service", ".hidden"], "'.hidden' is not a PAM service name"),
            (["log", "--service", "pam.d/sudo"], "'pam.d/sudo' is not a PAM service name"),
            (["log", "--limit", "+5"], "--limit takes 1-1000000"),
            (["log", "--limit=0"], "--limit takes 1-1000000"),
            (["enrol", user, "--timeout", "601"], "--timeout takes 1-600 seconds"),
            (["enrol", user, "--timeout", " 5"], "--timeout takes 1-600 seconds"),
            (["sim", "scan", "x", "--wait", "-1"], "--wait takes 0-600 seconds"),
            (["sim", "sleep", "+5"], "'+5' is not a valid MS for sim sleep"),
        ]
        for (args, message) in cases {
            let r = try cli(args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
        XCTAssertEqual(try cli(["log", "--service", "polkit-1", "--limit", "3"]).status, 0)
    }

    func testWritesNeedRoot() throws {
        for args in [["enable", user], ["passcode", "set", user, "--stdin"], ["enrol", user], ["disable", user], ["unenrol", user, "--all"]] {
            let r = try cli(args, stdin: "2468\n", asUser: 65534)
            XCTAssertEqual(r.status, 1, "\(args)")
            XCTAssertTrue(r.stderr.contains("only root may do"), r.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
    }

    func testEnableRefusesWithTheExactCommandsToRun() throws {
        let r = try cli(["enable", user])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("run: biounlock --db \(db) --sensor simulated --sim-socket \(socket) --config \(dir)/biounlock.conf enrol daemon --finger right-index-finger"), r.stderr)
        XCTAssertTrue(r.stderr.contains("passcode set daemon --kind pin"), r.stderr)
        let status = try json(try cli(["status", user, "--json"]))
        let users = try XCTUnwrap(status["users"] as? [[String: Any]])
        XCTAssertEqual(users.first?["enabled"] as? Bool, false, "the toggle stays off")
    }

    func testUnknownSystemUserIsRefused() throws {
        let r = try cli(["passcode", "set", "biounlock-no-such-user", "--stdin"], stdin: "2468\n")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("no such user"), r.stderr)
    }

    func testPasscodeRules() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "12\n").status, 1)
        XCTAssertTrue(try cli(["passcode", "set", user, "--stdin"], stdin: "12a4\n").stderr.contains("digits only"))
        XCTAssertEqual(try cli(["passcode", "set", user, "--kind", "password", "--stdin"], stdin: "short\n").status, 1)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: String(repeating: "1", count: 600) + "\n").status, 1)
        let ok = try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n")
        XCTAssertEqual(ok.status, 0, ok.stderr)
        // Stored as Argon2id at the shipped cost, and verifiable.
        let stored = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode)
        XCTAssertEqual(stored.kind, .pin)
        XCTAssertTrue(stored.hash.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"))
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("2468".utf8))!, against: stored.hash))
        let status = try cli(["status", user, "--json"])
        XCTAssertFalse(status.stdout.contains("argon2"), "status never shows the hash")
        XCTAssertEqual(try cli(["passcode", "clear", user]).status, 0)
        XCTAssertNil(try Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode)
    }

    /// `migrate` (run by the package on upgrade): a store of the previous schema gets this one's,
    /// with everything in it kept; no store, nothing done (and none created).
    func testMigrateBringsAnOlderStoreToThisSchemaAndKeepsItsRows() throws {
        let none = try cli(["migrate"])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.stdout.contains("nothing to migrate"), none.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: db), "migrate never creates a store")

        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        // The same store as 0.1.0 wrote it: schema 2, no uid column.
        let downgrade = try runProcess("/usr/bin/sqlite3", [db, "ALTER TABLE users DROP COLUMN uid; PRAGMA user_version = 2;"])
        XCTAssertEqual(downgrade.status, 0, downgrade.stderr)
        let migrated = try cli(["migrate"])
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(migrated.stdout.contains("schema version \(Store.currentSchemaVersion)"), migrated.stdout)
        let record = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user))
        XCTAssertEqual(record.passcode?.kind, .pin, "the passcode kept")
        XCTAssertEqual(record.uid, getpwnam(user).map { $0.pointee.pw_uid }, "bound to its account")
    }

    func testStoreIsCreatedRootOnly() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let dirMode = try FileManager.default.attributesOfItem(atPath: dir + "/db")[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: db)[.posixPermissions] as? Int
        XCTAssertEqual(dirMode, 0o700)
        XCTAssertEqual(fileMode, 0o600)
    }

    func testEnrolEnableAndStatusJSONShape() throws {
        let e = try enrol()
        XCTAssertEqual(e.status, 0, e.stderr)
        for i in 1...5 { XCTAssertTrue(e.stdout.contains("touch \(i)/5"), e.stdout) }
        // enrol suggests `enable` only once it would succeed: here the passcode is missing.
        XCTAssertFalse(e.stdout.contains("Turn biometric unlock on with"), e.stdout)
        XCTAssertTrue(e.stdout.contains("Next: biounlock"), e.stdout)
        XCTAssertTrue(e.stdout.contains("passcode set \(user) --kind pin"), e.stdout)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let again = try enrol()
        XCTAssertTrue(again.stdout.contains("Turn biometric unlock on with: biounlock"), again.stdout)
        let enable = try cli(["enable", user])
        XCTAssertEqual(enable.status, 0, enable.stderr)
        XCTAssertEqual(try cli(["disable", user, "--service", "sudo"]).status, 0)

        let status = try json(try cli(["status", "--json"]))
        XCTAssertEqual(Set(status.keys), ["store", "users", "fprintd"])
        XCTAssertEqual(status["store"] as? String, db)
        let users = try XCTUnwrap(status["users"] as? [[String: Any]])
        XCTAssertEqual(users.count, 1)
        let u = users[0]
        XCTAssertEqual(Set(u.keys), ["user", "enabled", "services", "fingers", "passcode", "biometric_failures",
                                     "passcode_failures", "last_success", "last_failure", "biometric_lockout", "passcode_lockout",
                                     "passcode_required", "uid", "account"], "the documented JSON shape")
        XCTAssertEqual(u["uid"] as? Int, Int(getpwnam(user)?.pointee.pw_uid ?? 99), "bound to the account")
        XCTAssertEqual(Set((u["account"] as? [String: Any])?.keys ?? [:].keys), ["matches", "uid", "problem", "fix"])
        XCTAssertEqual((u["account"] as? [String: Any])?["matches"] as? Bool, true)
        let lockout = try XCTUnwrap(u["biometric_lockout"] as? [String: Any])
        XCTAssertEqual(lockout["locked"] as? Bool, false)
        XCTAssertTrue(lockout["until"] is NSNull)
        XCTAssertEqual(u["passcode_required"] as? String, "first-use", "enrolled, passcode never entered")
        XCTAssertEqual(u["user"] as? String, user)
        XCTAssertEqual(u["enabled"] as? Bool, true)
        XCTAssertEqual(u["services"] as? [String: Bool], ["sudo": false])
        XCTAssertEqual(u["passcode"] as? String, "pin")
        XCTAssertEqual(u["biometric_failures"] as? Int, 0)
        XCTAssertTrue(u["last_success"] is NSNull)
        let fingers = try XCTUnwrap(u["fingers"] as? [[String: Any]])
        XCTAssertEqual(fingers.first?["finger"] as? String, "right-index-finger")
        XCTAssertEqual(fingers.first?["sensor"] as? String, "simulated")
        XCTAssertNotNil((fingers.first?["enrolled"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression))

        let text = try cli(["status", user])
        XCTAssertTrue(text.stdout.contains("biometric unlock: on"), text.stdout)
        XCTAssertTrue(text.stdout.contains("for sudo: off"), text.stdout)
    }

    func testEnrolmentThatTimesOutStoresNothing() throws {
        let r = try cli(["enrol", user, "--timeout", "1"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("nothing was stored"), r.stderr)
        let status = try json(try cli(["status", user, "--json"]))
        let fingers = (status["users"] as? [[String: Any]])?.first?["fingers"] as? [Any]
        XCTAssertEqual(fingers?.count, 0)
    }

    func testSimWithNoSensorFailsQuickly() throws {
        let r = try cli(["sim", "scan", "x", "--wait", "0"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("no simulated sensor listening"), r.stderr)
        XCTAssertEqual(try cli(["sim", "retry", "abc"]).status, 64)
    }

    func testStatusWithoutAStoreCreatesNothing() throws {
        let r = try cli(["status"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("No users"), r.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))
    }

    /// With --stdin nothing of the secret is printed (provisioning logs keep standard output):
    /// the pattern used to be drawn there, grid and path.
    func testPatternPasscodeFromStdinIsStoredCanonicallyAndNeverPrinted() throws {
        let r = try cli(["passcode", "set", user, "--kind", "pattern", "--stdin"], stdin: "1369\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "Passcode (pattern) set for daemon.\n")
        XCTAssertFalse(r.stderr.contains("1369") || r.stderr.contains("path") || r.stderr.contains("│"), r.stderr)
        let stored = try XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode)
        XCTAssertEqual(stored.kind, .pattern)
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("12369".utf8))!, against: stored.hash))
        let bad = try cli(["passcode", "set", user, "--kind", "pattern", "--stdin"], stdin: "1231\n")
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("point 1 is used twice"), bad.stderr)
    }

    /// Interactively (expect gives the CLI a terminal) the drawing is shown on the terminal while
    /// the pattern is confirmed, then erased (cursor up over it and the prompt, erase below);
    /// standard output, redirected to a file here, never holds it.
    func testPatternIsDrawnOnTheTerminalWhileConfirmingThenErased() throws {
        let out = dir + "/stdout"
        let command = ([cliPath, "--db", db, "--sensor", "simulated", "--sim-socket", socket, "--config", dir + "/biounlock.conf",
                        "passcode", "set", user, "--kind", "pattern"]).joined(separator: " ") + " >\(out)"
        let script = """
            set timeout 30
            spawn /bin/sh -c "\(command)"
            expect {
                -ex "New pattern for daemon: " {}
                timeout { exit 124 }
            }
            send -- "1369\\r"
            expect {
                -ex "Repeat the pattern: " {}
                timeout { exit 124 }
            }
            send -- "1369\\r"
            expect {
                eof {}
                timeout { exit 124 }
            }
            catch wait result
            exit [lindex $result 3]
            """
        let r = try runProcess("/usr/bin/expect", ["-c", script], environment: ["PATH": "/usr/bin:/bin", "TERM": "xterm"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let shown = r.stdout
        let drawing = try XCTUnwrap(shown.range(of: "path: 1 → 2 → 3 → 6 → 9"), shown)
        let repeatPrompt = try XCTUnwrap(shown.range(of: "Repeat the pattern: "), shown)
        XCTAssertLessThan(drawing.lowerBound, repeatPrompt.lowerBound, "drawn before the repeat is asked for")
        XCTAssertTrue(shown[repeatPrompt.upperBound...].contains("\u{1b}[9A\r\u{1b}[J"), "then erased: 8 lines of drawing and the prompt:\n\(shown.debugDescription)")
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "Passcode (pattern) set for daemon.\n", "nothing of it on standard output")
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("12369".utf8))!, against: XCTUnwrap(Store.open(path: db, mode: .authenticate).loadUser(user)?.passcode?.hash)))
    }

    func testResetClearsLockouts() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        let store = try Store.open(path: db, mode: .authenticate)
        for _ in 0..<5 { try store.recordBiometricFailure(user: user, at: 1) }
        for _ in 0..<6 { try store.recordPasscodeFailure(user: user, at: Int64(Date().timeIntervalSince1970)) }
        let before = try json(try cli(["status", user, "--json"]))
        let u = try XCTUnwrap((before["users"] as? [[String: Any]])?.first)
        XCTAssertEqual((u["biometric_lockout"] as? [String: Any])?["locked"] as? Bool, true)
        XCTAssertEqual((u["passcode_lockout"] as? [String: Any])?["locked"] as? Bool, true)
        XCTAssertNotNil((u["passcode_lockout"] as? [String: Any])?["until"] as? String)
        XCTAssertTrue(try cli(["status", user]).stdout.contains("fingerprint locked: yes, until the passcode is entered"))

        XCTAssertEqual(try cli(["reset", user, "--biometric"]).status, 0)
        XCTAssertEqual(try store.loadUser(user)?.biometricFailures, 0)
        XCTAssertEqual(try store.loadUser(user)?.passcodeFailures, 6)
        XCTAssertEqual(try cli(["reset", user]).status, 0)
        XCTAssertEqual(try store.loadUser(user)?.passcodeFailures, 0)
        XCTAssertEqual(try cli(["reset", user, "--biometric", "--passcode"]).status, 64)
        XCTAssertEqual(try cli(["reset", "nobody-here"]).status, 1)
    }

    func testListLogAndRetention() throws {
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        XCTAssertEqual(try cli(["disable", "bin"]).status, 0)
        let list = try cli(["list"])
        XCTAssertEqual(list.status, 0)
        XCTAssertTrue(list.stdout.contains("daemon: off · 0 fingers · passcode pin"), list.stdout)
        XCTAssertTrue(list.stdout.contains("bin: off"), list.stdout)
        let listJSON = try json(try cli(["list", "--json"]))
        XCTAssertEqual((listJSON["users"] as? [[String: Any]])?.compactMap { $0["user"] as? String }, ["bin", "daemon"])

        let store = try Store.open(path: db, mode: .authenticate)
        let now = Int64(Date().timeIntervalSince1970)
        for (i, (u, s)) in [("daemon", "sudo"), ("bin", "login"), ("daemon", "login")].enumerated() {
            try store.appendEvent(AuditEvent(time: now - Int64(3 - i) * 3600, user: u, service: s, tty: "pts/\(i)", rhost: "",
                                             method: .fingerprint, outcome: "success", reason: "finger-matched"))
        }
        try store.appendEvent(AuditEvent(time: now - 40 * 86400, user: "daemon", service: "sudo", tty: "", rhost: "",
                                         method: .passcode, outcome: "denied", reason: "wrong-passcode"))
        let all = try json(try cli(["log", "--json"]))
        let events = try XCTUnwrap(all["events"] as? [[String: Any]])
        XCTAssertEqual(events.count, 4)
        XCTAssertEqual(Set(events[0].keys), ["time", "user", "service", "tty", "rhost", "method", "outcome", "reason"], "the documented shape")
        XCTAssertEqual(try json(try cli(["log", "--json", "--user", "daemon"]))["events"].map { ($0 as? [Any])?.count }, 3)
        XCTAssertEqual(try json(try cli(["log", "--json", "--service", "login"]))["events"].map { ($0 as? [Any])?.count }, 2)
        XCTAssertEqual(try json(try cli(["log", "--json", "--since", "150m"]))["events"].map { ($0 as? [Any])?.count }, 2)
        XCTAssertEqual(try json(try cli(["log", "--json", "--since", "2026-01-01", "--limit", "1"]))["events"].map { ($0 as? [Any])?.count }, 1)
        XCTAssertEqual(try cli(["log", "--since", "yesterday"]).status, 64)
        let text = try cli(["log", "--user", "bin"])
        XCTAssertTrue(text.stdout.contains("bin  login on pts/1  success (fingerprint, finger-matched)"), text.stdout)

        // Retention: prune events past log_retention / log_max_events.
        store.retention = Store.Retention(maxAgeSeconds: 30 * 86400, maxEvents: 2)
        try store.pruneEvents(now: now)
        XCTAssertEqual(try store.recentEvents(limit: 100).map(\.tty), ["pts/2"],
                       "the newest 2 are kept, except the one older than 30 days")
    }

    func testVerifyRunsTheChainAndSaysWhatDecided() throws {
        try "sensor = simulated\nsim_socket = \(socket)\ntimeout = 1\nrequire_passcode = none\n".write(toFile: dir + "/biounlock.conf", atomically: true, encoding: .utf8)
        XCTAssertEqual(try enrol().status, 0)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        XCTAssertEqual(try cli(["enable", user]).status, 0)
        let ok = try cli(["verify", user], stdin: "2468\n")
        XCTAssertEqual(ok.status, 0, ok.stdout + ok.stderr)
        XCTAssertTrue(ok.stdout.contains("Touch the fingerprint reader to authenticate for sudo"), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("Result: success (method passcode, decided by: passcode-accepted)"), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("The module would return PAM_SUCCESS."), ok.stdout)
        let wrong = try cli(["verify", user], stdin: "1111\n")
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stdout.contains("decided by: wrong-passcode"), wrong.stdout)
        let off = try cli(["verify", "bin"])
        XCTAssertTrue(off.stdout.contains("PAM_IGNORE"), off.stdout)
        let events = try json(try cli(["log", "--json", "--service", "sudo"]))["events"] as? [[String: Any]]
        XCTAssertEqual(events?.count, 2, "verify attempts are audited (not the one for bin, who has not enabled biometric unlock)")
    }

    func testColourOnlyOnATerminalAndNeverWithNoColor() throws {
        let plain = try cli(["frobnicate"])
        XCTAssertFalse(plain.stderr.contains("\u{1b}["), "no colour into a pipe")
        let script = """
            set timeout 10
            spawn \(cliPath) frobnicate
            expect eof
            """
        let tty = try runProcess("/usr/bin/expect", ["-c", script], environment: ["PATH": "/usr/bin:/bin", "TERM": "xterm"])
        XCTAssertTrue(tty.stdout.contains("\u{1b}[1;31mbiounlock:"), tty.stdout)
        let noColor = try runProcess("/usr/bin/expect", ["-c", script], environment: ["NO_COLOR": "1", "PATH": "/usr/bin:/bin"])
        XCTAssertFalse(noColor.stdout.contains("\u{1b}["), noColor.stdout)
    }

    func testDoctorFindsEachKindOfMistake() throws {
        let pam = dir + "/pam.d"
        try FileManager.default.createDirectory(atPath: pam, withIntermediateDirectories: true)
        // common-auth as pam-auth-update writes it with biounlock's profile enabled (try_first_pass).
        try "auth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n"
            .write(toFile: pam + "/common-auth", atomically: true, encoding: .utf8)
        let module = cliBuildDirectory + "/pam_biounlock.so"
        func doctor() throws -> (ProcessResult, [String: Any]) {
            let r = try cli(["doctor", "--pam-dir", pam, "--module", module, "--json"])
            return (r, try json(r))
        }
        try "auth [success=done ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die] pam_biounlock.so\n@include common-auth\n"
            .write(toFile: pam + "/sudo", atomically: true, encoding: .utf8)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
        var (r, report) = try doctor()
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertEqual(report["ok"] as? Bool, true)
        let checks = try XCTUnwrap(report["checks"] as? [[String: Any]])
        XCTAssertEqual(Set(checks[0].keys), ["check", "status", "detail", "fix"], "the documented shape")
        XCTAssertEqual(checks.first { $0["check"] as? String == "module" }?["status"] as? String, "ok", "the built module loads")

        try "auth required pam_biounlock.so\n".write(toFile: pam + "/su", atomically: true, encoding: .utf8)
        (r, report) = try doctor()
        XCTAssertEqual(r.status, 1)
        let problems = (report["checks"] as? [[String: Any]] ?? []).filter { $0["status"] as? String == "problem" }.compactMap { $0["detail"] as? String }
        XCTAssertTrue(problems.contains { $0.contains("su: pam_biounlock.so is 'required'") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("su: no password module after pam_biounlock.so") }, "\(problems)")
        try FileManager.default.removeItem(atPath: pam + "/su")

        chmod(db, 0o644 | 0o002)
        (r, report) = try doctor()
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stdout.contains("writable by group or others"), r.stdout)
        chmod(db, 0o600)

        let text = try cli(["doctor", "--pam-dir", pam, "--module", dir + "/missing.so"])
        XCTAssertEqual(text.status, 1)
        XCTAssertTrue(text.stdout.contains("PROBLEM  module:"), text.stdout)
        XCTAssertTrue(text.stdout.contains("fix:"), text.stdout)
    }

    /// The checker screen lockers need: setuid root, root-owned all the way up (what the module
    /// itself checks before starting it); missing is only a warning (lockers use the password).
    func testDoctorChecksTheSetuidChecker() throws {
        let base = URL(fileURLWithPath: cliBuildDirectory).deletingLastPathComponent().appendingPathComponent(".build/test-helpers").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        var template = Array((base + "/d.XXXXXX").utf8CString)
        let helpers = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: helpers) }
        chmod(helpers, 0o755)
        let checker = helpers + "/biounlock-check"
        try "check_helper = \(checker)\n".write(toFile: dir + "/biounlock.conf", atomically: true, encoding: .utf8)
        func status() throws -> (String?, String) {
            let r = try cli(["doctor", "--pam-dir", dir, "--module", cliBuildDirectory + "/pam_biounlock.so", "--json"])
            let c = (try json(r)["checks"] as? [[String: Any]])?.first { $0["check"] as? String == "checker" }
            return (c?["status"] as? String, c?["detail"] as? String ?? "")
        }
        XCTAssertEqual(try status().0, "warning", "missing: lockers fall back to the password")
        try FileManager.default.copyItem(atPath: cliBuildDirectory + "/biounlock-check", toPath: checker)
        chmod(checker, 0o755)
        XCTAssertEqual(try status().0, "problem")
        XCTAssertTrue(try status().1.contains("is not setuid root"))
        chmod(checker, 0o4755)
        XCTAssertEqual(try status().0, "ok")
        chmod(helpers, 0o777)
        XCTAssertEqual(try status().0, "problem")
        XCTAssertTrue(try status().1.contains("writable by group or others"))
        chmod(helpers, 0o755)
    }

    /// From a terminal: asked twice, nothing echoed (driven through a pseudo-terminal by expect).
    func testInteractivePasscodeEntryOnATerminal() throws {
        func session(_ first: String, _ second: String) throws -> ProcessResult {
            let script = """
                set timeout 20
                spawn \(cliPath) --db \(db) --config \(dir)/biounlock.conf passcode set \(user)
                expect "New PIN for \(user): "
                send "\(first)\\r"
                expect "Repeat the PIN: "
                send "\(second)\\r"
                expect eof
                catch wait result
                exit [lindex $result 3]
                """
            return try runProcess("/usr/bin/expect", ["-c", script])
        }
        let r = try session("97531", "97531")
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("Passcode (pin) set for \(user)."), r.stdout)
        XCTAssertFalse(r.stdout.contains("97531"), "the passcode was echoed: \(r.stdout)")

        let m = try session("97531", "97532")
        XCTAssertEqual(m.status, 1, m.stdout)
        XCTAssertTrue(m.stdout.contains("the two entries differ"), m.stdout)
    }
}
