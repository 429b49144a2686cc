import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// An enrolment belongs to the account, not to the name: the account `daemon` is deleted and
/// the name given to a new account (another uid). Played in a private mount namespace where a
/// copy of /etc/passwd gives `daemon` uid 4242 (the host's /etc/passwd is never touched); the
/// module, `status`, `list`, `doctor`, `enable` and `forget` run there.
final class AccountChurnTests: ModuleTestCase {
    let user = ModuleFixture.enrolledUser
    let newUID: UInt32 = 4242
    var passwdCopy: String { fixture.dir + "/passwd" }
    /// Runs a command where the name `daemon` belongs to the new account.
    var churned: [String] {
        ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", "mount --bind \"$0\" /etc/passwd && exec \"$@\"", passwdCopy]
    }

    override func prepare() throws {
        try fixture.service()
        let passwd = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
        let lines = passwd.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var fields = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if fields.first == user, fields.count > 3 { fields[2] = String(newUID); fields[3] = String(newUID) }
            return fields.joined(separator: ":")
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: passwdCopy, contents: Data(lines.joined(separator: "\n").utf8),
                                                    attributes: [.posixPermissions: 0o644]))
    }

    func cli(_ args: [String], stdin: String? = nil) throws -> ProcessResult {
        try runProcess(churned[0], Array(churned.dropFirst()) + [buildDirectory + "/biounlock", "--db", fixture.storePath,
                                                                 "--sensor", "simulated", "--sim-socket", fixture.socket] + args,
                       stdin: stdin)
    }

    func testANameGivenToANewAccountInheritsNothing() throws {
        XCTAssertEqual(try fixture.store.loadUser(user)?.uid, getpwnam(user)?.pointee.pw_uid, "bound when it was made")
        let touch = ModuleFixture.scan(ModuleFixture.fingerID)
        let inherited = try fixture.authenticate(answers: [ModuleFixture.pin], touches: [touch], extra: ["--syslog"], wrapper: churned)
        XCTAssertEqual(inherited.code, "PAM_TRY_AGAIN", "PAM_IGNORE: as a user who never enabled biometric unlock: \(inherited.raw.stdout)")
        XCTAssertEqual(inherited.messages, [], "nothing asked, neither the finger nor the old PIN")
        XCTAssertTrue(inherited.syslog.contains { $0.contains("the biounlock record of daemon belongs to uid 1, but daemon is uid 4242 now")
            && $0.contains("biounlock forget daemon") }, inherited.raw.stdout)
        XCTAssertEqual(try fixture.store.recentEvents().count, 0, "no audit row, nothing counted")
        XCTAssertEqual(try fixture.store.loadUser(user)?.passcodeFailures, 0)
        // The old account itself (outside the namespace) still has its enrolment.
        XCTAssertEqual(try fixture.authenticate(touches: [touch]).code, "PAM_SUCCESS")

        let status = try cli(["status", user])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("NOT THIS ACCOUNT'S RECORD: the biounlock record of daemon belongs to uid 1, but daemon is uid 4242 now"), status.stdout)
        XCTAssertTrue(status.stdout.contains("Clear it with: biounlock --db \(fixture.storePath) --sensor simulated --sim-socket \(fixture.socket) forget daemon"), status.stdout)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try cli(["status", user, "--json"]).stdout.utf8)) as? [String: Any])
        let entry = try XCTUnwrap((json["users"] as? [[String: Any]])?.first)
        XCTAssertEqual(entry["uid"] as? Int, 1)
        XCTAssertEqual((entry["account"] as? [String: Any])?["matches"] as? Bool, false)
        XCTAssertEqual((entry["account"] as? [String: Any])?["uid"] as? Int, 4242)
        XCTAssertTrue(try cli(["list"]).stdout.contains("daemon: NOT THIS ACCOUNT'S"))
        let doctor = try cli(["doctor", "--pam-dir", fixture.confdir])
        XCTAssertTrue(doctor.stdout.contains("warning  store/daemon: the biounlock record of daemon belongs to uid 1"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("fix: biounlock --db \(fixture.storePath) --sensor simulated --sim-socket \(fixture.socket) forget daemon"), doctor.stdout)

        // Nothing is added to the old record for the new account ...
        for args in [["enable", user], ["passcode", "set", user, "--stdin"]] {
            let refused = try cli(args, stdin: "1357\n")
            XCTAssertEqual(refused.status, 1, "\(args): \(refused.stdout)")
            XCTAssertTrue(refused.stderr.contains("forget daemon"), refused.stderr)
        }
        // ... until it is forgotten; the new account's own record is then bound to uid 4242.
        let forget = try cli(["forget", user])
        XCTAssertEqual(forget.status, 0, forget.stderr)
        XCTAssertTrue(forget.stdout.contains("Forgot daemon: 1 finger, the passcode, settings and counters."), forget.stdout)
        XCTAssertEqual(try cli(["passcode", "set", user, "--stdin"], stdin: "1357\n").status, 0)
        XCTAssertEqual(try fixture.store.loadUser(user)?.uid, newUID)
        XCTAssertEqual(try fixture.store.loadUser(user)?.templates, [], "the old fingers are gone")
        XCTAssertFalse(try cli(["status", user]).stdout.contains("NOT THIS ACCOUNT'S"))
        XCTAssertEqual(try cli(["forget", "biounlock-no-such-user"]).status, 1)
    }
}
