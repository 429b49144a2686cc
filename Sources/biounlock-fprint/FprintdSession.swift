import BiounlockSystem
import CFPrint
import BiounlockFprintProtocol

/// fprintd's names for libfprint's finger numbers (1 = left thumb … 10 = right little).
let fprintdFingerNames = [
    "left-thumb", "left-index-finger", "left-middle-finger", "left-ring-finger", "left-little-finger",
    "right-thumb", "right-index-finger", "right-middle-finger", "right-ring-finger", "right-little-finger",
]

func fprintdFingerName(_ number: UInt8) -> String? {
    let index = Int(number) - 1
    return fprintdFingerNames.indices.contains(index) ? fprintdFingerNames[index] : nil
}

func fprintdFingerNumber(_ name: String) -> UInt8? {
    fprintdFingerNames.firstIndex(of: name).map { UInt8($0 + 1) }
}

/// The fprintd client (sensor=fprintd): one connection to the bus the request names, at most one
/// claimed device. fprintd keeps the prints; this side only starts, watches and stops its
/// operations, and reports each outcome in the helper protocol.
///
/// Security choices, each written where it is enforced below:
/// - the bus address comes from the request (root-owned `fprintd_bus=`), never the environment
///   (which is empty anyway), and only `unix:path=` addresses are accepted: GDBus's autolaunch:
///   and unixexec: transports would run programs;
/// - signals count only from fprintd's own unique bus name (looked up after the daemon answered)
///   and only on the claimed device's object path: anyone on the system bus can emit a signal
///   called VerifyStatus, but the bus stamps the true sender on every message;
/// - a status reported before verification began is ignored: whatever fprintd sent before this
///   helper asked for the verification (statuses of an earlier try, of another client's session,
///   anything before the Claim or VerifyStop reply) is dropped before VerifyStart is sent, and
///   nothing counts when VerifyStart fails. fprintd itself sends a verification's first status
///   before VerifyStart's reply when the touch is quick (seen with the real daemon), so statuses
///   between the request and its reply do count -- only this client can have started a
///   verification on a device it holds. The order of replies and signals is taken where it is
///   certain: a message filter on GDBus's worker thread sees every incoming message in arrival
///   order (GLib's dispatch does not keep it) and queues what matters (Inbox);
/// - fprintd quitting (NameOwnerChanged), the bus closing, or the spawner going away end the wait
///   at once; the device is released with VerifyStop/Release, and if this process is killed
///   instead, fprintd sees its client vanish and releases the device itself.
final class FprintdSession {
    static let busName = "net.reactivated.Fprint"
    static let managerPath = "/net/reactivated/Fprint/Manager"
    static let managerInterface = "net.reactivated.Fprint.Manager"
    static let deviceInterface = "net.reactivated.Fprint.Device"
    /// Longest wait for one method call; the spawner kills this process at its own deadline anyway.
    static let callMilliseconds: Int32 = 5000
    /// Longest wait for VerifyStop / EnrollStop / Release (fprintd itself waits up to 1 s).
    static let stopMilliseconds: Int32 = 3000

    let peer: Int32
    let send: (FprintResponse) -> Void
    private var connection: OpaquePointer?
    private var bus = ""
    /// fprintd's unique bus name (":1.42"), the only sender whose signals count.
    private var owner = ""
    private var claimed: FprintdReader?
    private var subscriptions: [guint] = []
    private var closedHandler: gulong = 0

    /// What GDBus's worker thread saw, in arrival order (see Inbox).
    private let inbox = Inbox()
    private var filter: guint = 0
    /// Taken from the inbox, not yet used (a retry and a match may arrive together).
    private var pending: [Inbox.Event] = []
    private var selectedFinger: UInt8 = 0
    /// A verification / enrolment that fprintd runs and that needs VerifyStop / EnrollStop.
    private var verifying = false
    private var enrolling = false
    /// fprintd quit, or the bus connection closed.
    private var vanished = false

    init(peer: Int32, send: @escaping (FprintResponse) -> Void) {
        self.peer = peer
        self.send = send
    }

    deinit { finish() }

    // MARK: connection and calls

