import XCTest
import Foundation
import TestSupport
@testable import BiounlockCore
import BiounlockStore
import BiounlockSystem

/// The chain's passcode rows on the real Store (a file in a trusted temporary directory), not on
/// MemoryStore: the attempt protocol -- counted in the file before the check, refused without
/// counting while locked, the success's counter reset and audit row in one commit -- is Store's
/// alone, so the rows where it matters run against it. PolicyChainTests has the other rows.
final class PolicyChainOnStoreTests: XCTestCase {
    static let pinHash = PolicyChainTests.pinHash
    /// alice's account, the same for the store's binding of her row and the chain's lookup.
    static let alice: (String) -> Account? = { $0 == "alice" ? Account(name: $0, uid: 1000) : nil }

    var dir = ""
    var path: String { dir + "/store/biounlock.db" }
    var options = Options()
    let clock = FixedClock()

    override func setUpWithError() throws {
        dir = try makeTrustedTemporaryDirectory()
        let admin = try Store.open(path: path, mode: .administer, lookupAccount: Self.alice)
        try admin.setEnabled(true, user: "alice", service: nil, at: 1)
        try admin.saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array("alice-ri".utf8), created: 1), user: "alice")
        try admin.setPasscode(StoredPasscode(hash: Self.pinHash, kind: .pin), user: "alice", at: 1)
        options.sensor = .simulated
        options.requirePasscode = .none
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// One transaction, as the module runs it: a store opened for authentication, a reader that
    /// is interrupted (the PIN typed instead), the answers given.
    func run(_ answers: [String]) -> (Decision, ScriptedConversation) {
        let conversation = ScriptedConversation(answers.map { .answer(Secret(bytes: Array($0.utf8))!) })
        let path = self.path
        let chain = PolicyChain(
            options: options, conversation: conversation, logger: MemoryLogger(), sensors: ScriptedSensors(sensor: ScriptedSensor([.interrupted])),
            openStore: {
                do throws(StoreFailure) { return .success(try Store.open(path: path, mode: .authenticate, lookupAccount: Self.alice)) } catch { return .failure(error) }
            },
            lookupAccount: { .success(Self.alice($0)) },
            clock: clock, sessionFacts: { SessionFacts() }, bootID: { "boot-1" })
        return (chain.run(AuthRequest(user: "alice", service: "sudo", tty: "pts/1", silent: false)), conversation)
    }

    func record() throws -> UserRecord? { try Store.open(path: path, mode: .administer, lookupAccount: Self.alice).loadUser("alice") }

    /// Each wrong PIN is in the file when its transaction returns; at the lockout the next
    /// attempt is refused without a prompt's answer being checked and without a count.
    func testWrongPasscodesAreCountedInTheFileUntilTheLockout() throws {
        for attempt in 1...options.passcodeLockout {
            let (decision, _) = run(["0000"])
            XCTAssertEqual(decision.outcome, .unavailable, "attempt \(attempt): handed on to the password")
            XCTAssertEqual(decision.reason, .wrongPasscode, "attempt \(attempt)")
            XCTAssertEqual(try record()?.passcodeFailures, attempt, "attempt \(attempt) counted in the file")
        }
        let (decision, _) = run(["2468"])
        XCTAssertEqual(decision.reason, .passcodeLocked, "the right PIN does not help once locked")
        XCTAssertEqual(try record()?.passcodeFailures, options.passcodeLockout, "a refused attempt is not counted")
    }

    /// The right PIN after wrong ones: success, the counters cleared and the success's audit row
    /// written, both in the file.
    func testTheRightPasscodeClearsTheCountAndRecordsTheSuccess() throws {
        _ = run(["0000"])
        _ = run(["1111"])
        XCTAssertEqual(try record()?.passcodeFailures, 2)
        let (decision, _) = run(["2468"])
        XCTAssertEqual(decision.outcome, .success(.passcode))
        XCTAssertEqual(try record()?.passcodeFailures, 0)
        let events = try Store.open(path: path, mode: .administer, lookupAccount: Self.alice).recentEvents(user: "alice", limit: 10)
        XCTAssertEqual(events.first?.outcome, "success", "the newest audit row is the success: \(events.map(\.outcome))")
    }
}
