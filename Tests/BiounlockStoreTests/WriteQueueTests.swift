import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import BiounlockCore
@testable import BiounlockStore
import CSQLite

/// biounlock's writers queue on the lock file: a writer that keeps the others waiting longer than
/// SQLite's busy timeout delays them, and loses nobody's write.
final class WriteQueueTests: XCTestCase {
    var dir = ""
    var path: String { dir + "/store/biounlock.db" }
    override func setUpWithError() throws {
        dir = try makeTrustedTemporaryDirectory()
        try Store.open(path: path, mode: .administer).setEnabled(true, user: "alice", service: nil, at: 1)
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func event(_ i: Int) -> AuditEvent {
        AuditEvent(time: Int64(i), user: "alice", service: "sudo", tty: "", rhost: "", method: .passcode, outcome: "success", reason: "passcode-accepted")
    }

    func testAWriterHoldingTheQueuePastTheBusyTimeoutDropsNoWrite() throws {
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [path] in
            try? Store.open(path: path, mode: .authenticate).inOneTransaction {
                held.signal()
                // Held for longer than SQLite's busy timeout, as a holder kept off the CPU would.
                _ = release.wait(timeout: .now() + .milliseconds(Int(Store.busyTimeoutMilliseconds) + 1500))
            }
            release.signal()
        }
        XCTAssertEqual(held.wait(timeout: .now() + 30), .success)
        let errors = Locked([String]())
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            do { try Store.open(path: path, mode: .authenticate).appendEvent(event(i)) } catch { errors.mutate { $0.append("\(error)") } }
        }
        XCTAssertEqual(errors.value, [])
        XCTAssertEqual(try Store.open(path: path, mode: .authenticate).recentEvents(limit: 100).count, 16)
    }

    /// A queue that does not move (its holder stopped) is waited for once per connection; later
    /// writes go straight to SQLite's lock, bounded by the busy timeout.
    func testAStuckQueueIsWaitedForOnce() throws {
        let stuck = try LockFile.open(path + "-lock", create: false)
        let deadline = Deadline.after(milliseconds: 1000)
        XCTAssertTrue(try stuck.lock(byte: LockFile.writeQueueByte, until: deadline, clock: SystemClock()))
        let store = try Store.open(path: path, mode: .authenticate)
        store.writeQueueWait = 100
        XCTAssertThrowsError(try store.appendEvent(event(1))) { XCTAssertTrue("\($0)".contains("did not move"), "\($0)") }
        XCTAssertNoThrow(try store.appendEvent(event(2)))
        stuck.unlock(byte: LockFile.writeQueueByte)
        XCTAssertEqual(try store.recentEvents().map(\.time), [2])
    }
}
