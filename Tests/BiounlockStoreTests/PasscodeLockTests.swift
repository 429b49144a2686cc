import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
@testable import BiounlockStore
import CSQLite

/// Passcode attempts across connections (each its own open of the lock file, as each sudo is its
/// own process): an attempt that finds the lockout reached waits for the user's attempts in
/// flight before it is refused; other users never wait.
final class PasscodeLockTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/store/biounlock.db" }
    override func setUpWithError() throws {
        dir = try makeTrustedTemporaryDirectory()
        let admin = try Store.open(path: path, mode: .administer)
        for user in ["alice", "bob"] { try admin.setEnabled(true, user: user, service: nil, at: 1) }
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func store() throws -> Store { try Store.open(path: path, mode: .authenticate) }

    /// `count` attempts at once, each on its own connection; `check` is the "Argon2id".
    func attempts(_ count: Int, user: String = "alice", check: @escaping () -> Bool) -> [Result<PasscodeAttempt, StoreFailure>] {
        let results = Locked<[Result<PasscodeAttempt, StoreFailure>]>([])
        let group = DispatchGroup()
        for _ in 0..<count {
            group.enter()
            Thread.detachNewThread { [path] in
                let r = Result { () throws(StoreFailure) -> PasscodeAttempt in
                    try Store.open(path: path, mode: .authenticate).attemptPasscode(user: user, threshold: 5, clock: SystemClock(), bootID: "b", check: check)
                }
                results.mutate { $0.append(r) }
                group.leave()
            }
        }
        group.wait()
        return results.value
    }

    /// Starts an attempt of `user` on its own connection whose check blocks until `release` is
    /// signalled; returns once the check has started (the attempt is counted and in flight).
    func inFlight(_ user: String = "alice", right: Bool, release: DispatchSemaphore) -> (done: XCTestExpectation, result: ResultBox<PasscodeAttempt>) {
        let started = DispatchSemaphore(value: 0)
        let done = expectation(description: "attempt in flight ended")
        let box = ResultBox<PasscodeAttempt>()
        Thread.detachNewThread { [path] in
            box.value = try? Store.open(path: path, mode: .authenticate).attemptPasscode(user: user, threshold: 5, clock: SystemClock(), bootID: "b") {
                started.signal()
                _ = release.wait(timeout: .now() + 60)
                return right
            }
            done.fulfill()
        }
        XCTAssertEqual(started.wait(timeout: .now() + 30), .success, "the attempt was checked")
        return (done, box)
    }

    func testRightAttemptsAtOnceAllSucceed() throws {
        let results = attempts(30) { usleep(2000); return true }
        XCTAssertEqual(results.compactMap { try? $0.get() }, Array(repeating: .accepted(resetFailure: nil), count: 30), "\(results)")
        XCTAssertEqual(try store().loadUser("alice")?.passcodeFailures, 0)
    }

    func testWrongAttemptsAtOnceCheckAtMostTheThreshold() throws {
        let checks = Locked(0)
        let results = attempts(20) { checks.mutate { $0 += 1 }; usleep(2000); return false }
        XCTAssertEqual(checks.value, 5)
        let outcomes = results.compactMap { try? $0.get() }
        XCTAssertEqual(outcomes.filter { if case .rejected = $0 { return true }; return false }.count, 5, "\(outcomes)")
        XCTAssertEqual(outcomes.filter { if case .locked(let until?) = $0 { return until > 0 }; return false }.count, 15, "\(outcomes)")
        XCTAssertEqual(try store().loadUser("alice")?.passcodeFailures, 5)
    }

    /// Four wrong, then a right one in flight: the count is at the lockout. A new attempt waits
    /// for it instead of being refused, and is counted and checked once the right one cleared the
    /// count. Had the one in flight been wrong, the new one would be refused unchecked.
    func testAtTheLockoutAnAttemptWaitsForTheOnesInFlight() throws {
        for right in [true, false] {
            try store().resetCounters(user: "alice", biometric: true, passcode: true)
            for _ in 0..<4 { _ = try store().attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { false } }
            let release = DispatchSemaphore(value: 0)
            let first = inFlight(right: right, release: release)
            XCTAssertEqual(try store().loadUser("alice")?.passcodeFailures, 5, "counted before it is checked")
            let checked = Locked(false)
            let second = DispatchSemaphore(value: 0)
            let box = ResultBox<PasscodeAttempt>()
            let clock = WaitingClock()
            Thread.detachNewThread { [path] in
                box.value = try? Store.open(path: path, mode: .authenticate).attemptPasscode(user: "alice", threshold: 5, clock: clock, bootID: "b") {
                    checked.mutate { $0 = true }
                    return true
                }
                second.signal()
            }
            XCTAssertEqual(clock.waiting.wait(timeout: .now() + 30), .success, "right=\(right): it waits for the one in flight")
            XCTAssertFalse(checked.value)
            // Bob is not held up by alice's attempts.
            XCTAssertEqual(try store().attemptPasscode(user: "bob", threshold: 5, clock: SystemClock(), bootID: "b") { true }, .accepted(resetFailure: nil))
            release.signal()
            wait(for: [first.done], timeout: 30)
            XCTAssertEqual(second.wait(timeout: .now() + 30), .success)
            XCTAssertEqual(checked.value, right, "right=\(right): checked only if the first cleared the count")
            XCTAssertEqual(box.value, right ? .accepted(resetFailure: nil) : .locked(until: box.value.flatMap { if case .locked(let u) = $0 { return u }; return nil }))
        }
    }

    /// The count's sync fails (the disk reports an I/O error): the count is taken back and the
    /// guess is not checked -- counted and checked, or neither; the error says what failed. Then
    /// the disk works again, and the next attempt is counted from where the user was.
    func testACountThatCannotBeSyncedIsTakenBackAndNotChecked() throws {
        _ = try store().attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { false }
        XCTAssertEqual(try store().loadUser("alice")?.passcodeFailures, 1)
        let attempt = try store()
        var checked = false
        let outcome = Faults.run(FaultSchedule([FaultRule(.fdatasync, .fail(.ioError))])) { () -> Result<PasscodeAttempt, StoreFailure> in
            Result { () throws(StoreFailure) -> PasscodeAttempt in
                try attempt.attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { checked = true; return true }
            }
        }
        XCTAssertEqual(outcome.injected.map(\.call), [.fdatasync], "the count's sync was the call that failed")
        guard case .failure(let failure) = outcome.result else { return XCTFail("an attempt whose count is not on disk went on: \(outcome.result)") }
        XCTAssertTrue("\(failure)".contains("fdatasync: Input/output error"), "\(failure)")
        XCTAssertFalse(checked, "not checked: its count could be lost")
        XCTAssertEqual(try store().loadUser("alice")?.passcodeFailures, 1, "the count taken back, the earlier one kept")
        XCTAssertFalse(attempt.passcodeAttemptsInFlight(user: "alice"), "nothing left in flight")
        XCTAssertEqual(try store().attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { false },
                       .rejected(failures: 2, writeFailure: nil))
    }

    /// An attempt in flight longer than the bound: the one waiting for it is neither counted nor
    /// checked, and says why.
    func testTheWaitIsBoundedAndThenNothingIsCountedOrChecked() throws {
        for _ in 0..<4 { _ = try store().attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { false } }
        let release = DispatchSemaphore(value: 0)
        let first = inFlight(right: true, release: release)
        let waiter = try store()
        waiter.passcodeLockWait = 200
        var checked = false
        XCTAssertThrowsError(try waiter.attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { checked = true; return true }) {
            XCTAssertTrue("\($0)".contains("other passcode attempts of alice were still being checked"), "\($0)")
        }
        XCTAssertFalse(checked)
        XCTAssertEqual(try waiter.loadUser("alice")?.passcodeFailures, 5, "only the first's count")
        release.signal()
        wait(for: [first.done], timeout: 30)
        XCTAssertEqual(first.result.value, .accepted(resetFailure: nil))
    }

    /// A store whose lock file went missing: the module makes it again (root's, 0600) rather than
    /// losing the passcode.
    func testAMissingLockFileIsMadeAgain() throws {
        let store = try store()
        unlink(store.lockPath)
        let old = umask(0)
        defer { umask(old) }
        XCTAssertEqual(try store.attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { true }, .accepted(resetFailure: nil))
        var st = stat()
        XCTAssertEqual(lstat(store.lockPath, &st), 0)
        XCTAssertEqual(st.st_mode & 0o7777, 0o600)
        XCTAssertNil(Store.trustProblem(path: path))
    }

    func testAnUntrustedLockFileIsRefused() throws {
        let store = try store()
        unlink(store.lockPath)
        XCTAssertEqual(symlink(path, store.lockPath), 0)
        XCTAssertEqual(Store.trustProblem(path: path), .symlink(store.lockPath))
        XCTAssertThrowsError(try store.attemptPasscode(user: "alice", threshold: 5, clock: SystemClock(), bootID: "b") { true }) {
            XCTAssertTrue("\($0)".contains("symbolic link"), "\($0)")
        }
        XCTAssertEqual(try store.loadUser("alice")?.passcodeFailures, 0)
    }
}

/// Where a thread leaves its result for the test.
final class ResultBox<T> { var value: T? }

/// The real clock, which also says (once) when an attempt has begun to wait: the deadline is the
/// first reading of the monotonic clock, each look at the time left while waiting another.
final class WaitingClock: Clock, @unchecked Sendable {
    let waiting = DispatchSemaphore(value: 0)
    private let readings = Locked(0)
    func now() -> Int64 { SystemClock().now() }
    func monotonicMilliseconds() -> Int64 {
        var n = 0
        readings.mutate { $0 += 1; n = $0 }
        if n == 2 { waiting.signal() }
        return SystemClock().monotonicMilliseconds()
    }
}
