import XCTest
import TestSupport
import Foundation
import BiounlockSensors

let cliBuildDirectory: String = {
    if let dir = ProcessInfo.processInfo.environment["BIOUNLOCK_BUILD_DIR"] { return dir }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("build").path
}()
let cliPath = cliBuildDirectory + "/biounlock"

/// The built CLI, end to end: exit codes, messages, JSON parsed (not grepped). The tests of each
/// command are a subclass, laid out as Sources/biounlock is (Commands/, Parsing/, Terminal/);
/// each test gets a private directory for the store, the sim socket and the config file.
class CLIFixture: XCTestCase {
    var dir = ""
    var db: String { dir + "/db/biounlock.db" }
    var socket: String { dir + "/sim" }
    let user = "daemon" // an existing system account; the host's /etc/passwd is never touched

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: cliPath), "run scripts/build first: \(cliPath)")
        var template = Array("/tmp/bu-cli.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        _ = FileManager.default.createFile(atPath: dir + "/biounlock.conf", contents: Data("# test config\n".utf8))
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

    func enrol(_ id: String = "daemon-ri", finger: String = "right-index", _ extra: [String] = []) throws -> ProcessResult {
        let group = DispatchGroup()
        group.enter()
        let socket = self.socket
        Thread.detachNewThread {
            // The finger, from this process (`biounlock sim scan` has tests of its own): no second
            // process started from a second thread while the enrol command starts. A scan that
            // failed was not taken (the sensor answers a taken command with EOF): send it again,
            // as a finger touches again, a few times at most.
            var sent = 0, attempts = 0
            while sent < 5, attempts < 7 {
                attempts += 1
                if case .success = SimulatedFinger.send(.scan(Array(id.utf8)), to: socket, waitMilliseconds: 10_000) { sent += 1 }
            }
            group.leave()
        }
        let r = try cli(["enrol", user, "--finger", finger, "--timeout", "20"] + extra)
        group.wait()
        return r
    }
}
