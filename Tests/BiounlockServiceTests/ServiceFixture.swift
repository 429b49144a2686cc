import XCTest
import Foundation
import TestSupport
import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockService
import BiounlockServiceProtocol

/// polkit as the tests want it: what each action answers, and every question asked.
final class FakeAuthority: Authority, @unchecked Sendable {
    let answers = Locked<[String: AuthorityAnswer]>([
        ManagerAPI.manageOwnAction: .authorized,
        ManagerAPI.manageOthersAction: .notAuthorized(challenge: true),
    ])
    let asked = Locked<[String]>([])
    func check(action: String, caller: Caller) -> AuthorityAnswer {
        asked.mutate { $0.append(action) }
        return answers.value[action] ?? .notAuthorized(challenge: false)
    }
    func set(_ action: String, _ answer: AuthorityAnswer) { answers.mutate { $0[action] = answer } }
}

/// The PAM stack as a function: `right` is the one secret it accepts.
final class FakeReauthenticator: Reauthenticator, @unchecked Sendable {
    let right: String
    let checks = Locked(0)
    init(right: String) { self.right = right }
    func check(user: String, secret: Secret) -> ReauthAnswer {
        checks.mutate { $0 += 1 }
        let typed = secret.withBytes { String(decoding: $0, as: UTF8.self) }
        return typed == right ? .accepted : .rejected
    }
}

/// An enrolment the test drives by hand: `feed` sends events as the worker would.
final class FakeEnrolments: EnrolmentRunner, @unchecked Sendable {
    final class Control: EnrolmentControl, @unchecked Sendable {
        let cancelled = Locked(false)
        var onCancel: (() -> Void)?
        func cancel() { cancelled.mutate { $0 = true }; onCancel?() }
    }
    let started = Locked<[EnrolRequest]>([])
    let sink = Locked<(@Sendable (EnrolEvent) -> Void)?>(nil)
    let control = Control()
    var failStart = false

    func start(_ request: EnrolRequest, events: @escaping @Sendable (EnrolEvent) -> Void) -> Result<EnrolmentControl, SensorUnavailable> {
        if failStart { return .failure(SensorUnavailable("no reader")) }
        started.mutate { $0.append(request) }
        sink.mutate { $0 = events }
        control.onCancel = { events(.finished(.cancelled)) }
        return .success(control)
    }

    func feed(_ event: EnrolEvent) { sink.value?(event) }
}

final class MemoryLog: Logger, @unchecked Sendable {
    let lines = Locked<[String]>([])
    func log(_ level: LogLevel, _ message: String) { lines.mutate { $0.append("\(level): \(message)") } }
}

/// A monotonic clock the test moves.
final class TestClock: @unchecked Sendable {
    let now = Locked<Int64>(1_000_000)
    func advance(seconds: Int64) { now.mutate { $0 += seconds * 1000 } }
}

/// One Manager over a store in a temp directory, with fakes for polkit, PAM and the reader.
/// Callers are system accounts (the host's /etc/passwd is never touched): `daemon` (uid 1) is
/// the user, `bin` (uid 2) another one.
final class ServiceFixture {
    static let user = "daemon"
    static let userUID: UInt32 = 1
    static let other = "bin"
    static let password = "unix-Pw-1"

    let dir: String
    var storePath: String { dir + "/store/biounlock.db" }
    let authority = FakeAuthority()
    let reauth = FakeReauthenticator(right: ServiceFixture.password)
    let enrolments = FakeEnrolments()
    let log = MemoryLog()
    let clock = TestClock()
    let signals = Locked<[OutgoingSignal]>([])
    /// Whose kept password (issue 32) the service dropped, in order; what the drop answers.
    let forgotten = Locked<[String]>([])
    let keptPassword = Locked<Bool>(true)
    var manager: Manager!

    init(options extra: [String] = [], rules: ReauthRules = ReauthRules(), limits: CallLimits = CallLimits()) throws {
        var template = Array("/tmp/bu-svc.XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        dir = String(cString: p)
        guard case .success(let loaded) = Configuration.load(arguments: ["db=\(dir)/store/biounlock.db", "sensor=simulated",
                                                                         "sim_socket=\(dir)/sim", "config=\(dir)/none.conf"] + extra) else {
            throw CocoaError(.fileReadUnknown)
        }
        let signals = self.signals, clock = self.clock, forgotten = self.forgotten, keptPassword = self.keptPassword
        let environment = ServiceEnvironment(authority: authority, reauthenticator: reauth, enrolments: enrolments, logger: log,
                                             emit: { s in signals.mutate { $0.append(s) } },
                                             monotonic: { clock.now.value },
                                             forgetKeptPassword: { user in
                                                 forgotten.mutate { $0.append(user) }
                                                 return keptPassword.value
                                             })
        manager = Manager(options: loaded.options, environment: environment, rules: rules, limits: limits)
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    func caller(_ bus: String = ":1.10", uid: UInt32 = ServiceFixture.userUID, interactive: Bool = false) -> Caller {
        Caller(busName: bus, uid: uid, pid: 4242, allowsInteraction: interactive)
    }

    /// A call as biounlockd makes it; `secret` is written into a pipe whose read end goes along.
    @discardableResult
    func call(_ method: ManagerAPI.Method, _ arguments: [BusValue] = [], secret: String? = nil, caller: Caller? = nil) -> MethodReply {
        var descriptors: [Int32: FileDescriptor] = [:]
        var fds: [Int32] = [-1, -1]
        if let secret {
            XCTAssertEqual(pipe(&fds), 0)
            _ = secret.utf8CString.withUnsafeBufferPointer { write(fds[1], $0.baseAddress, $0.count - 1) }
            close(fds[1])
            descriptors[0] = FileDescriptor(rawValue: fds[0])
        }
        defer { if fds[0] >= 0 { close(fds[0]) } }
        return manager.serve(MethodCall(method: method.rawValue, arguments: arguments, descriptors: descriptors, caller: caller ?? self.caller()))
    }

    func authenticate(_ secret: String = ServiceFixture.password, caller: Caller? = nil) -> MethodReply {
        call(.authenticate, [.handle(0)], secret: secret, caller: caller)
    }

    /// The store as root's CLI would open it (a connection of its own).
    func store() throws -> Store { try Store.open(path: storePath, mode: .administer) }

    func record(_ user: String = ServiceFixture.user) throws -> UserRecord? {
        guard FileManager.default.fileExists(atPath: storePath) else { return nil }
        return try store().loadUser(user)
    }

    /// The status the service returns for the caller's own account.
    func status(caller: Caller? = nil) -> AccountStatus? {
        guard case .values(let v) = call(.getStatus, [.string("")], caller: caller), let first = v.first else { return nil }
        return AccountStatus(first)
    }

    /// A finger and a PIN set up as root would, so that enabling can succeed.
    func enrolAndSetPIN() throws {
        let s = try store()
        try s.saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array("daemon-finger".utf8), created: 1), user: ServiceFixture.user)
        let hash = try Passcode.hash(Secret(bytes: Array("2468".utf8))!, opsLimit: 1, memLimit: 8192)
        try s.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: ServiceFixture.user, at: 1)
    }
}
