import XCTest
import Foundation
import Glibc
@testable import BiounlockAdmin
import BiounlockCore
import BiounlockSystem

/// Doctor: the table of checks `biounlock doctor` prints, run with probes of the test's own (the
/// CLI's probes, over the real store and sensors, are exercised by biounlockTests' doctor runs).
final class DoctorTests: XCTestCase {
    final class Counter { var value = 0 }
    private var dir = ""

    override func setUpWithError() throws {
        // Under /run (root's, 0755), not /tmp: the trust checks refuse a world-writable ancestor.
        dir = "/run/biounlock-doctor-\(UUID().uuidString)"
        XCTAssertEqual(mkdir(dir, 0o755), 0)
        XCTAssertEqual(mkdir(dir + "/pam.d", 0o755), 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    private func pamFile(_ name: String, _ text: String) throws {
        try text.write(toFile: dir + "/pam.d/" + name, atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(dir + "/pam.d/" + name, 0o644), 0)
    }

    private var options: Options {
        var o = Options()
        o.storePath = dir + "/store.sqlite"
        o.configPath = dir + "/biounlock.conf"
        o.checkHelper = dir + "/biounlock-check"
        o.sensor = .simulated
        return o
    }

    private func probes(store: Doctor.StoreState = .missing, trust: FileTrustProblem? = nil,
                        records: Result<[UserRecord], Doctor.Failure> = .success([]),
                        reader: Doctor.ReaderState = .sensor(nil), sqlite: (String, String) = ("3.40.1", "3.40.1"),
                        reads: Counter = Counter()) -> Doctor.Probes {
        Doctor.Probes(store: { _ in store }, storeTrust: { _ in trust },
                      records: { _ in reads.value += 1; return records },
                      reader: { _ in reader }, sqlite: { sqlite }, fprintdRunning: { false })
    }

    private func inputs(module: String? = nil) -> Doctor.Inputs {
        Doctor.Inputs(options: options, pamDir: dir + "/pam.d", module: module ?? dir + "/pam_biounlock.so", globals: ["--store", dir + "/store.sqlite"])
    }

    func testTheTableRunsEveryCheckInItsOrder() {
        XCTAssertEqual(Doctor.checks.map(\.name), ["module", "checker", "sqlite", "face", "pam.d", "keyring", "store", "config", "sensor"])
        let findings = Doctor.run(inputs(), probes())
        // face is off: no face finding; the sensor check reports the backend and the reader.
        XCTAssertEqual(findings.map(\.check), ["module", "checker", "sqlite", "pam.d", "store", "config", "sensor", "reader"])
    }

    func testAMissingModuleIsAProblemWithItsFixAndTheExitStatusSaysSo() {
        let findings = Doctor.run(inputs(), probes())
        let module = findings.first { $0.check == "module" }
        XCTAssertEqual(module?.status, .problem)
        XCTAssertEqual(module?.detail, "\(dir)/pam_biounlock.so does not exist")
        XCTAssertEqual(Doctor.exitStatus(findings), 1)
        // Warnings alone exit 0.
        XCTAssertEqual(Doctor.exitStatus(findings.filter { $0.status != .problem }), 0)
    }

    func testAModuleOthersCanWriteIsAProblem() throws {
        let path = dir + "/pam_biounlock.so"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        XCTAssertEqual(chmod(path, 0o666), 0)
        let module = Doctor.run(inputs(), probes()).first { $0.check == "module" }
        XCTAssertEqual(module?.status, .problem)
        XCTAssertEqual(module?.fix, "chown root:root \(path); chmod 0644 \(path)")
    }

    func testNoServiceUsingTheModuleIsAWarningThatNamesPamAuthUpdate() throws {
        try pamFile("sudo", "auth required pam_unix.so\n")
        let pam = Doctor.run(inputs(), probes()).filter { $0.check.hasPrefix("pam.d") }
        XCTAssertEqual(pam.map(\.status), [.warning])
        XCTAssertTrue(pam.first?.fix?.contains(PamStackLint.enableCommand) == true, pam.first?.fix ?? "")
    }

    func testAServiceThatUsesTheModuleWellIsOKAndAMissingPathIsAProblem() throws {
        try pamFile("sudo", "auth [success=done default=ignore] pam_biounlock.so\n@include common-auth\n")
        try pamFile("common-auth", "auth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n")
        var pam = Doctor.run(inputs(), probes()).filter { $0.check.hasPrefix("pam.d") }
        XCTAssertEqual(pam.first?.status, .ok, "\(pam)")
        try pamFile("su", "auth [success=done default=ignore] /nowhere/pam_biounlock.so\n@include common-auth\n")
        pam = Doctor.run(inputs(), probes()).filter { $0.check == "pam.d/su" }
        XCTAssertTrue(pam.contains { $0.status == .problem && $0.detail == "/nowhere/pam_biounlock.so does not exist" }, "\(pam)")
    }

    /// Issue 32: a login service whose stack uses biounlock without a keep_password line leaves
    /// the keyring locked after a finger login: a warning naming the profile that adds it; with
    /// the line (in common-auth, as biounlock-keyring puts it), OK; no login service using
    /// biounlock, nothing said.
    func testALoginServiceWithoutTheKeepLineIsAWarningThatNamesTheKeyringProfile() throws {
        try pamFile("sudo", "auth [success=done default=ignore] pam_biounlock.so\n@include common-auth\n")
        try pamFile("common-auth", "auth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n")
        XCTAssertEqual(Doctor.run(inputs(), probes()).filter { $0.check == "keyring" }, [], "sudo is no login service")
        try pamFile("login", "auth optional pam_faildelay.so\n@include common-auth\n")
        try pamFile("common-auth", "auth [success=2 default=die] pam_biounlock.so\nauth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n")
        var keyring = Doctor.run(inputs(), probes()).filter { $0.check == "keyring" }
        XCTAssertEqual(keyring.map(\.status), [.warning])
        XCTAssertTrue(keyring.first?.detail.contains("login") == true, keyring.first?.detail ?? "")
        XCTAssertTrue(keyring.first?.fix?.contains("pam-auth-update --enable biounlock-keyring") == true, keyring.first?.fix ?? "")
        try pamFile("common-auth", "auth [success=2 default=die] pam_biounlock.so\nauth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\nauth optional pam_biounlock.so keep_password\n")
        keyring = Doctor.run(inputs(), probes()).filter { $0.check == "keyring" }
        XCTAssertEqual(keyring.map(\.status), [.ok])
        // A greeter's fingerprint-only stack is no place for the line: nothing said about it.
        try pamFile("gdm-fingerprint", "auth [success=ok default=die] pam_biounlock.so policy=biometrics touch_first=120\n")
        keyring = Doctor.run(inputs(), probes()).filter { $0.check == "keyring" }
        XCTAssertEqual(keyring.map(\.status), [.ok])
        XCTAssertFalse(keyring.first?.detail.contains("gdm-fingerprint") ?? true)
        // The stack is read as PamStackLint reads it: a keep_password in a comment keeps nothing,
        // and `auth include` is followed as @include is.
        try pamFile("common-auth", "auth [success=2 default=die] pam_biounlock.so\nauth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\nauth optional pam_biounlock.so # keep_password\n")
        XCTAssertEqual(Doctor.run(inputs(), probes()).filter { $0.check == "keyring" }.map(\.status), [.warning], "the word in a comment")
        try pamFile("login", "auth optional pam_faildelay.so\nauth include common-auth\n")
        XCTAssertEqual(Doctor.run(inputs(), probes()).filter { $0.check == "keyring" }.map(\.status), [.warning], "auth include")
    }

    func testTheStoreIsReadOnlyOnceTrustedAndItsRowsAreChecked() {
        let reads = Counter()
        // A store others can write: a problem, and its rows are not read.
        var store = Doctor.run(inputs(), probes(store: .present, trust: .writableByOthers(dir + "/store.sqlite", mode: 0o100666), reads: reads))
            .filter { $0.check.hasPrefix("store") }
        XCTAssertEqual(store.map(\.status), [.problem])
        XCTAssertEqual(reads.value, 0)
        // Trusted: read; a row whose name now belongs to another uid is a warning with its fix.
        var moved = UserRecord(name: "root")
        moved.uid = 4242
        store = Doctor.run(inputs(), probes(store: .present, records: .success([moved]), reads: reads)).filter { $0.check.hasPrefix("store") }
        XCTAssertEqual(reads.value, 1)
        XCTAssertEqual(store.map(\.check), ["store", "store/root"])
        XCTAssertEqual(store.map(\.status), [.ok, .warning])
        // Unreadable rows: a problem after the trust finding.
        store = Doctor.run(inputs(), probes(store: .present, records: .failure(Doctor.Failure("cannot read the store: disk I/O error"))))
            .filter { $0.check.hasPrefix("store") }
        XCTAssertEqual(store.map(\.status), [.ok, .problem])
        XCTAssertEqual(store.last?.detail, "cannot read the store: disk I/O error")
        // Not visible to this user: a problem with the command that can see it.
        store = Doctor.run(inputs(), probes(store: .hidden("only root can", fix: "sudo biounlock doctor"))).filter { $0.check.hasPrefix("store") }
        XCTAssertEqual(store.map(\.status), [.problem])
        XCTAssertEqual(store.first?.fix, "sudo biounlock doctor")
    }

    func testARefusedConfigIsAProblemWithTheFixForThePathItIsAbout() {
        var given = inputs()
        given.configProblem = .writableByOthers(dir, mode: 0o40777)
        let config = Doctor.run(given, probes()).first { $0.check == "config" }
        XCTAssertEqual(config?.status, .problem)
        XCTAssertEqual(config?.fix, "chown root:root \(dir); chmod go-w \(dir)")
        XCTAssertTrue(config?.detail.hasSuffix("(the other checks use the defaults)") == true, config?.detail ?? "")
        // No file: the defaults, fine.
        XCTAssertEqual(Doctor.run(inputs(), probes()).first { $0.check == "config" }?.status, .ok)
    }

    func testTheReaderAsEachBackendSeesIt() {
        var o = inputs()
        o.options.sensor = .fprintd
        var reader = Doctor.run(o, probes(reader: .fprintd(.success([])))).first { $0.check == "reader" }
        XCTAssertEqual(reader?.status, .warning)
        reader = Doctor.run(o, probes(reader: .fprintd(.success(["fprintd/virtual Virtual device"])))).first { $0.check == "reader" }
        XCTAssertEqual(reader?.status, .ok)
        XCTAssertTrue(reader?.detail.contains("fprintd/virtual Virtual device") == true)
        reader = Doctor.run(o, probes(reader: .fprintd(.failure(Doctor.Failure("no such name"))))).first { $0.check == "reader" }
        XCTAssertEqual(reader?.status, .warning)
        XCTAssertTrue(reader?.detail.contains("no such name") == true)
        reader = Doctor.run(inputs(), probes(reader: .sensor(Doctor.Failure("no reader")))).first { $0.check == "reader" }
        XCTAssertEqual(reader?.detail, "simulated: no reader")
    }

    func testASystemSQLiteOtherThanTheModulesIsAWarning() {
        XCTAssertEqual(Doctor.run(inputs(), probes(sqlite: ("3.40.1", "3.40.1"))).first { $0.check == "sqlite" }?.status, .ok)
        XCTAssertEqual(Doctor.run(inputs(), probes(sqlite: ("3.40.1", "3.46.0"))).first { $0.check == "sqlite" }?.status, .warning)
    }

    func testTheFaceIsCheckedOnlyWhenOn() {
        var o = inputs()
        o.options.face = true
        o.options.faceHelper = dir + "/no-face-helper"
        o.options.faceModels = dir
        let face = Doctor.run(o, probes()).filter { $0.check == "face" }
        // The helper and both models are missing.
        XCTAssertEqual(face.map(\.status), [.problem, .problem, .problem])
    }
}
