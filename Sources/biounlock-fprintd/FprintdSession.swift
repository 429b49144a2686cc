import BiounlockDBus
import BiounlockFprintProtocol
import BiounlockSystem

/// The fprintd client (sensor=fprintd): one connection to the bus the request names, at most one
/// claimed device. fprintd keeps the prints; this side only starts, watches and stops its
/// operations, and reports each outcome in the helper protocol.
///
/// Security choices, each written where it is enforced below:
/// - the bus address comes from the request (root-owned `fprintd_bus=`), never the environment,
///   and only `unix:path=` addresses are accepted (DBusConnection);
/// - fprintd's unique bus name is asked of the bus itself (GetNameOwner: its reply comes from
///   org.freedesktop.DBus, a name no client can send as), never taken from a reply that claims to
///   be fprintd's; a reply to a call to fprintd counts only from that name, and a signal only from
///   that name and on the claimed device's object path: anyone on the system bus can emit a
///   signal called VerifyStatus, or answer a serial it guessed, but the bus stamps the true
///   sender on every message;
/// - the order of replies and signals is the order the bus sent them: one connection, read by
///   this thread alone, message after message;
/// - a status reported before verification began is ignored: whatever fprintd sent before this
///   helper asked for the verification (statuses of an earlier try, of another client's session,
///   anything before the Claim or VerifyStop reply) is dropped before VerifyStart is sent, and
///   nothing counts when VerifyStart fails. fprintd itself sends a verification's first status
///   before VerifyStart's reply when the touch is quick (seen with the real daemon), so statuses
///   between the request and its reply do count -- only this client can have started a
///   verification on a device it holds;
/// - fprintd quitting (NameOwnerChanged), the bus closing, or the spawner going away end the wait
///   at once; the device is released with Release (after VerifyStop while a verification still
///   runs), and if this process is killed instead, fprintd sees its client vanish and releases
///   the device itself.
final class FprintdSession {
    static let busName = "net.reactivated.Fprint"
    static let managerPath = "/net/reactivated/Fprint/Manager"
    static let managerInterface = "net.reactivated.Fprint.Manager"
    static let deviceInterface = "net.reactivated.Fprint.Device"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    /// Longest wait for one method call; the spawner kills this process at its own deadline anyway.
    static let callMilliseconds: Int64 = 5000
    /// Longest wait for VerifyStop / EnrollStop / Release (fprintd itself waits up to 1 s).
    static let stopMilliseconds: Int64 = 3000
    /// Most signals kept before they are used: only fprintd itself could send more.
    static let pendingLimit = 1024
    /// logind's signal before a suspend (true) and after the resume (false).
    static let login1Path = "/org/freedesktop/login1"
    static let login1Interface = "org.freedesktop.login1.Manager"
    /// Most times one verify starts over after the system slept (`verify`).
    static let wakeRestarts = 8

    let peer: Int32
    let send: (FprintResponse) -> Void
    /// Called when fprintd verifies (each VerifyStart answered), before the wait for a touch: the
    /// moment the helper detaches (main.swift, `--detach`).
    var verifying: () -> Void = {}
    var connection: DBusConnection?
    var bus = ""
    /// fprintd's unique bus name (":1.42"), as the bus itself reported it; "" until known.
    var owner = ""
    var claimed: FprintdReader?

    /// What arrived from fprintd for the claimed device, in arrival order, not yet used.
    var pending: [Event] = []
    /// Replies that arrived while another was awaited, by serial (each from whom it came).
    var replies: [UInt32: [DBusMessage]] = [:]
    /// Calls whose replies are kept in `replies`.
    var awaited: Set<UInt32> = []
    /// AddMatch calls not waited for: an error reply to one means fprintd's signals never come.
    var watches: Set<UInt32> = []
    var selectedFinger: UInt8 = 0

    enum Event: Equatable {
        case verifyStatus(String, Bool)
        case fingerSelected(String)
        case enrollStatus(String, Bool)
    }

