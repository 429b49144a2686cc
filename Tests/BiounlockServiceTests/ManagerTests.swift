import XCTest
import Foundation
import TestSupport
import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockService
import BiounlockServiceProtocol

/// The handlers in-process: who may read and change what, re-authentication, the audit rows.
final class ManagerTests: XCTestCase {
    var f: ServiceFixture!
    override func setUpWithError() throws { f = try ServiceFixture() }
    override func tearDown() { f = nil }

    func testOwnStatusNeedsNothingAnotherUsersNeedsAnAdministrator() throws {
        try f.enrolAndSetPIN()
        let mine = try XCTUnwrap(f.status())
        XCTAssertEqual(mine.user, ServiceFixture.user)
        XCTAssertEqual(mine.passcode, "pin")
        XCTAssertEqual(mine.fingers.map(\.finger), ["right-index-finger"])
        XCTAssertEqual(f.authority.asked.value, [], "reading one's own record asks polkit nothing")
        // The same account by name is the caller's own (compared by uid).
        XCTAssertNotNil(f.call(.getStatus, [.string(ServiceFixture.user)]).values)
        XCTAssertEqual(f.call(.getStatus, [.string(ServiceFixture.other)]).errorName, .notAuthorized)
        XCTAssertEqual(f.call(.getEvents, [.string(ServiceFixture.other), .int64(0), .uint32(0)]).errorName, .notAuthorized)
        XCTAssertEqual(f.call(.checkEnable, [.string(ServiceFixture.other), .string("")]).errorName, .notAuthorized)
        XCTAssertEqual(f.authority.asked.value.filter { $0 == ManagerAPI.manageOthersAction }.count, 3)
        f.authority.set(ManagerAPI.manageOthersAction, .authorized)
        XCTAssertNotNil(f.call(.getStatus, [.string(ServiceFixture.other)]).values, "an administrator (polkit said yes) reads it")
        XCTAssertEqual(f.call(.getStatus, [.string("no-such-user-x")]).errorName, .noSuchUser)
    }

    func testChangesNeedManageOwnAndAFreshProofButTurningOffNeedsNoProof() throws {
        try f.enrolAndSetPIN()
        XCTAssertEqual(f.call(.enable, [.string(""), .string("sudo")]).errorName, .authenticationRequired)
        XCTAssertNotEqual(try f.record()?.serviceOverrides["sudo"], true)
        XCTAssertEqual(f.call(.disable, [.string(""), .string("")]), .values([]), "off needs no re-authentication")
        XCTAssertEqual(f.reauth.checks.value, 0)

        // A remote or inactive session: polkit says no, and nothing changes.
        f.authority.set(ManagerAPI.manageOwnAction, .notAuthorized(challenge: false))
        XCTAssertEqual(f.authenticate().errorName, .notAuthorized, "a remote session cannot even try a password")
        XCTAssertEqual(f.call(.disable, [.string(""), .string("sudo")]).errorName, .notAuthorized)
        XCTAssertEqual(f.reauth.checks.value, 0)
        f.authority.set(ManagerAPI.manageOwnAction, .unavailable("polkitd is gone"))
        XCTAssertEqual(f.call(.disable, [.string(""), .string("sudo")]).errorName, .unavailable, "polkit not answering is a refusal")
        XCTAssertNil(try f.record()?.serviceOverrides["sudo"])

        f.authority.set(ManagerAPI.manageOwnAction, .authorized)
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
        XCTAssertEqual(f.call(.enable, [.string(""), .string("sudo")]), .values([.boolean(true), .stringPairs([])]))
        XCTAssertEqual(try f.record()?.serviceOverrides["sudo"], true)
        XCTAssertEqual(f.status()?.authenticatedFor, ManagerAPI.grantSeconds)
    }

