import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// One behaviour, two backends: every scenario runs through real libpam (pam-harness loading
/// build/pam_biounlock.so) against the simulated sensor and against libfprint's virtual_device
/// (through build/biounlock-fprint), with the same touches and the same expectations.
final class ScenarioTests: XCTestCase {
    static let prompt = "INFO: Touch the fingerprint reader to authenticate for biotest"
    static let unavailable = "ERROR: Fingerprint reader not available."
    static let touch = ModuleFixture.scan(ModuleFixture.fingerID)
    static let wrong = ModuleFixture.scan("mallory")

    struct Scenario {
        let name: String
        /// Extra module arguments.
        var arguments = ""
        var touches: [SimCommand] = []
        var answers: [String] = []
        /// The caller's environment (sudo passes the invoking user's to PAM modules).
        var environment: [String: String]? = nil
        /// Where the touches go instead of the configured reader (an attacker's socket).
        var touchSocket: ((ModuleFixture) -> String)? = nil
        /// Runs before the transaction.
        var setup: (ModuleFixture, Backend) throws -> Void = { _, _ in }
        let code: String
        /// The whole conversation, when given.
        var messages: [String]? = nil
        var lastMessage: String? = nil
        /// Consecutive failed matches afterwards.
        var failures: Int? = nil
        /// Runs after the transaction (extra checks).
        var check: (ModuleFixture, Transaction) -> Void = { _, _ in }
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "match", touches: [touch], code: "PAM_SUCCESS", messages: [prompt], failures: 0),
        Scenario(name: "no match until PAM_MAXTRIES", arguments: "policy=biometrics max_tries=2", touches: [wrong, wrong],
                 code: "PAM_MAXTRIES",
                 messages: [prompt, "ERROR: Fingerprint not recognised. 1 try left.", "ERROR: Fingerprint not recognised."],
                 failures: 2),
        Scenario(name: "no match, then the passcode", touches: [wrong, wrong, wrong], answers: [ModuleFixture.pin],
                 code: "PAM_SUCCESS", lastMessage: "PROMPT_OFF: PIN or password for biotest: ",
                 failures: 0),
        Scenario(name: "retry, then match", touches: [.retry(2), touch], code: "PAM_SUCCESS",
                 messages: [prompt, "INFO: Try again: centre your finger on the reader.", ], failures: 0),
        Scenario(name: "retries are not failed matches", arguments: "policy=biometrics max_tries=1",
                 touches: [.retry(1), .retry(3), touch], code: "PAM_SUCCESS",
                 messages: [prompt, "INFO: Try again: the touch was too short.", "INFO: Try again: lift your finger and touch again."],
                 failures: 0),
        Scenario(name: "device error", arguments: "policy=biometrics", touches: [.error(0)], code: "PAM_AUTHINFO_UNAVAIL",
                 messages: [prompt, unavailable], failures: 0),
        Scenario(name: "reader busy", arguments: "policy=biometrics", touches: [.error(4)], code: "PAM_AUTHINFO_UNAVAIL",
                 messages: [prompt, unavailable], failures: 0),
        Scenario(name: "protocol error", arguments: "policy=biometrics", touches: [.error(5)], code: "PAM_AUTHINFO_UNAVAIL",
                 messages: [prompt, unavailable], failures: 0),
        Scenario(name: "reader too hot", arguments: "policy=biometrics", touches: [.error(0x101)], code: "PAM_AUTHINFO_UNAVAIL",
                 messages: [prompt, unavailable], failures: 0),
        Scenario(name: "busy reader falls back to the passcode", touches: [.error(4)], answers: [ModuleFixture.pin],
                 code: "PAM_SUCCESS", lastMessage: "PROMPT_OFF: PIN or password for biotest: "),
        Scenario(name: "unplugged mid-verify", arguments: "policy=biometrics", touches: [wrong, .unplug],
                 code: "PAM_AUTHINFO_UNAVAIL",
                 messages: [prompt, "ERROR: Fingerprint not recognised. 2 tries left.", unavailable], failures: 1),
        Scenario(name: "silence until the timeout", arguments: "policy=biometrics timeout=1", code: "PAM_AUTHINFO_UNAVAIL",
                 messages: [prompt, "INFO: No touch in time."], failures: 0,
                 check: { _, t in XCTAssertFalse(t.raw.timedOut, "bounded by the module's timeout") }),
        Scenario(name: "reader cannot be opened (its socket path is taken)", arguments: "policy=biometrics",
                 setup: { f, _ in try FileManager.default.createDirectory(atPath: f.touchSocket, withIntermediateDirectories: false) },
                 code: "PAM_AUTHINFO_UNAVAIL", messages: [unavailable], failures: 0),
        Scenario(name: "an attacker's FP_VIRTUAL_DEVICE and GLib settings in the caller's environment are ignored",
                 arguments: "policy=biometrics timeout=1",
                 touches: [touch],
                 environment: [
                     "FP_VIRTUAL_DEVICE": "/tmp/bu-attacker-vd", "FP_VIRTUAL_DEVICE_STORAGE": "/tmp/bu-attacker-vds",
                     "FP_DRIVERS_WHITELIST": "virtual_device:virtual_device_storage", "G_MESSAGES_DEBUG": "all",
                     "G_DEBUG": "fatal-warnings", "GIO_EXTRA_MODULES": "/tmp", "GIO_MODULE_DIR": "/tmp",
                 ],
                 touchSocket: { _ in "/tmp/bu-attacker-vd" },
                 setup: { f, backend in
                     // No virtual reader is configured for libfprint: only the caller's variables name one.
                     if backend == .libfprint { f.sensorArguments = f.libfprintArguments(device: false); try f.service() }
                     unlink("/tmp/bu-attacker-vd"); unlink("/tmp/bu-attacker-vds")
                 },
                 code: "PAM_AUTHINFO_UNAVAIL", failures: 0,
                 check: { _, t in
                     XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/bu-attacker-vd"), "libfprint listened where the caller said")
                     XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/bu-attacker-vds"))
                     XCTAssertFalse(t.raw.stdout.contains("PAM_SUCCESS"))
                     XCTAssertEqual(t.raw.stderr, "", "nothing of GLib's debug output reaches the caller")
                 }),
    ]

    func run(_ backend: Backend) throws {
        XCTAssertTrue(FileManager.default.fileExists(atPath: modulePath), "run scripts/build first: \(modulePath) is missing")
        for scenario in ScenarioTests.scenarios {
            let fixture = try ModuleFixture()
            try fixture.enrolDefaultUser()
            try fixture.use(backend)
            try scenario.setup(fixture, backend)
            try fixture.service(scenario.arguments)
            let label = "[\(backend.rawValue)] \(scenario.name)"
            let t = try fixture.authenticate(answers: scenario.answers, touches: scenario.touches, extra: ["--check-host"],
                                             environment: scenario.environment ?? [:], touchSocket: scenario.touchSocket?(fixture),
                                             touchWait: scenario.touchSocket == nil ? 5000 : 1500)
            // The host's signal dispositions and mask are as before; no helper is left running or unreaped.
            XCTAssertTrue(t.raw.stdout.contains("HOST signals=unchanged mask=unchanged children=none"), "\(label): \(t.raw.stdout)")
            XCTAssertEqual(t.code, scenario.code, "\(label): \(t.raw.stdout)")
            if let messages = scenario.messages { XCTAssertEqual(t.messages, messages, label) }
            if let last = scenario.lastMessage { XCTAssertEqual(t.messages.last, last, label) }
            if let failures = scenario.failures {
                XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.biometricFailures, failures, label)
            }
            XCTAssertFalse(t.raw.timedOut, label)
            scenario.check(fixture, t)
        }
    }

    func testEveryScenarioOnTheSimulatedSensor() throws { try run(.simulated) }

    func testEveryScenarioOnLibfprintVirtualDevice() throws { try run(.libfprint) }
}
