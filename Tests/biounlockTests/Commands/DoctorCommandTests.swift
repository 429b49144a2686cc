import XCTest
import TestSupport
import Foundation
import BiounlockStore

/// `biounlock doctor`.
final class DoctorCommandTests: CLIFixture {
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
        // The module links SQLite in (Package.swift); built here against the system's own.
        let sqlite = checks.first { $0["check"] as? String == "sqlite" }
        XCTAssertEqual(sqlite?["status"] as? String, "ok", "\(String(describing: sqlite))")
        XCTAssertTrue((sqlite?["detail"] as? String ?? "").contains("SQLite \(SQLiteLibrary.running)"), "\(String(describing: sqlite))")

        try "auth required pam_biounlock.so\n".write(toFile: pam + "/su", atomically: true, encoding: .utf8)
        (r, report) = try doctor()
        XCTAssertEqual(r.status, 1)
        let problems = (report["checks"] as? [[String: Any]] ?? []).filter { $0["status"] as? String == "problem" }.compactMap { $0["detail"] as? String }
        XCTAssertTrue(problems.contains { $0.contains("su: pam_biounlock.so is 'required'") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("su: no password module after pam_biounlock.so") }, "\(problems)")
        try FileManager.default.removeItem(atPath: pam + "/su")

        // A service file others can write: they decide how sudo authenticates.
        chmod(pam + "/sudo", 0o666)
        (r, report) = try doctor()
        XCTAssertEqual(r.status, 1)
        let sudoFile = (report["checks"] as? [[String: Any]] ?? []).first { $0["check"] as? String == "pam.d/sudo" }
        XCTAssertEqual(sudoFile?["status"] as? String, "problem", "\(report)")
        XCTAssertEqual(sudoFile?["detail"] as? String,
                       "\(pam)/sudo is writable by group or others (mode 0666): whoever can write it decides how the services that use it authenticate")
        XCTAssertEqual(sudoFile?["fix"] as? String, "chown root:root \(pam)/sudo; chmod 0644 \(pam)/sudo")
        chmod(pam + "/sudo", 0o644)

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

    /// A config file the module would refuse is one problem, with its fix; every other check
    /// still runs (with the defaults), in text and in JSON. It used to end doctor at once
    /// ('config refused', exit 1, no check). With no service using the module yet, the advice
    /// is the package's pam-auth-update profile before any hand edit.
    func testAnUnsafeConfigIsOneProblemAndEveryOtherCheckRuns() throws {
        chmod(dir, 0o755)
        let module = cliBuildDirectory + "/pam_biounlock.so"
        let pam = dir + "/pam.d"
        try FileManager.default.createDirectory(atPath: pam, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: pam + "/login", contents: Data("@include common-auth\n".utf8))
        let args = ["doctor", "--pam-dir", pam, "--module", module]
        let safe = try json(try cli(args + ["--json"]))
        let names = ((safe["checks"] as? [[String: Any]]) ?? []).compactMap { $0["check"] as? String }
        XCTAssertTrue(Set(["module", "checker", "sqlite", "pam.d", "store", "config", "sensor", "reader"]).isSubset(of: Set(names)), "\(names)")
        let pamCheck = ((safe["checks"] as? [[String: Any]]) ?? []).first { $0["check"] as? String == "pam.d" }
        XCTAssertTrue((pamCheck?["fix"] as? String ?? "").hasPrefix("run pam-auth-update --enable biounlock (every service that includes common-auth); or, for one service only, add"), "\(String(describing: pamCheck))")

        let config = dir + "/biounlock.conf"
        chmod(config, 0o666)
        let r = try cli(args + ["--json"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertFalse(r.stderr.contains("config refused"), r.stderr)
        let checks = try XCTUnwrap(try json(r)["checks"] as? [[String: Any]])
        XCTAssertEqual(checks.compactMap { $0["check"] as? String }, names, "the same checks, in the same order")
        let refused = checks.filter { $0["check"] as? String == "config" }
        XCTAssertEqual(refused.count, 1)
        XCTAssertEqual(refused.first?["status"] as? String, "problem")
        XCTAssertEqual(refused.first?["detail"] as? String,
                       "\(config) is writable by group or others (mode 0666); the module refuses it and everyone falls back to the password (the other checks use the defaults)")
        XCTAssertEqual(refused.first?["fix"] as? String, "chown root:root \(config); chmod go-w \(config)")
        XCTAssertEqual(checks.filter { $0["status"] as? String == "problem" }.count, 1, "\(checks)")

        let text = try cli(args)
        XCTAssertEqual(text.status, 1)
        XCTAssertTrue(text.stdout.contains("PROBLEM  config: \(config) is writable by group or others (mode 0666)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("fix: chown root:root \(config); chmod go-w \(config)"), text.stdout)
        for name in ["module", "checker", "sqlite", "pam.d", "store", "sensor", "reader"] {
            XCTAssertTrue(text.stdout.contains(" \(name): "), "\(name) in:\n\(text.stdout)")
        }
        // Other commands still refuse to run on settings they cannot trust.
        let status = try cli(["status"])
        XCTAssertEqual(status.status, 1)
        XCTAssertTrue(status.stderr.contains("config refused"), status.stderr)
    }
}