    enum Operation { case none, running, finished }
    /// fprintd's verification on the claimed device: running needs VerifyStop before anything
    /// else; finished (a final status came) needs VerifyStop before the next VerifyStart, but not
    /// before Release, which ends it itself.
    var verification = Operation.none
    var enrolling = false
    /// The Release sent right after a match (its reply is waited for in `finish`).
    var releasing: UInt32?
    /// A VerifyStart whose reply has not been read yet.
    var verifyStart: UInt32?
    /// fprintd quit, the bus closed, or fprintd's signals cannot be watched.
    var vanished = false
    /// The system is going to sleep or asleep: logind's PrepareForSleep(true) came, and its
    /// PrepareForSleep(false) not yet.
    var asleep = false
    /// A sleep began since the current verification started.
    var slept = false

    init(peer: Int32, send: @escaping (FprintResponse) -> Void) {
        self.peer = peer
        self.send = send
    }

    deinit { finish() }

    var gone: FprintFailure {
        FprintFailure(.device, domain: .device, code: DeviceCode.removed, "fprintd quit or the bus closed")
    }

    // MARK: messages

    static func fprintd(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) -> DBusMessage {
        DBusMessage.call(busName, path, interface, member, arguments)
    }

    static func bus(_ member: String, _ arguments: [DBusValue] = []) -> DBusMessage {
        DBusMessage.call(DBusConnection.busName, DBusConnection.busPath, DBusConnection.busInterface, member, arguments)
    }

    /// Sends `messages` (connecting first, with them in the same write, when not connected);
    /// their serials. Replies to all of them are kept until `reply(to:)` takes them.
    func transmit(_ messages: [DBusMessage], deadline: Deadline) -> Result<[UInt32], FprintFailure> {
        let sent: Result<[UInt32], DBusConnection.Failure>
        if let connection {
            sent = connection.send(messages, until: deadline)
        } else {
            switch DBusConnection.open(address: bus, first: messages, deadline: deadline) {
            case .success(let (c, serials)):
                connection = c
                sent = .success(serials)
            case .failure(let f):
                return .failure(FprintFailure(.noReader, "cannot connect to the system bus at \(bus): \(f)"))
            }
        }
        switch sent {
        case .success(let serials):
            awaited.formUnion(serials)
            return .success(serials)
        case .failure(let f):
            vanished = true
            return .failure(FprintFailure(.noReader, "the bus connection was lost: \(f)"))
        }
    }

    /// Takes in one message from the bus: a reply that is awaited, a signal of fprintd's for the
    /// claimed device, or fprintd's name changing hands; everything else is dropped.
    func dispatch(_ m: DBusMessage) {
        switch m.kind {
        case .methodReturn, .error:
            guard let serial = m.replySerial else { return }
            if watches.remove(serial) != nil {
                // The bus's answer to an AddMatch; only the bus may give it.
                if m.kind == .error, m.sender == DBusConnection.busName { vanished = true }
                return
            }
            guard awaited.contains(serial) else { return }
            var list = replies[serial] ?? []
            // Bounded: a client guessing serials cannot grow this.
            if list.count < 4 { list.append(m) }
            replies[serial] = list
        case .signal:
            let sender = m.sender ?? ""
            if m.destination == nil, m.path == FprintdSession.login1Path, m.interface == FprintdSession.login1Interface,
               m.member == "PrepareForSleep", m.body.count == 1, let sleeping = m.body[0].bool {
                // logind's: a broadcast reaches this connection only through a match rule, and the
                // one rule for this signal names logind's bus name as its sender (`start`), which
                // the bus checks; a signal sent to this connection by name (destination set) could
                // come from anyone and is dropped. Even so it only decides whether a failed
                // verification starts over (`verify`).
                asleep = sleeping
                if sleeping { slept = true }
                return
            }
            if sender == DBusConnection.busName, m.interface == DBusConnection.busInterface, m.member == "NameOwnerChanged",
               m.path == DBusConnection.busPath, m.body.count == 3, m.body[0].text == FprintdSession.busName {
                // The bus says fprintd's name left the owner this session talks to.
                if !owner.isEmpty, m.body[1].text == owner, m.body[2].text != owner { vanished = true }
                return
            }
            guard !owner.isEmpty, sender == owner, let claimed, m.path == claimed.path,
                  m.interface == FprintdSession.deviceInterface, pending.count < FprintdSession.pendingLimit else { return }
            switch (m.member ?? "", m.body.count) {
            case ("VerifyStatus", 2):
                if let r = m.body[0].text, let d = m.body[1].bool { pending.append(.verifyStatus(String(r.prefix(64)), d)) }
            case ("VerifyFingerSelected", 1):
                if let f = m.body[0].text { pending.append(.fingerSelected(String(f.prefix(64)))) }
            case ("EnrollStatus", 2):
                if let r = m.body[0].text, let d = m.body[1].bool { pending.append(.enrollStatus(String(r.prefix(64)), d)) }
            default:
                break
            }
        case .methodCall:
            // Nobody calls this client (no reply is sent: the bus answers such calls itself only
            // when the caller waits, and then with NoReply at its own timeout).
            break
        }
    }

