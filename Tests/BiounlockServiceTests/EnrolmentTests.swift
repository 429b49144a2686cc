import XCTest
import Foundation
import TestSupport
import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockService
import BiounlockServiceProtocol

/// StartEnrolment in-process, the worker replaced by a fake the test drives: signals to the
/// caller only, the template stored with its audit row when (and only when) it is finished,
/// cancel and a caller leaving store nothing, one enrolment at a time.
final class EnrolmentTests: XCTestCase {
    var f: ServiceFixture!
    override func setUpWithError() throws {
        f = try ServiceFixture(options: ["require_passcode=enrolment"])
        try f.enrolAndSetPIN()
        // The PIN was typed once since (so only the enrolment rule can ask for it again).
        try f.store().recordSuccess(user: ServiceFixture.user, method: .passcode, at: 2, bootID: SessionProbe.currentBootID ?? "")
        XCTAssertEqual(f.status()?.passcodeRequired, "")
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
    }
    override func tearDown() { f = nil }

    let template = Template(finger: .leftThumb, sensor: .simulated, data: Array("daemon-thumb".utf8), created: 7)

    func start(_ caller: Caller? = nil) -> MethodReply {
        f.call(.startEnrolment, [.string(""), .string("left-thumb"), .uint32(0)], caller: caller)
    }

    func testProgressGoesToTheCallerAndTheFingerIsStoredWithItsRow() throws {
        XCTAssertEqual(start(), .values([]))
        XCTAssertEqual(f.enrolments.started.value, [EnrolRequest(user: ServiceFixture.user, finger: .leftThumb, seconds: 60)])
        XCTAssertEqual(f.status()?.enrolling, true)
        f.enrolments.feed(.ready(total: 5))
        f.enrolments.feed(.stage(done: 1, total: 5))
        f.enrolments.feed(.retry(.tooShort))
        XCTAssertEqual(try f.record()?.templates.count, 1, "nothing stored before it is finished")
        f.enrolments.feed(.finished(.enrolled(template, fprintdPrints: nil)))
        let sent = f.signals.value
        XCTAssertTrue(sent.allSatisfy { $0.destination == ":1.10" }, "never broadcast")
        XCTAssertEqual(sent.map(\.signal), [.enrolStage, .enrolStage, .enrolRetry, .enrolFinished])
        XCTAssertEqual(sent[1].arguments, [.string("left-thumb"), .uint32(1), .uint32(5)])
        XCTAssertEqual(sent[2].arguments, [.string("left-thumb"), .string("too-short")])
        XCTAssertEqual(sent[3].arguments, [.string("left-thumb"), .string("done"), .string("")])
        let record = try XCTUnwrap(f.record())
        XCTAssertEqual(record.templates.map(\.finger), [.rightIndex, .leftThumb])
        XCTAssertEqual(try f.store().recentEvents(user: ServiceFixture.user).first?.outcome, "finger-enrolled:left-thumb")
        // require_passcode=enrolment applies to a finger the user added: the passcode comes first.
        XCTAssertEqual(f.status()?.passcodeRequired, "enrolment")
        XCTAssertEqual(f.status()?.enrolling, false)
    }

    func testCancelOrLeavingStoresNothing() throws {
        XCTAssertEqual(start(), .values([]))
        f.enrolments.feed(.stage(done: 2, total: 5))
        XCTAssertEqual(f.call(.cancelEnrolment), .values([]))
        XCTAssertTrue(f.enrolments.control.cancelled.value)
        XCTAssertEqual(f.signals.value.last?.arguments, [.string("left-thumb"), .string("cancelled"), .string("cancelled")])
        XCTAssertEqual(try f.record()?.templates.count, 1)

        XCTAssertEqual(start(), .values([]), "a new one may start")
        f.manager.connectionClosed(":1.10")
        XCTAssertEqual(f.signals.value.last?.arguments[1], .string("cancelled"))
        XCTAssertEqual(try f.record()?.templates.count, 1)
    }

    func testOneEnrolmentAtATimeAndOnlyWithAProof() throws {
        XCTAssertEqual(start(), .values([]))
        XCTAssertEqual(start(f.caller(":1.20")).errorName, .authenticationRequired)
        XCTAssertEqual(f.authenticate(caller: f.caller(":1.20")), .values([.uint32(ManagerAPI.grantSeconds)]))
        XCTAssertEqual(start(f.caller(":1.20")).errorName, .busy, "one reader")
        f.enrolments.feed(.finished(.failed("no touch in time")))
        XCTAssertEqual(f.signals.value.last?.arguments, [.string("left-thumb"), .string("failed"), .string("no touch in time")])
        XCTAssertEqual(try f.record()?.templates.count, 1)
        f.enrolments.failStart = true
        XCTAssertEqual(start(f.caller(":1.20")).errorName, .unavailable)
        XCTAssertEqual(f.status(caller: f.caller(":1.20"))?.enrolling, false)
    }
}