    /// Issue 31: the settings app's per-service switches are groups, each one change with one
    /// audit row naming it; Enable needs the proof, Disable does not; "@all" clears the overrides.
    func testAGroupIsOneChangeWithOneRowAndTheStatusSaysEachGroupsState() throws {
        try f.enrolAndSetPIN()
        func rows() throws -> [String] { try f.store().recentEvents(user: ServiceFixture.user).filter { $0.service == ManagerAPI.auditService }.map(\.outcome) }
        let before = try rows()
        XCTAssertEqual(f.call(.enable, [.string(""), .string("@login")]).errorName, .authenticationRequired)
        XCTAssertEqual(try f.record()?.serviceOverrides ?? [:], [:], "refused without the proof: nothing written")
        XCTAssertEqual(try rows(), before)
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
        XCTAssertEqual(f.call(.enable, [.string(""), .string("@all")]), .values([.boolean(true), .stringPairs([])]))
        XCTAssertEqual(f.status()?.state(of: .login), .on)

        XCTAssertEqual(f.call(.disable, [.string(""), .string("@login")], caller: f.caller(":1.30")), .values([]), "off needs no proof")
        let r = try XCTUnwrap(f.record())
        XCTAssertTrue(r.enabled)
        for s in ServiceGroup.login.services { XCTAssertEqual(r.serviceOverrides[s], false, s) }
        XCTAssertEqual(r.serviceOverrides.count, ServiceGroup.login.services.count, "sudo's group untouched")
        XCTAssertTrue(r.isEnabled(for: "sudo")); XCTAssertTrue(r.isEnabled(for: "polkit-1"))
        XCTAssertEqual(try rows().filter { $0.hasPrefix("disabled") }, ["disabled:@login"], "one row, naming the group")
        let status = try XCTUnwrap(f.status())
        XCTAssertEqual(status.groups, ["sudo": "on", "login": "off"])
        XCTAssertEqual(status.state(of: .login), .off)

        XCTAssertEqual(f.call(.enable, [.string(""), .string("kde")]), .values([.boolean(true), .stringPairs([])]))
        XCTAssertEqual(f.status()?.state(of: .login), .mixed)
        XCTAssertEqual(f.call(.disable, [.string(""), .string("@all")]), .values([]))
        let off = try XCTUnwrap(f.record())
        XCTAssertFalse(off.enabled); XCTAssertEqual(off.serviceOverrides, [:])
        XCTAssertEqual(f.status()?.groups, ["sudo": "off", "login": "off"])
        XCTAssertEqual(try rows().first, "disabled:@all")
        for bad in ["@", "@root", "@ALL", "@login ", "@../x"] {
            XCTAssertEqual(f.call(.enable, [.string(""), .string(bad)]).errorName, .invalidArgument, bad)
            XCTAssertEqual(f.call(.disable, [.string(""), .string(bad)]).errorName, .invalidArgument, bad)
        }
    }

    func testTheGrantBelongsToTheConnectionAndExpires() throws {
        try f.enrolAndSetPIN()
        XCTAssertEqual(f.authenticate(caller: f.caller(":1.10")), .values([.uint32(ManagerAPI.grantSeconds)]))
        XCTAssertEqual(f.call(.removePasscode, [.string("")], caller: f.caller(":1.11")).errorName, .authenticationRequired,
                       "another connection of the same user has no grant")
        XCTAssertNotNil(try f.record()?.passcode)
        f.manager.connectionClosed(":1.10")
        XCTAssertEqual(f.call(.removePasscode, [.string("")], caller: f.caller(":1.10")).errorName, .authenticationRequired,
                       "gone with the connection")
        XCTAssertEqual(f.authenticate(caller: f.caller(":1.12")), .values([.uint32(ManagerAPI.grantSeconds)]))
        f.clock.advance(seconds: Int64(ManagerAPI.grantSeconds) + 1)
        XCTAssertEqual(f.call(.removePasscode, [.string("")], caller: f.caller(":1.12")).errorName, .authenticationRequired, "expired")
        XCTAssertNotNil(try f.record()?.passcode)
    }