    /// The reply to `serial` from `sender` (nil: the bus, for a call to the bus; else fprintd's
    /// unique name, which must be known by then), reading and dispatching what comes meanwhile.
    /// An error reply is a failure, mapped by FprintdErrors.
    func reply(to serial: UInt32, from sender: String, context: String, deadline: Deadline) -> Result<DBusMessage, FprintFailure> {
        while true {
            if let list = replies[serial], let m = list.first(where: { $0.sender == sender }) {
                replies[serial] = nil
                awaited.remove(serial)
                if m.kind == .error {
                    return .failure(FprintdErrors.failure(name: m.errorName ?? "", message: "\(context): \(String((m.firstText ?? "").prefix(512)))"))
                }
                return .success(m)
            }
            guard let connection else { return .failure(FprintFailure(.notOpen, "not connected to the bus")) }
            switch connection.receive(until: deadline) {
            case .message(let m): dispatch(m)
            case .watched: continue
            case .timedOut: return .failure(FprintFailure(.other, "\(context): no answer in time"))
            case .failed(let f):
                vanished = true
                return .failure(FprintFailure(.noReader, "\(context): \(f)"))
            }
        }
    }

    /// One call to fprintd (its unique name known) and its reply.
    func call(_ message: DBusMessage, context: String, milliseconds: Int64 = FprintdSession.callMilliseconds) -> Result<DBusMessage, FprintFailure> {
        let deadline = Deadline.after(milliseconds: milliseconds)
        return transmit([message], deadline: deadline).flatMap { reply(to: $0[0], from: owner, context: context, deadline: deadline) }
    }

    // MARK: waiting

    enum WaitEnd { case ready, timedOut, peerGone, request, vanished }

    /// Reads from the bus until `ready()` holds, fprintd vanishes, the time is up, or the
    /// spawner sends a request (the user typed instead of touching) or goes away.
    func wait(until deadline: Deadline, _ ready: () -> Bool) -> WaitEnd {
        while true {
            if ready() { return .ready }
            if vanished { return .vanished }
            guard let connection else { return .vanished }
            switch connection.receive(until: deadline, watching: FileDescriptor(rawValue: peer)) {
            case .message(let m): dispatch(m)
            case .watched: return peerHungUp() ? .peerGone : .request
            case .timedOut: return ready() ? .ready : .timedOut
            case .failed: vanished = true
            }
        }
    }

    /// Whether the spawner closed its end (rather than sent a request).
    func peerHungUp() -> Bool {
        guard let events = try? Poll.wait(FileDescriptor(rawValue: peer), for: .readable, until: Deadline(milliseconds: 0)) else { return false }
        return events.contains(.hangUp) || events.contains(.error)
    }

    /// Forgets whatever fprintd sent before now (statuses of an earlier verification): reads
    /// what is already there, without waiting, and empties `pending`.
    func drain() {
        var n = 0
        while n < 1000, let connection, case .message(let m) = connection.receive(until: Deadline(milliseconds: 0)) {
            dispatch(m)
            n += 1
        }
        pending = []
    }