    /// Connects to `address` (once per process).
    func connect(_ address: String) -> FprintFailure? {
        if let connection, !vanished, g_dbus_connection_is_closed(connection) == 0 {
            return address == bus ? nil : FprintFailure(.badRequest, "this helper is connected to another bus")
        }
        guard connection == nil else { return FprintFailure(.noReader, "the bus connection was lost") }
        // Only a Unix socket path: GDBus would run a program for autolaunch: or unixexec:.
        guard address.hasPrefix("unix:path=/"), !address.contains(","), !address.contains(";") else {
            return FprintFailure(.badRequest, "fprintd_bus must be unix:path=/ABSOLUTE/PATH")
        }
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let c = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            let f = FprintdErrors.failure(error, context: "cannot connect to the system bus at \(address)")
            return FprintFailure(.noReader, f.message)
        }
        // A closed bus must end this helper's wait, not the process (GDBus would _exit).
        g_dbus_connection_set_exit_on_close(c, 0)
        connection = c
        bus = address
        let me = Unmanaged.passUnretained(self).toOpaque()
        let onClosed: @convention(c) (OpaquePointer?, gboolean, UnsafeMutablePointer<GError>?, gpointer?) -> Void = { _, _, _, data in
            guard let data else { return }
            Unmanaged<FprintdSession>.fromOpaque(data).takeUnretainedValue().vanished = true
        }
        closedHandler = biounlock_signal_connect(UnsafeMutableRawPointer(c), "closed", unsafeBitCast(onClosed, to: GCallback.self), me)
        filter = g_dbus_connection_add_filter(c, { _, message, incoming, data in
            guard incoming != 0, let message, let data else { return message }
            Unmanaged<Inbox>.fromOpaque(data).takeUnretainedValue().see(message)
            return message
        }, Unmanaged.passUnretained(inbox).toOpaque(), nil)
        return nil
    }

    /// One method call on fprintd (or the bus), its result, or the failure it became.
    func call(_ path: String, _ interface: String, _ method: String, _ arguments: [String] = [],
              destination: String = FprintdSession.busName, timeout: Int32 = FprintdSession.callMilliseconds,
              context: String) -> Result<Variant, FprintFailure> {
        guard let connection else { return .failure(FprintFailure(.notOpen, "not connected to the bus")) }
        var error: UnsafeMutablePointer<GError>?
        let parameters = arguments.isEmpty ? nil : Variant.tuple(arguments)
        // Auto-start allowed: fprintd is bus-activated and exits when idle on real systems.
        guard let result = g_dbus_connection_call_sync(connection, destination, path, interface, method, parameters, nil,
                                                        G_DBUS_CALL_FLAGS_NONE, timeout, nil, &error) else {
            return .failure(FprintdErrors.failure(error, context: context))
        }
        return .success(Variant(taking: result))
    }

    func property(_ path: String, _ name: String) -> Variant? {
        guard case .success(let v) = call(path, "org.freedesktop.DBus.Properties", "Get", [FprintdSession.deviceInterface, name],
                                          context: "reading \(name)") else { return nil }
        return v.child(0)?.unboxed
    }

    // MARK: devices

    /// Every device fprintd has, with `user`'s fingers on each; learns fprintd's bus name.
    func devices(user: String) -> Result<[FprintdReader], FprintFailure> {
        let paths: [String]
        switch call(FprintdSession.managerPath, FprintdSession.managerInterface, "GetDevices", context: "fprintd GetDevices") {
        case .failure(let f): return .failure(f)
        case .success(let v):
            guard v.type == "(ao)", let list = v.child(0)?.strings(limit: FprintProtocol.maximumDevices) else {
                return .failure(FprintFailure(.other, "fprintd answered GetDevices with \(v.type)"))
            }
            paths = list
        }
        // The daemon answered (or was started): only its unique name's signals count from now.
        switch call("/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [FprintdSession.busName],
                    destination: "org.freedesktop.DBus", context: "GetNameOwner") {
        case .success(let v):
            guard let name = v.child(0)?.text, name.hasPrefix(":") else { return .failure(FprintFailure(.noReader, "fprintd has no bus name")) }
            if !owner.isEmpty && owner != name { vanished = true }
            owner = name
            inbox.watch(owner: name, device: inbox.device)
        case .failure(let f): return .failure(f)
        }
        var out: [FprintdReader] = []
        for path in paths {
            let fingers: [UInt8]
            switch call(path, FprintdSession.deviceInterface, "ListEnrolledFingers", [user], context: "fprintd ListEnrolledFingers") {
            case .success(let v):
                fingers = (v.child(0)?.strings(limit: 16) ?? []).compactMap(fprintdFingerNumber)
            case .failure(let f) where f.kind == .noUsablePrint:
                fingers = []
            case .failure(let f):
                return .failure(f)
            }
            var unique: [UInt8] = []
            for f in fingers where !unique.contains(f) { unique.append(f) }
            out.append(FprintdReader(path: path, name: property(path, "name")?.text ?? "",
                                     scanType: property(path, "scan-type")?.text ?? "press", enrolStages: 0,
                                     fingers: Array(unique.prefix(FprintProtocol.maximumPrints))))
        }
        return .success(out)
    }

    func list(bus: String, user: String) {
        if let f = connect(bus) { return send(.failure(f)) }
        switch devices(user: user) {
        case .success(let list): send(.fprintdReaders(list))
        case .failure(let f): send(.failure(f))
        }
    }

    /// Picks the device: the one `selector` names; for verification, else the one holding most of
    /// the user's prints (the first on a tie, as pam_fprintd does); for enrolment, else fprintd's
    /// default device.
    func choose(_ readers: [FprintdReader], selector: String, purpose: FprintdPurpose, user: String) -> Result<FprintdReader, FprintFailure> {
        guard !readers.isEmpty else { return .failure(FprintFailure(.noReader, "fprintd reports no fingerprint reader")) }
        if !selector.isEmpty {
            guard let named = readers.first(where: { $0.path == selector || $0.shortName == selector }) else {
                return .failure(FprintFailure(.noReader, "no fprintd device matches '\(selector)'"))
            }
            if purpose == .verify && named.fingers.isEmpty {
                return .failure(FprintFailure(.noUsablePrint, "\(user) has no fingerprint enrolled in fprintd on \(named.path)"))
            }
            return .success(named)
        }
        if purpose == .verify {
            var best: FprintdReader?
            for r in readers where r.fingers.count > (best?.fingers.count ?? 0) { best = r }
            guard let best else { return .failure(FprintFailure(.noUsablePrint, "\(user) has no fingerprint enrolled in fprintd")) }
            return .success(best)
        }
        if case .success(let v) = call(FprintdSession.managerPath, FprintdSession.managerInterface, "GetDefaultDevice",
                                       context: "fprintd GetDefaultDevice"),
           let path = v.child(0)?.text, let found = readers.first(where: { $0.path == path }) {
            return .success(found)
        }
        return .success(readers[0])
    }

    func claim(bus: String, user: String, selector: String, purpose: FprintdPurpose) {
        guard claimed == nil else { return send(.failure(FprintFailure(.badRequest, "a device is already claimed"))) }
        if let f = connect(bus) { return send(.failure(f)) }
        var reader: FprintdReader
        switch devices(user: user).flatMap({ choose($0, selector: selector, purpose: purpose, user: user) }) {
        case .success(let r): reader = r
        case .failure(let f): return send(.failure(f))
        }
        subscribe(device: reader.path)
        switch call(reader.path, FprintdSession.deviceInterface, "Claim", [user], context: "fprintd Claim") {
        case .success: break
        case .failure(let f):
            unsubscribe()
            return send(.failure(f))
        }
        claimed = reader
        if let stages = property(reader.path, "num-enroll-stages")?.int32, stages > 0 { reader.enrolStages = Int(stages) }
        claimed = reader
        send(.fprintdClaimed(reader))
    }

    // MARK: signals

    /// Asks the bus for fprintd's signals on `path` and for NameOwnerChanged of fprintd's name.
    /// The subscriptions only install the bus's match rules (broadcast signals reach no one who
    /// did not ask); the Inbox filter reads the messages, in arrival order.
    private func subscribe(device path: String) {
        guard let connection else { return }
        inbox.watch(owner: owner, device: path)
        let ignore: GDBusSignalCallback = { _, _, _, _, _, _, _ in }
        subscriptions.append(g_dbus_connection_signal_subscribe(connection, owner, FprintdSession.deviceInterface, nil, path, nil,
                                                                G_DBUS_SIGNAL_FLAGS_NONE, ignore, nil, nil))
        subscriptions.append(g_dbus_connection_signal_subscribe(connection, "org.freedesktop.DBus", "org.freedesktop.DBus",
                                                                "NameOwnerChanged", "/org/freedesktop/DBus", FprintdSession.busName,
                                                                G_DBUS_SIGNAL_FLAGS_NONE, ignore, nil, nil))
    }

    private func unsubscribe() {
        guard let connection else { return }
        for id in subscriptions { g_dbus_connection_signal_unsubscribe(connection, id) }
        subscriptions = []
    }

    /// Starts `method` on the claimed device without waiting: its reply is found in the inbox, in
    /// order with the signals. Returns the serial to wait for.
    private func start(_ method: String, _ arguments: [String]) -> Result<UInt32, FprintFailure> {
        guard let connection, let claimed else { return .failure(FprintFailure(.notOpen, "no fprintd device is claimed")) }
        guard let message = g_dbus_message_new_method_call(FprintdSession.busName, claimed.path, FprintdSession.deviceInterface, method) else {
            return .failure(FprintFailure(.other, "cannot build \(method)"))
        }
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        g_dbus_message_set_body(message, Variant.tuple(arguments))
        var error: UnsafeMutablePointer<GError>?
        var serial: guint32 = 0
        // The inbox is locked until it knows the serial, so that the filter cannot pass the reply by.
        let sent = inbox.expectingReply { () -> UInt32? in
            g_dbus_connection_send_message(connection, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, &serial, &error) != 0 ? serial : nil
        }
        guard let sent else { return .failure(FprintdErrors.failure(error, context: "fprintd \(method)")) }
        return .success(sent)
    }

    /// Moves what the worker thread queued to `pending`; NameOwnerChanged marks fprintd gone.
    private func collect() {
        for event in inbox.take() {
            if case .ownerChanged(let new) = event {
                if new != owner { vanished = true }
            } else if pending.count < Inbox.limit * 4 {
                // Bounded like the inbox: only fprintd itself could flood it, and a reply lost in
                // a flood only means waiting until the deadline (unavailable).
                pending.append(event)
            }
        }
    }

    /// Forgets whatever arrived before now (statuses of an earlier verification): dispatches what
    /// the main context holds, without waiting, and empties the inbox.
    private func drain() {
        var n = 0
        while n < 1000, g_main_context_iteration(nil, 0) != 0 { n += 1 }
        collect()
        pending = []
    }

    enum WaitEnd { case ready, timedOut, peerGone, request, vanished }

    /// Iterates the main context until `ready()` holds, fprintd vanishes, the time is up, or the
    /// spawner sends a request (the user typed instead of touching) or goes away.
    private func wait(milliseconds: UInt32, until ready: () -> Bool) -> WaitEnd {
        let cancel = Cancellation(timeoutMilliseconds: milliseconds, peer: peer, wakeOnInput: true)
        defer { cancel.finish() }
        while true {
            collect()
            if ready() { return .ready }
            if vanished { return .vanished }
            if cancel.peerGone { return .peerGone }
            if cancel.inputPending { return .request }
            if cancel.timedOut { return .timedOut }
            _ = g_main_context_iteration(nil, 1)
        }
    }

    // MARK: verify

    func verify(timeoutMilliseconds: UInt32) {
        guard claimed != nil else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        if vanished { return send(.failure(gone)) }
        let deadline = monotonicMilliseconds() &+ Int64(timeoutMilliseconds)
        if !verifying {
            drain()
            selectedFinger = 0
            let serial: UInt32
            switch start("VerifyStart", ["any"]) {
            case .success(let s): serial = s
            case .failure(let f): return send(.failure(f))
            }
            verifying = true
            // Statuses may come before the reply (fprintd sends them as soon as the reader has a
            // touch); they stay in order in `pending` and count only if VerifyStart succeeded.
            var reply: Inbox.Event?
            let started = wait(milliseconds: remaining(until: deadline), until: {
                if let i = pending.firstIndex(where: { if case .reply(serial, _, _) = $0 { return true }; return false }) {
                    reply = pending.remove(at: i)
                }
                return reply != nil
            })
            if endVerify(after: started) { return }
            if case .reply(_, let errorName?, let text)? = reply {
                verifying = false
                pending = []
                return send(.failure(FprintdErrors.failure(name: errorName, message: "fprintd VerifyStart: \(text)")))
            }
        }
        var status: (result: String, done: Bool)?
        let answered = wait(milliseconds: remaining(until: deadline), until: {
            while status == nil, let event = pending.first {
                pending.removeFirst()
                switch event {
                case .verifyStatus(let result, let done): status = (result, done)
                case .fingerSelected(let name): selectedFinger = fprintdFingerNumber(name) ?? 0
                default: break
                }
            }
            return status != nil
        })
        if endVerify(after: answered) { return }
        guard let status else { return send(.verified(.timedOut)) }
        guard status.done else {
            // A retry: fprintd goes on verifying; the next request waits for the next touch.
            return send(.verified(.retry(code: FprintdSession.retryCode(status.result))))
        }
        let finger = selectedFinger
        stopVerify()
        switch status.result {
        case "verify-match":
            send(.verified(.match(index: Int(finger))))
        case "verify-no-match":
            send(.verified(.noMatch))
        case "verify-disconnected":
            send(.failure(FprintFailure(.device, domain: .device, code: Int32(FP_DEVICE_ERROR_REMOVED.rawValue),
                                        "fprintd: the reader was disconnected")))
        default:
            send(.failure(FprintFailure(.device, domain: .device, code: Int32(FP_DEVICE_ERROR_GENERAL.rawValue),
                                        "fprintd reported \(String(status.result.prefix(64)))")))
        }
    }

    var gone: FprintFailure {
        FprintFailure(.device, domain: .device, code: Int32(FP_DEVICE_ERROR_REMOVED.rawValue), "fprintd quit or the bus closed")
    }

    static func retryCode(_ result: String) -> Int {
        switch result {
        case "verify-swipe-too-short", "enroll-swipe-too-short": return Int(FP_DEVICE_RETRY_TOO_SHORT.rawValue)
        case "verify-finger-not-centered", "enroll-finger-not-centered": return Int(FP_DEVICE_RETRY_CENTER_FINGER.rawValue)
        case "verify-remove-and-retry", "enroll-remove-and-retry": return Int(FP_DEVICE_RETRY_REMOVE_FINGER.rawValue)
        default: return Int(FP_DEVICE_RETRY_GENERAL.rawValue)
        }
    }

    func remaining(until deadline: Int64) -> UInt32 {
        UInt32(clamping: max(deadline &- monotonicMilliseconds(), 1))
    }

    /// Ends a running verification (needed before the next VerifyStart); statuses stop counting first.
    /// Ends a verify whose wait stopped short of its answer: fprintd gone (a failure), the spawner
    /// gone (no one to answer), or a request or the time up (VerifyStop, then "timed out").
    /// False when the answer is there (`.ready`) and the verify goes on.
    private func endVerify(after end: WaitEnd) -> Bool {
        switch end {
        case .ready:
            return false
        case .vanished:
            verifying = false
            send(.failure(gone))
        case .peerGone:
            stopVerify()
        case .request, .timedOut:
            stopVerify()
            send(.verified(.timedOut))
        }
        return true
    }

    private func stopVerify() {
        guard verifying, let claimed, !vanished else { verifying = false; return }
        verifying = false
        _ = call(claimed.path, FprintdSession.deviceInterface, "VerifyStop", timeout: FprintdSession.stopMilliseconds, context: "fprintd VerifyStop")
    }

    // MARK: enrol and delete

    func enrol(finger: UInt8, timeoutMilliseconds: UInt32) {
        guard let claimed else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        guard let name = fprintdFingerName(finger) else { return send(.failure(FprintFailure(.badRequest, "unknown finger \(finger)"))) }
        if vanished { return send(.failure(gone)) }
        let deadline = monotonicMilliseconds() &+ Int64(timeoutMilliseconds)
        drain()
        let serial: UInt32
        switch start("EnrollStart", [name]) {
        case .success(let s): serial = s
        case .failure(let f): return send(.failure(f))
        }
        enrolling = true
        let total = claimed.enrolStages
        var done = 0
        while true {
            var status: (result: String, done: Bool)?
            var startError: (name: String, text: String)?
            switch wait(milliseconds: remaining(until: deadline), until: {
                while status == nil, startError == nil, let event = pending.first {
                    pending.removeFirst()
                    switch event {
                    case .reply(serial, let errorName, let text):
                        if let errorName { startError = (errorName, text) }
                    // As for verification, statuses may precede EnrollStart's reply.
                    case .enrollStatus(let result, let isDone): status = (result, isDone)
                    default: break
                    }
                }
                return status != nil || startError != nil
            }) {
            case .ready: break
            case .vanished:
                enrolling = false
                return send(.failure(gone))
            case .peerGone:
                stopEnrol()
                return
            case .request, .timedOut:
                stopEnrol()
                return send(.failure(FprintFailure(.timedOut, "no touch in time")))
            }
            if let startError {
                enrolling = false
                return send(.failure(FprintdErrors.failure(name: startError.name, message: "fprintd EnrollStart: \(startError.text)")))
            }
            guard let status else { continue }
            if !status.done {
                if status.result == "enroll-stage-passed" {
                    done += 1
                    send(.enrolStage(done: done, total: max(total, done)))
                } else {
                    send(.enrolRetry(code: FprintdSession.retryCode(status.result)))
                }
                continue
            }
            stopEnrol()
            func deviceFailure(_ error: FpDeviceError, _ text: String) -> FprintResponse {
                .failure(FprintFailure(.device, domain: .device, code: Int32(error.rawValue), "fprintd: \(text)"))
            }
            switch status.result {
            case "enroll-completed":
                send(.enrolStage(done: max(total, done + 1), total: max(total, done + 1)))
                send(.fprintdEnrolled)
            case "enroll-duplicate":
                send(deviceFailure(FP_DEVICE_ERROR_DATA_DUPLICATE, "this finger is already enrolled (for this or another user)"))
            case "enroll-data-full":
                send(deviceFailure(FP_DEVICE_ERROR_DATA_FULL, "the reader's storage is full"))
            case "enroll-disconnected":
                send(deviceFailure(FP_DEVICE_ERROR_REMOVED, "the reader was disconnected"))
            default:
                send(deviceFailure(FP_DEVICE_ERROR_GENERAL, "enrolment failed (\(String(status.result.prefix(64))))"))
            }
            return
        }
    }

    private func stopEnrol() {
        guard enrolling, let claimed, !vanished else { enrolling = false; return }
        enrolling = false
        _ = call(claimed.path, FprintdSession.deviceInterface, "EnrollStop", timeout: FprintdSession.stopMilliseconds, context: "fprintd EnrollStop")
    }

    func delete(finger: UInt8) {
        guard let claimed else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        let result: Result<Variant, FprintFailure>
        if finger == 0 {
            result = call(claimed.path, FprintdSession.deviceInterface, "DeleteEnrolledFingers2", context: "fprintd DeleteEnrolledFingers2")
        } else if let name = fprintdFingerName(finger) {
            result = call(claimed.path, FprintdSession.deviceInterface, "DeleteEnrolledFinger", [name], context: "fprintd DeleteEnrolledFinger")
        } else {
            return send(.failure(FprintFailure(.badRequest, "unknown finger \(finger)")))
        }
        switch result {
        case .success: send(.deleted)
        case .failure(let f): send(.failure(f))
        }
    }

    // MARK: release

    /// Stops what runs and releases the device (the `close` request, and on exit).
    func finish() {
        if claimed != nil {
            stopVerify()
            stopEnrol()
            if let claimed, !vanished {
                _ = call(claimed.path, FprintdSession.deviceInterface, "Release", timeout: FprintdSession.stopMilliseconds, context: "fprintd Release")
            }
            claimed = nil
        }
        unsubscribe()
        if let connection {
            if filter != 0 { g_dbus_connection_remove_filter(connection, filter); filter = 0 }
            if closedHandler != 0 { g_signal_handler_disconnect(UnsafeMutableRawPointer(connection), closedHandler); closedHandler = 0 }
            g_object_unref(UnsafeMutableRawPointer(connection))
            self.connection = nil
        }
    }
}