    func testAWrongOrMissingProofChangesNothingAndFailuresAreSlowedDown() throws {
        try f.enrolAndSetPIN()
        let before = try f.record()
        XCTAssertEqual(f.authenticate("wrong-1").errorName, .authenticationFailed)
        XCTAssertEqual(f.call(.setPasscode, [.string(""), .string("pin"), .handle(0)], secret: "1357").errorName, .authenticationRequired)
        XCTAssertEqual(f.call(.authenticate, [.handle(3)]).errorName, .invalidArgument, "no descriptor at that index")
        XCTAssertEqual(f.authenticate("").errorName, .invalidArgument, "nothing written")
        XCTAssertEqual(try f.record(), before)
        XCTAssertEqual(f.authenticate("wrong-2").errorName, .authenticationFailed)
        XCTAssertEqual(f.authenticate("wrong-3").errorName, .authenticationFailed)
        XCTAssertEqual(f.reauth.checks.value, 3)
        // The fourth attempt must wait; made now, it is refused unchecked -- the right one too.
        guard case .error(.tooManyAttempts, let message) = f.authenticate() else { return XCTFail("not slowed down") }
        XCTAssertTrue(message.hasPrefix("10:"), message)
        XCTAssertEqual(f.reauth.checks.value, 3, "not checked while it must wait")
        f.clock.advance(seconds: 10)
        XCTAssertEqual(f.authenticate("wrong-4").errorName, .authenticationFailed)
        guard case .error(.tooManyAttempts, let longer) = f.authenticate() else { return XCTFail("not slowed down") }
        XCTAssertTrue(longer.hasPrefix("30:"), longer)
        XCTAssertFalse(f.manager.isIdle(for: 0), "the service stays while it remembers failures")
        f.clock.advance(seconds: 30)
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
        XCTAssertEqual(f.authenticate("wrong-5").errorName, .authenticationFailed, "a success starts the count again")
        let events = try f.store().recentEvents(user: ServiceFixture.user)
        XCTAssertEqual(events.filter { $0.outcome == "reauthentication-failed" }.count, 5)
        XCTAssertTrue(events.allSatisfy { $0.service == "biounlockd" && $0.reason == "self" })
        XCTAssertEqual(try f.record()?.passcode, before?.passcode)
    }

    func testEnableSaysWhatIsMissingBeforeAskingForAProof() throws {
        guard case .values(let v) = f.call(.enable, [.string(""), .string("")]) else { return XCTFail() }
        XCTAssertEqual(v.first, .boolean(false))
        XCTAssertEqual(v.last, .stringPairs([("no-finger", "no finger is enrolled"),
                                              ("no-passcode", "no passcode is set (policy biometrics-or-passcode falls back to it)")]))
        XCTAssertEqual(f.reauth.checks.value, 0)
        XCTAssertFalse(try f.record()?.enabled ?? false)
        XCTAssertEqual(f.call(.checkEnable, [.string(""), .string("")]), .values([v[1]]))
        XCTAssertEqual(f.call(.checkEnable, [.string(""), .string("../etc")]).errorName, .invalidArgument)
    }

    func testPasscodeRulesAreTheCLIsAndTheSecretComesOnlyThroughTheDescriptor() throws {
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
        XCTAssertEqual(f.call(.setPasscode, [.string(""), .string("pin"), .handle(0)], secret: "12").errorName, .invalidPasscode)
        XCTAssertEqual(f.call(.setPasscode, [.string(""), .string("pin"), .handle(0)], secret: "12ab").errorName, .invalidPasscode)
        XCTAssertEqual(f.call(.setPasscode, [.string(""), .string("pattern"), .handle(0)], secret: "1212").errorName, .invalidPasscode)
        XCTAssertEqual(f.call(.setPasscode, [.string(""), .string("hex"), .handle(0)], secret: "1234").errorName, .invalidArgument)
        XCTAssertNil(try f.record()?.passcode)
        // A pattern that jumps over 2, 6 and 8 picks them up: stored in its canonical form.
        XCTAssertEqual(f.call(.setPasscode, [.string(""), .string("pattern"), .handle(0)], secret: "1397\n"), .values([]))
        let stored = try XCTUnwrap(f.record()?.passcode)
        XCTAssertEqual(stored.kind, .pattern)
        XCTAssertTrue(try Passcode.verify(Secret(bytes: Array("1236987".utf8))!, against: stored.hash))
        XCTAssertFalse(f.log.lines.value.joined().contains("1397"), "the secret is never logged")
        XCTAssertEqual(f.call(.removePasscode, [.string("")]), .values([]))
        XCTAssertNil(try f.record()?.passcode)
        let outcomes = try f.store().recentEvents(user: ServiceFixture.user).map(\.outcome)
        XCTAssertEqual(Array(outcomes.prefix(3)), ["passcode-removed", "passcode-set:pattern", "reauthenticated"])
    }