    func remaining(until deadline: Deadline) -> Int64 { Int64(deadline.remaining()) }

    // MARK: verify

    func verify(timeoutMilliseconds: UInt32) {
        guard let claimed, releasing == nil else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        if vanished { return send(.failure(gone)) }
        let deadline = Deadline.after(milliseconds: Int64(timeoutMilliseconds))
        var wakes = 0
        while true {
            guard let status = awaitVerifyStatus(claimed, deadline: deadline) else { return }
            // The system went to sleep meanwhile: fprintd suspended the reader, which ended the
            // verification with an error that is not the reader's fault. Once the system is awake
            // again the verification starts over, and the spawner, still waiting for its touch,
            // sees nothing of it (a screen locker across a suspend; tests: ScenarioTests). Bounded
            // by `deadline` and by `wakeRestarts`: what counts as a sleep is logind's broadcast
            // alone (`dispatch`), and nothing here can turn into a match.
            if status.done, status.result == "verify-unknown-error", slept, wakes < FprintdSession.wakeRestarts {
                wakes += 1
                verification = .finished
                if endVerify(after: wait(until: deadline) { !asleep }) { return }
                continue
            }
            return answer(status)
        }
    }

    /// Starts a verification unless one runs (stopping a finished one first), and waits for its
    /// next status. Nil when the wait ended otherwise and the spawner was answered (or is gone).
    func awaitVerifyStatus(_ claimed: FprintdReader, deadline: Deadline) -> (result: String, done: Bool)? {
        if verification != .running {
            // A finished verification is stopped before the next one starts.
            if verification == .finished { stopVerify() }
            if case .failure(let f) = startVerify(claimed, deadline: deadline) { send(.failure(f)); return nil }
        }
        if let serial = verifyStart {
            // Statuses may come before the reply (fprintd sends them as soon as the reader has a
            // touch); they stay in order in `pending` and count only if VerifyStart succeeded.
            let started = wait(until: deadline) { replies[serial]?.contains { $0.sender == owner } == true }
            if endVerify(after: started) { return nil }
            verifyStart = nil
            if case .failure(let f) = reply(to: serial, from: owner, context: "fprintd VerifyStart", deadline: deadline) {
                verification = .none
                pending = []
                send(.failure(f))
                return nil
            }
            verifying()
        }
        var status: (result: String, done: Bool)?
        let answered = wait(until: deadline) {
            while status == nil, let event = pending.first {
                pending.removeFirst()
                switch event {
                case .verifyStatus(let result, let done): status = (result, done)
                case .fingerSelected(let name): selectedFinger = fprintdFingerNumber(name) ?? 0
                case .enrollStatus: break
                }
            }
            return status != nil
        }
        if endVerify(after: answered) { return nil }
        guard let status else { send(.verified(.timedOut)); return nil }
        return status
    }

