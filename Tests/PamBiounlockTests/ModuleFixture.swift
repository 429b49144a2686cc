import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Where scripts/build put the artefacts (override with BIOUNLOCK_BUILD_DIR).
let buildDirectory: String = {
    if let dir = ProcessInfo.processInfo.environment["BIOUNLOCK_BUILD_DIR"] { return dir }
    let here = URL(fileURLWithPath: #filePath)
    return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("build").path
}()

let modulePath = buildDirectory + "/pam_biounlock.so"
let harnessPath = buildDirectory + "/pam-harness"

/// One PAM transaction's result as the harness printed it.
struct Transaction {
    /// The module's own return code. The test stack puts `pam_debug.so auth=try_again` after the
    /// module with `ignore=ignore`, so PAM_TRY_AGAIN here means the module returned PAM_IGNORE
    /// (libpam itself never reports PAM_IGNORE as a stack's result).
    let code: String
    /// Conversation lines: "INFO: …", "ERROR: …", "PROMPT_OFF: …".
    let messages: [String]
    /// (No elapsed time: tests assert behaviour, not time. A hang is caught by `timeout`, and
    /// timings belong in scripts/bench and scripts/timing.)
    let raw: ProcessResult

    /// The text of the harness's "PREFIX: text" lines: SYSLOG (with --syslog), ARGON2
    /// (--count-argon2), PROBE, HOST (--host-check), FORK.
    func lines(_ prefix: String) -> [String] {
        raw.stdout.split(separator: "\n").filter { $0.hasPrefix(prefix + ": ") }.map { String($0.dropFirst(prefix.count + 2)) }
    }

    /// What the module logged (needs `--syslog`), without libpam's own lines.
    var syslog: [String] { lines("SYSLOG").filter { $0.hasPrefix("pam_biounlock(") } }

    /// Every result, in order (several with --auth-count).
    var codes: [String] {
        raw.stdout.split(separator: "\n").filter { $0.hasPrefix("RESULT ") }.compactMap { $0.split(separator: " ").last.map(String.init) }
    }
}

/// A private world for one test: a trusted temp directory with a store, a sim socket path and
/// a pam.d directory for pam_start_confdir. Users are existing system accounts (the host's
/// /etc/passwd is never touched): `daemon` is enrolled, `bin` has no row.
final class ModuleFixture {
    static let enrolledUser = "daemon"
    static let otherUser = "bin"
    static let fingerID = "daemon-right-index"
    static let pin = "2468"

    let dir: String
    var storePath: String { dir + "/db/biounlock.db" }
    var socket: String { dir + "/sim" }
    var confdir: String { dir + "/pam.d" }

    /// The test's own connection to the store, opened on first use. While it is open, SQLite
    /// keeps the -wal and -shm files; `closeStore()` lets the module find the store as it does in
    /// production, with nobody else holding it.
    var store: Store {
        get throws {
            if let connection { return connection }
            let opened = try Store.open(path: storePath, mode: .administer)
            connection = opened
            return opened
        }
    }
    private var connection: Store?
    func closeStore() { connection = nil }
    /// The sensor's module arguments (the simulated sensor unless a test picks libfprint).
    lazy var sensorArguments = "sensor=simulated sim_socket=\(socket)"
    /// Where `touches` are sent: the simulated sensor's socket, or a virtual_device's.
    lazy var touchSocket = socket
    /// Whether the touches go to libfprint's virtual_device (directly or behind fprintd) rather
    /// than the simulated sensor. Two things follow:
    /// - a touch waits for the module's answer to the one before: virtual_device takes a command
    ///   that arrives after a verify reported its result, but before the verify completed, into
    ///   that verify and drops it (libfprint logs "fpi_device_verify_report: assertion
    ///   'data->result_reported == FALSE' failed"), so a second touch sent straight after the
    ///   first is lost when the machine is slow at the wrong moment. A finger touches again once
    ///   it is told to, and so do the tests;
    /// - the finger's `timeout`, unless a test sets its own, is what a loaded machine needs
    ///   (fprintd asks polkit before every Claim and VerifyStart), so that only a test about the
    ///   timeout ends by it; 3 s for the simulated sensor.
    var realDriver = false
    var defaultTimeout: Int { realDriver ? 30 : 3 }

    init() throws {
        var template = Array("/tmp/bu-pam.XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        dir = String(cString: p)
        try FileManager.default.createDirectory(atPath: dir + "/pam.d", withIntermediateDirectories: false)
        _ = try store
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    /// Enrols `daemon` (simulated finger), sets a PIN (cheap Argon2id cost for speed) and enables it.
    func enrolDefaultUser(passcode: Bool = true, enabled: Bool = true) throws {
        let user = ModuleFixture.enrolledUser
        try store.saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array(ModuleFixture.fingerID.utf8), created: 1), user: user)
        if passcode {
            let hash = try Passcode.hash(Secret(bytes: Array(ModuleFixture.pin.utf8))!, opsLimit: 1, memLimit: 8192)
            try store.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: user, at: 1)
        }
        try store.setEnabled(enabled, user: user, service: nil, at: 1)
    }

    /// Writes the service file `name` with the module's arguments.
    /// The passcode-required rules are off unless a test turns them on; lid and logind are read
    /// from the fixture's own directories so the host's state never leaks in.
    /// The README's control line, for stacks where the password module really follows.
    static let recommendedControl = "[success=done ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die]"

    func service(_ arguments: String = "", name: String = "biotest", includeDefaults: Bool = true, after: String? = nil,
                 control: String = "[success=done ignore=ignore default=die]") throws {
        let defaults = includeDefaults
            ? "db=\(storePath) \(sensorArguments) timeout=\(defaultTimeout) config=\(dir)/none.conf require_passcode=none lid_path=\(dir)/lid logind_path=\(dir)/sessions proc_path=\(dir)/proc "
            : ""
        let text = """
            auth \(control) \(modulePath) \(defaults)\(arguments)
            \(after ?? "auth requisite pam_debug.so auth=try_again")
            """
        try text.write(toFile: "\(confdir)/\(name)", atomically: true, encoding: .utf8)
    }

    /// Runs pam_authenticate for `user`, with `touches` sent to the simulated sensor meanwhile.
    /// `wrapper` runs the harness through another command (prlimit, unshare, valgrind, strace…).
    func authenticate(_ user: String = ModuleFixture.enrolledUser, service: String = "biotest", answers: [String] = [],
                      touches: [SimCommand] = [], extra: [String] = [], environment: [String: String] = [:],
                      touchSocket: String? = nil, rawTouches: [String] = [],
                      wrapper: [String] = [], timeout: TimeInterval = 60, touchWait: Int = 5000) throws -> Transaction {
        let finger = DispatchGroup()
        let commands = rawTouches.map { (bytes: Array($0.utf8), answered: false) }
            + touches.map { (bytes: $0.bytes, answered: Self.isAnswered($0)) }
        let replies = TouchAnswers()
        let paced = realDriver
        if !commands.isEmpty {
            let path = touchSocket ?? self.touchSocket
            finger.enter()
            Thread.detachNewThread {
                var expected: Int?
                for c in commands {
                    if paced, let expected {
                        // Until the module answers the touch before (bounded: a test that expects
                        // no answer still ends, and its assertions say what happened).
                        replies.wait(for: expected, until: Date().addingTimeInterval(Double(touchWait) / 1000))
                    }
                    expected = c.answered ? replies.count + 1 : nil
                    _ = SimulatedFinger.send(bytes: c.bytes, to: path, waitMilliseconds: touchWait)
                }
                finger.leave()
            }
        }
        let onLine: (String) -> Void = { line in if Self.isAnswerToATouch(line) { replies.add() } }
        var args = ["--confdir", confdir, "--service", service, "--user", user]
        for a in answers { args += ["--answer", a] }
        // A fixed environment: an SSH_CONNECTION inherited from whoever runs the tests must not
        // turn every transaction into a "remote session".
        let command = wrapper + [harnessPath] + args + extra
        let result = try runProcess(command[0], Array(command.dropFirst()),
                                    environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }, timeout: timeout,
                                    onStdoutLine: paced ? onLine : nil)
        finger.wait()
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let code = lines.last(where: { $0.hasPrefix("RESULT ") })?.split(separator: " ").last.map(String.init) ?? "NONE"
        // pam_debug (the PAM_IGNORE marker) announces itself; that line is not the module's.
        let conversation = ["INFO: ", "ERROR: ", "PROMPT_OFF: ", "PROMPT_ON: ", "OTHER: "]
        let messages = lines.filter { line in conversation.contains { line.hasPrefix($0) } && line != "INFO: auth=try_again" }
        return Transaction(code: code, messages: messages, raw: result)
    }

    /// Touches the module answers with a message while the verification goes on (a finger that
    /// does not match, a retry); a match, an error or a pause ends or changes nothing to wait for.
    static func isAnswered(_ command: SimCommand) -> Bool {
        switch command {
        case .scan(let id): return id != Array(fingerID.utf8)
        case .retry: return true
        case .error, .unplug, .sleep: return false
        }
    }

    /// The module's answer to a touch: a retry or a failed match (not the touch prompt).
    static func isAnswerToATouch(_ line: String) -> Bool {
        line.hasPrefix("INFO: Try again") || line.hasPrefix("ERROR: Fingerprint not recognised")
    }

    /// Runs `count` transactions at the same moment, each in its own harness process (as many
    /// sudo at once are), and returns what each printed. A hang is caught by `timeout`.
    func authenticateConcurrently(_ count: Int, _ user: String = ModuleFixture.enrolledUser, service: String = "biotest",
                                  answers: [String] = [], extra: [String] = [], timeout: TimeInterval = 300) throws -> [String] {
        var args = ["--confdir", confdir, "--service", service, "--user", user]
        for a in answers { args += ["--answer", a] }
        let out = dir + "/concurrent"
        try? FileManager.default.removeItem(atPath: out)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let script = """
            out=$0 n=$1; shift
            i=0; while [ $i -lt $n ]; do "$@" >"$out/$i" 2>&1 & i=$((i + 1)); done
            wait
            """
        let r = try runProcess("/bin/sh", ["-c", script, out, String(count), harnessPath] + args + extra,
                               environment: ["PATH": "/usr/bin:/bin"], timeout: timeout)
        precondition(!r.timedOut, "concurrent transactions hung")
        return try (0..<count).map { try String(contentsOfFile: "\(out)/\($0)", encoding: .utf8) }
    }

    static func scan(_ id: String) -> SimCommand { .scan(Array(id.utf8)) }
}

extension String {
    /// The result code in one harness output ("NONE" without one).
    var harnessCode: String {
        split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") })?.split(separator: " ").last.map(String.init) ?? "NONE"
    }
}

/// How many times the module has answered a touch so far (seen on the harness's output as it
/// runs), for the finger that waits for that answer before touching again.
final class TouchAnswers: @unchecked Sendable {
    private let condition = NSCondition()
    private var seen = 0

    var count: Int { condition.lock(); defer { condition.unlock() }; return seen }

    func add() {
        condition.lock()
        seen += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Until `count` reaches `n`, or `deadline`.
    func wait(for n: Int, until deadline: Date) {
        condition.lock()
        while seen < n, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