    /// Issue 32: the password kept for the boot goes when biometric unlock is turned off, the
    /// passcode removed or the fingers deleted, as with the root CLI; and the user can drop it
    /// with ForgetPassword, with no proof (it only takes something away), audited. Another
    /// user's needs manage-others.
    func testTheKeptPasswordGoesWithDisableRemovalsAndForgetPassword() throws {
        XCTAssertEqual(f.call(.forgetPassword, [.string("")]), .values([.boolean(true)]), "no proof needed")
        XCTAssertEqual(f.forgotten.value, [ServiceFixture.user])
        f.keptPassword.mutate { $0 = false }
        XCTAssertEqual(f.call(.forgetPassword, [.string("")]), .values([.boolean(false)]), "nothing kept: says so")
        XCTAssertEqual(try f.store().recentEvents(user: ServiceFixture.user).first?.outcome, "password-forgotten")
        XCTAssertEqual(f.call(.forgetPassword, [.string(ServiceFixture.other)]).errorName, .notAuthorized)
        XCTAssertEqual(f.forgotten.value.count, 2, "another user's is not touched without manage-others")

        f.forgotten.mutate { $0 = [] }
        XCTAssertEqual(f.call(.disable, [.string(""), .string("")]), .values([]))
        XCTAssertEqual(f.forgotten.value, [ServiceFixture.user], "Disable drops it")
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
        XCTAssertEqual(f.call(.setPasscode, [.string(""), .string("pin"), .handle(0)], secret: "2468\n"), .values([]))
        f.forgotten.mutate { $0 = [] }
        XCTAssertEqual(f.call(.removePasscode, [.string("")]), .values([]))
        XCTAssertEqual(f.forgotten.value, [ServiceFixture.user], "RemovePasscode drops it")
        try f.store().saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array("daemon-ri".utf8), created: 1), user: ServiceFixture.user)
        f.forgotten.mutate { $0 = [] }
        XCTAssertEqual(f.call(.deleteFingers, [.string(""), .string("")]), .values([.uint32(1)]))
        XCTAssertEqual(f.forgotten.value, [ServiceFixture.user], "DeleteFingers drops it")
    }

    func testAnotherUsersAccountNeedsManageOthersAndIsAuditedAsAnAdministrators() throws {
        XCTAssertEqual(f.call(.disable, [.string(ServiceFixture.other), .string("")]).errorName, .notAuthorized)
        XCTAssertEqual(f.call(.resetLockouts, [.string(ServiceFixture.other), .string("")]).errorName, .notAuthorized)
        XCTAssertNil(try f.record(ServiceFixture.other))
        f.authority.set(ManagerAPI.manageOthersAction, .authorized)
        XCTAssertEqual(f.call(.disable, [.string(ServiceFixture.other), .string("")]), .values([]))
        let row = try XCTUnwrap(try f.store().recentEvents(user: ServiceFixture.other).first)
        XCTAssertEqual(row.outcome, "disabled")
        XCTAssertEqual(row.reason, "admin-uid-\(ServiceFixture.userUID)")
        XCTAssertTrue(f.log.lines.value.contains { $0.contains("user=bin action=disabled route=admin-uid-1") })
    }

    func testWrongShapesAndNamesAreErrorsNeverCrashes() throws {
        let odd: [(String, [BusValue])] = [
            ("GetStatus", []), ("GetStatus", [.uint32(1)]), ("GetStatus", [.string(""), .string("")]),
            ("Authenticate", [.string("secret in an argument")]), ("SetPasscode", [.string(""), .string("pin"), .string("1234")]),
            ("NoSuchMethod", []), ("", []), (String(repeating: "x", count: 100_000), []),
            ("GetStatus", [.string(String(repeating: "a", count: 1_000_000))]),
            ("StartEnrolment", [.string(""), .string("seventh-finger"), .uint32(0)]),
            ("StartEnrolment", [.string(""), .string("right-index"), .uint32(100_000)]),
            ("ResetLockouts", [.string(""), .string("everything")]),
            ("DeleteFingers", [.string(""), .string(String(repeating: "f", count: 10_000))]),
            ("GetEvents", [.string("\u{0}"), .int64(.min), .uint32(.max)]),
        ]
        for (method, arguments) in odd {
            let reply = f.manager.serve(MethodCall(method: method, arguments: arguments, caller: f.caller()))
            guard case .error = reply else { return XCTFail("\(method.prefix(20)) \(arguments.count): \(reply)") }
        }
    }

    func testAFloodOfCallsIsAnsweredBusy() throws {
        var limits = CallLimits()
        limits.perConnection = 2; limits.total = 3
        f = try ServiceFixture(limits: limits)
        XCTAssertTrue(f.manager.admit(connection: ":1.1"))
        XCTAssertTrue(f.manager.admit(connection: ":1.1"))
        XCTAssertFalse(f.manager.admit(connection: ":1.1"), "per connection")
        XCTAssertTrue(f.manager.admit(connection: ":1.2"))
        XCTAssertFalse(f.manager.admit(connection: ":1.3"), "in all")
        f.manager.done(connection: ":1.1")
        XCTAssertTrue(f.manager.admit(connection: ":1.3"))
        for _ in 0..<8 { XCTAssertTrue(f.manager.admit(user: 7)) }
        XCTAssertFalse(f.manager.admit(user: 7), "per user, across connections")
        XCTAssertEqual(f.manager.serve(MethodCall(method: "GetStatus", arguments: [.string("")], caller: f.caller(uid: 7))).errorName, .busy)
        XCTAssertTrue(f.manager.admit(user: 8), "others are not held up")
    }

    func testIdleOnlyWhenNothingIsPending() throws {
        XCTAssertFalse(f.manager.isIdle(for: 60_000))
        f.clock.advance(seconds: 61)
        XCTAssertTrue(f.manager.isIdle(for: 60_000))
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
        f.clock.advance(seconds: 61)
        XCTAssertFalse(f.manager.isIdle(for: 60_000), "a live grant keeps the service")
        f.clock.advance(seconds: 300)
        XCTAssertTrue(f.manager.isIdle(for: 60_000))
    }

    /// The service and root's CLI write the same store at once; the store's write queue orders
    /// them and neither loses an update.
    func testTwoWritersNeverLoseAnUpdate() throws {
        try f.enrolAndSetPIN()
        XCTAssertEqual(f.authenticate(), .values([.uint32(ManagerAPI.grantSeconds)]))
        // Six connections of the user's at once (within the per-user limit), two changes each.
        let services = (0..<12).map { "svc\($0)" }
        let admin = (0..<12).map { "root\($0)" }
        let group = DispatchGroup()
        for pair in stride(from: 0, to: services.count, by: 2) {
            group.enter()
            Thread.detachNewThread { [f] in
                for s in services[pair..<(pair + 2)] {
                    XCTAssertEqual(f!.call(.disable, [.string(""), .string(s)], caller: f!.caller(":1.\(100 + pair)")), .values([]))
                }
                group.leave()
            }
        }
        group.enter()
        Thread.detachNewThread { [f] in
            let store = try! f!.store()
            for s in admin { try! store.setEnabled(true, user: ServiceFixture.user, service: s, at: 5) }
            group.leave()
        }
        group.wait()
        let overrides = try XCTUnwrap(f.record()?.serviceOverrides)
        XCTAssertEqual(Set(overrides.keys), Set(services + admin))
    }
}

extension MethodReply {
    var values: [BusValue]? { if case .values(let v) = self { return v }; return nil }
}