    /// Answers the spawner with a verification's status (the verification goes on after a retry).
    func answer(_ status: (result: String, done: Bool)) {
        guard let claimed else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        guard status.done else {
            // A retry: fprintd goes on verifying; the next request waits for the next touch.
            return send(.verified(.retry(code: FprintdSession.retryCode(status.result))))
        }
        // The answer goes out at once: the spawner records it (a success, a counted failure)
        // while this side stops the verification -- with the next VerifyStart, or with Release.
        verification = .finished
        switch status.result {
        case "verify-match":
            // Nothing follows a match but the close. The device's Release goes out first (no
            // VerifyStop: Release ends the finished verification itself): fprintd's answer to it
            // (bench/RESULTS.md, section 6) is the longer part of what follows, longer than the
            // spawner's record of the success, and the spawner's wake-up must not delay it on a
            // busy core. Then the spawner has the answer; `finish` waits for Release's reply.
            if !vanished, case .success(let serials) = transmit([FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "Release")],
                                                                 deadline: Deadline.after(milliseconds: FprintdSession.stopMilliseconds)) {
                releasing = serials.first
            }
            send(.verified(.match(index: Int(selectedFinger))))
            verification = .none
        case "verify-no-match":
            send(.verified(.noMatch))
        case "verify-disconnected":
            send(.failure(FprintFailure(.device, domain: .device, code: DeviceCode.removed, "fprintd: the reader was disconnected")))
        default:
            send(.failure(FprintFailure(.device, domain: .device, code: DeviceCode.general, "fprintd reported \(String(status.result.prefix(64)))")))
        }
    }

    /// Sends VerifyStart ("any") after dropping whatever fprintd sent before; its reply is
    /// `verifyStart`'s, read by `verify` (or, if no verify follows, before the VerifyStop).
    func startVerify(_ claimed: FprintdReader, deadline: Deadline) -> Result<Void, FprintFailure> {
        drain()
        selectedFinger = 0
        slept = asleep
        switch transmit([FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "VerifyStart", [.string("any")])], deadline: deadline) {
        case .success(let s):
            verifyStart = s.first
            verification = .running
            return .success(())
        case .failure(let f):
            return .failure(f)
        }
    }

    static func retryCode(_ result: String) -> Int {
        switch result {
        case "verify-swipe-too-short", "enroll-swipe-too-short": return DeviceCode.retryTooShort
        case "verify-finger-not-centered", "enroll-finger-not-centered": return DeviceCode.retryCenterFinger
        case "verify-remove-and-retry", "enroll-remove-and-retry": return DeviceCode.retryRemoveFinger
        default: return DeviceCode.retryGeneral
        }
    }

    /// Ends a verify whose wait stopped short of its answer: fprintd gone (a failure), the spawner
    /// gone (no one to answer), or a request or the time up (VerifyStop, then "timed out").
    /// False when the answer is there (`.ready`) and the verify goes on.
    func endVerify(after end: WaitEnd) -> Bool {
        switch end {
        case .ready:
            return false
        case .vanished:
            verification = .none
            send(.failure(gone))
        case .peerGone:
            stopVerify()
        case .request, .timedOut:
            stopVerify()
            send(.verified(.timedOut))
        }
        return true
    }

    /// VerifyStop, for a verification running or finished; errors are ignored (fprintd may have
    /// ended it itself).
    func stopVerify() {
        guard verification != .none, let claimed, !vanished else { verification = .none; verifyStart = nil; return }
        verification = .none
        if let serial = verifyStart {
            // fprintd runs its calls' checks on threads: a VerifyStop sent before VerifyStart was
            // answered could overtake it. (A failed VerifyStart needs no VerifyStop.)
            verifyStart = nil
            if case .failure = reply(to: serial, from: owner, context: "fprintd VerifyStart",
                                     deadline: Deadline.after(milliseconds: FprintdSession.stopMilliseconds)) { return }
        }
        _ = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "VerifyStop"), context: "fprintd VerifyStop",
                 milliseconds: FprintdSession.stopMilliseconds)
    }

    // MARK: release

    /// Stops what runs and releases the device (the `close` request, and on exit). A verification
    /// that ended by itself (a match, a wrong finger) needs no VerifyStop: Release ends it, and its
    /// reply comes once fprintd has closed the device -- so the device is free for the next
    /// client (the next sudo) before the spawner's transaction returns (docs/DESIGN.md).
    func finish() {
        if claimed != nil, let serial = releasing {
            // Released after a match: its reply says the device is closed.
            _ = reply(to: serial, from: owner, context: "fprintd Release", deadline: Deadline.after(milliseconds: FprintdSession.stopMilliseconds))
            releasing = nil
            claimed = nil
        } else if let claimed {
            if verification == .running { stopVerify() }
            verification = .none
            stopEnrol()
            if !vanished {
                _ = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "Release"), context: "fprintd Release",
                         milliseconds: FprintdSession.stopMilliseconds)
            }
            self.claimed = nil
        }
        connection?.close()
        connection = nil
    }
}
