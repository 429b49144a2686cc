import BiounlockSystem
import BiounlockCore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockServiceProtocol
import CPAMClient

/// How a re-authentication ended.
public enum ReauthAnswer: Equatable, Sendable {
    /// The PAM stack accepted the secret (and the account is usable).
    case accepted
    case rejected
    /// The check could not be made (the worker did not start or answer, PAM could not start).
    case unavailable(String)
}

/// Checks a typed secret for a user: the Unix password or the current biounlock passcode,
/// through the PAM service biounlock-reauth -- never a finger (pam_biounlock's `passcode_only`
/// never opens the reader). The service's one way to a fresh proof; polkit's auth_self is not
/// used, because its agent runs common-auth, where pam_biounlock would take a touch.
public protocol Reauthenticator: Sendable {
    func check(user: String, secret: Secret) -> ReauthAnswer
}

/// The real one: `biounlockd --reauth-worker` runs the PAM transaction in its own process
/// (Workers.swift says why) and answers with one byte; it is killed if it takes longer than
/// `limitMilliseconds` (a stack that never returns must not hold the caller or the service).
public struct WorkerReauthenticator: Reauthenticator {
    let launch: WorkerLaunch
    let limitMilliseconds: Int64

    public init(launch: WorkerLaunch, limitMilliseconds: Int64 = 30_000) {
        self.launch = launch; self.limitMilliseconds = limitMilliseconds
    }

    public func check(user: String, secret: Secret) -> ReauthAnswer {
        let worker: HelperProcess
        switch launch.spawn("--reauth-worker", sensitive: true) {
        case .success(let w): worker = w
        case .failure(let why): return .unavailable(why.description)
        }
        defer { worker.kill() }
        let deadline = monotonicMilliseconds() &+ limitMilliseconds
        var request = WorkerMessages.reauthRequest(user: user, confdir: launch.pamConfdir, secret: secret)
        let sent = worker.channel.send(request, until: deadline)
        Memory.zero(&request)
        if case .failure(let f) = sent { return .unavailable("the re-authentication worker did not take the request: \(f)") }
        switch worker.channel.receive(until: deadline) {
        case .success(let reply):
            var r = WireReader(reply)
            switch r.u8().flatMap(WorkerMessages.ReauthResult.init(rawValue:)) {
            case .accepted?: return .accepted
            case .rejected?: return .rejected
            case .unavailable?: return .unavailable(r.string() ?? "PAM could not start")
            case nil: return .unavailable("the re-authentication worker answered nonsense")
            }
        case .failure(let f):
            return .unavailable("the re-authentication worker did not answer: \(f)")
        }
    }
}

/// The worker's side (`biounlockd --reauth-worker`): one request on descriptor 3, one PAM
/// transaction, one answer, exit.
public enum ReauthWorker {
    public static func run(channel: FrameChannel) -> Int32 {
        let deadline = monotonicMilliseconds() &+ 10_000
        guard case .success(var request) = channel.receive(until: deadline) else { return 1 }
        defer { Memory.zero(&request) }
        var r = WireReader(request)
        guard r.u8() == WorkerMessages.version, let user = r.string(), let confdir = r.string(),
              var secret = r.data(limit: Secret.maximumLength), r.isAtEnd else {
            return answer(channel, .unavailable, "malformed request")
        }
        defer { Memory.zero(&secret) }
        var result = biounlock_pam_result()
        let rc: Int32 = secret.withUnsafeBufferPointer { bytes in
            biounlock_pam_check(ManagerAPI.reauthService, user, confdir.isEmpty ? nil : confdir,
                                bytes.baseAddress, bytes.count, &result)
        }
        if result.start != biounlock_pam_success() {
            return answer(channel, .unavailable, "pam_start failed (\(result.start))")
        }
        return answer(channel, rc == 0 ? .accepted : .rejected, "")
    }

    static func answer(_ channel: FrameChannel, _ result: WorkerMessages.ReauthResult, _ detail: String) -> Int32 {
        var w = WireWriter()
        w.u8(result.rawValue)
        w.string(detail)
        _ = channel.send(w.bytes, until: monotonicMilliseconds() &+ 5000)
        return result == .accepted ? 0 : 1
    }
}
