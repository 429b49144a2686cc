import XCTest
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
        XCTAssertTrue(e.stdout.contains("Turn biometric unlock on with: biounlock"), e.stdout)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "2468\n").status, 0)
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
                                     "passcode_failures", "last_success", "last_failure"], "the documented JSON shape")
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

    /// From a terminal: asked twice, nothing echoed (driven through a pseudo-terminal by expect).
    func testInteractivePasscodeEntryOnATerminal() throws {
        let script = """
            set timeout 20
            spawn \(cliPath) --db \(db) --config \(dir)/biounlock.conf passcode set \(user)
            expect "New PIN for \(user): "
            send "97531\\r"
            expect "Repeat the PIN: "
            send "97531\\r"
            expect eof
            catch wait result
            exit [lindex $result 3]
            """
        let r = try runProcess("/usr/bin/expect", ["-c", script])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("Passcode (pin) set for \(user)."), r.stdout)
        XCTAssertFalse(r.stdout.contains("97531"), "the passcode was echoed: \(r.stdout)")

        let mismatch = script.replacingOccurrences(of: "send \"97531\\\\r\"\n    expect eof", with: "send \"97532\\\\r\"\n    expect eof")
        let m = try runProcess("/usr/bin/expect", ["-c", mismatch.replacingOccurrences(of: "expect \"Repeat the PIN: \"\nsend \"97531", with: "expect \"Repeat the PIN: \"\nsend \"97532")])
        XCTAssertEqual(m.status, 1, m.stdout)
        XCTAssertTrue(m.stdout.contains("the two entries differ"), m.stdout)
    }
}
