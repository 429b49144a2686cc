import BiounlockDBus
import BiounlockFprintProtocol
import BiounlockSystem

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

/// libfprint's FpDeviceError and FpDeviceRetry codes (fp-device.h), which the helper protocol
/// carries for fprintd's answers as for libfprint's own: this helper links no libfprint.
enum DeviceCode {
    static let general: Int32 = 0
    static let busy: Int32 = 4
    static let dataFull: Int32 = 8
    static let dataDuplicate: Int32 = 9
    static let removed: Int32 = 0x100
    static let retryGeneral = 0, retryTooShort = 1, retryCenterFinger = 2, retryRemoveFinger = 3
}

/// Error names fprintd and the bus answer with, and what each means for biounlock.
enum FprintdErrors {
    static let alreadyInUse = "net.reactivated.Fprint.Error.AlreadyInUse"
    static let noEnrolledPrints = "net.reactivated.Fprint.Error.NoEnrolledPrints"
    static let permissionDenied = "net.reactivated.Fprint.Error.PermissionDenied"
    /// fprintd is not running and cannot be started by the bus.
    static let notRunning: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
        "org.freedesktop.DBus.Error.Spawn.ServiceNotFound", "org.freedesktop.DBus.Error.Spawn.Failed",
        "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.NoReply",
    ]

    /// The failure for a D-Bus error reply `name` with its `message`.
    /// Security choice: every one of these is "unavailable" upstream (fall back at once), except
    /// NoEnrolledPrints, which is "nothing enrolled" -- never a failed match, never a success.
    static func failure(name: String, message: String) -> FprintFailure {
        switch name {
        case alreadyInUse:
            // FP_DEVICE_ERROR_BUSY: the same "busy" libfprint itself reports.
            return FprintFailure(.device, domain: .device, code: DeviceCode.busy, "\(message) (another fprintd client holds the reader)")
        case noEnrolledPrints:
            return FprintFailure(.noUsablePrint, message)
        case permissionDenied:
            return FprintFailure(.other, "\(message) (polkit did not authorise it)")
        case let n where notRunning.contains(n):
            return FprintFailure(.noReader, "\(message) (fprintd is not running)")
        default:
            return FprintFailure(.other, message)
        }
    }
}

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

    let peer: Int32
    let send: (FprintResponse) -> Void
    /// Called when fprintd verifies (each VerifyStart answered), before the wait for a touch: the
    /// moment the helper detaches (main.swift, `--detach`).
    var verifying: () -> Void = {}
    private var connection: DBusConnection?
    private var bus = ""
    /// fprintd's unique bus name (":1.42"), as the bus itself reported it; "" until known.
    private var owner = ""
    private var claimed: FprintdReader?

    /// What arrived from fprintd for the claimed device, in arrival order, not yet used.
    private var pending: [Event] = []
    /// Replies that arrived while another was awaited, by serial (each from whom it came).
    private var replies: [UInt32: [DBusMessage]] = [:]
    /// Calls whose replies are kept in `replies`.
    private var awaited: Set<UInt32> = []
    /// AddMatch calls not waited for: an error reply to one means fprintd's signals never come.
    private var watches: Set<UInt32> = []
    private var selectedFinger: UInt8 = 0

    enum Event: Equatable {
        case verifyStatus(String, Bool)
        case fingerSelected(String)
        case enrollStatus(String, Bool)
    }

    enum Operation { case none, running, finished }
    /// fprintd's verification on the claimed device: running needs VerifyStop before anything
    /// else; finished (a final status came) needs VerifyStop before the next VerifyStart, but not
    /// before Release, which ends it itself.
    private var verification = Operation.none
    private var enrolling = false
    /// The Release sent right after a match (its reply is waited for in `finish`).
    private var releasing: UInt32?
    /// A VerifyStart whose reply has not been read yet.
    private var verifyStart: UInt32?
    /// fprintd quit, the bus closed, or fprintd's signals cannot be watched.
    private var vanished = false

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
    private func transmit(_ messages: [DBusMessage], deadline: Deadline) -> Result<[UInt32], FprintFailure> {
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
    private func dispatch(_ m: DBusMessage) {
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
    private func reply(to serial: UInt32, from sender: String, context: String, deadline: Deadline) -> Result<DBusMessage, FprintFailure> {
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
    private func call(_ message: DBusMessage, context: String, milliseconds: Int64 = FprintdSession.callMilliseconds) -> Result<DBusMessage, FprintFailure> {
        let deadline = Deadline.after(milliseconds: milliseconds)
        return transmit([message], deadline: deadline).flatMap { reply(to: $0[0], from: owner, context: context, deadline: deadline) }
    }

    // MARK: connection and devices

    /// Connects (once) and learns fprintd's unique name and device paths: GetDevices (which
    /// starts fprintd through the bus if it is not running) and GetNameOwner go in the first
    /// write with the handshake; a daemon the bus had to start is asked for again once it answers.
    private func start(_ address: String, deadline: Deadline) -> Result<[String], FprintFailure> {
        if connection != nil && address != bus { return .failure(FprintFailure(.badRequest, "this helper is connected to another bus")) }
        if vanished { return .failure(FprintFailure(.noReader, "the bus connection was lost")) }
        bus = address
        // NameOwnerChanged for fprintd's name only (arg0), from the bus: fprintd quitting ends a wait.
        let watch = FprintdSession.bus("AddMatch", [.string("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                                                            + "member='NameOwnerChanged',path='/org/freedesktop/DBus',arg0='\(FprintdSession.busName)'")])
        let learning = owner.isEmpty
        let getDevices = FprintdSession.fprintd(FprintdSession.managerPath, FprintdSession.managerInterface, "GetDevices")
        let first = learning ? [watch, getDevices, FprintdSession.bus("GetNameOwner", [.string(FprintdSession.busName)])] : [getDevices]
        let serials: [UInt32]
        switch transmit(first, deadline: deadline) {
        case .success(let s) where s.count == first.count: serials = s
        case .success: return .failure(FprintFailure(.other, "cannot send to the bus"))
        case .failure(let f): return .failure(f)
        }
        let devicesSerial = learning ? serials[1] : serials[0]
        if learning {
            awaited.remove(serials[0])
            watches.insert(serials[0])
            if case .success(let m) = reply(to: serials[2], from: DBusConnection.busName, context: "GetNameOwner", deadline: deadline) {
                owner = m.firstText ?? ""
            }
            if owner.isEmpty {
                // Not running yet: the bus starts it for GetDevices, and has a name owner to
                // give once the daemon answered that -- or says why it could not start it.
                let answers = awaitAny(devicesSerial, deadline: deadline) ?? []
                if let e = answers.first(where: { $0.kind == .error && $0.sender == DBusConnection.busName }) {
                    return .failure(FprintdErrors.failure(name: e.errorName ?? "", message: "fprintd GetDevices: \(String((e.firstText ?? "").prefix(512)))"))
                }
                switch transmit([FprintdSession.bus("GetNameOwner", [.string(FprintdSession.busName)])], deadline: deadline)
                    .flatMap({ reply(to: $0[0], from: DBusConnection.busName, context: "GetNameOwner", deadline: deadline) }) {
                case .success(let m): owner = m.firstText ?? ""
                case .failure(let f): return .failure(FprintFailure(.noReader, f.message))
                }
            }
            guard owner.hasPrefix(":"), DBusNames.isBusName(owner) else {
                owner = ""
                return .failure(FprintFailure(.noReader, "fprintd has no bus name"))
            }
        }
        switch reply(to: devicesSerial, from: owner, context: "fprintd GetDevices", deadline: deadline) {
        case .failure(let f): return .failure(f)
        case .success(let m):
            guard m.body.count == 1, case .array(.objectPath, _) = m.body[0], let paths = m.body[0].strings(limit: FprintProtocol.maximumDevices) else {
                return .failure(FprintFailure(.other, "fprintd answered GetDevices with (\(DBusType.signature(m.body.map(\.type))))"))
            }
            return .success(paths)
        }
    }

    /// Waits until at least one reply to `serial` arrived (from anyone) and returns them, kept.
    private func awaitAny(_ serial: UInt32, deadline: Deadline) -> [DBusMessage]? {
        while replies[serial] == nil {
            guard let connection else { return nil }
            switch connection.receive(until: deadline) {
            case .message(let m): dispatch(m)
            case .watched: continue
            case .timedOut, .failed: return nil
            }
        }
        return replies[serial]
    }

    /// Every device fprintd has, with `user`'s fingers on each; their name and scan type too
    /// when `properties` (`biounlock sensors`, `status`), which the module's verification never shows.
    func devices(bus address: String, user: String, properties: Bool) -> Result<[FprintdReader], FprintFailure> {
        let deadline = Deadline.after(milliseconds: FprintdSession.callMilliseconds)
        let paths: [String]
        switch start(address, deadline: deadline) {
        case .success(let p): paths = p
        case .failure(let f): return .failure(f)
        }
        // One write for all the devices' questions; the answers are taken in order.
        var calls: [DBusMessage] = []
        for path in paths {
            calls.append(FprintdSession.fprintd(path, FprintdSession.deviceInterface, "ListEnrolledFingers", [.string(user)]))
            if properties { calls.append(FprintdSession.fprintd(path, FprintdSession.propertiesInterface, "GetAll", [.string(FprintdSession.deviceInterface)])) }
        }
        let serials: [UInt32]
        switch transmit(calls, deadline: deadline) {
        case .success(let s): serials = s
        case .failure(let f): return .failure(f)
        }
        var out: [FprintdReader] = []
        let step = properties ? 2 : 1
        for (i, path) in paths.enumerated() where i * step < serials.count {
            let fingers: [UInt8]
            switch reply(to: serials[i * step], from: owner, context: "fprintd ListEnrolledFingers", deadline: deadline) {
            case .success(let m):
                fingers = (m.body.first?.strings(limit: 16) ?? []).compactMap(fprintdFingerNumber)
            case .failure(let f) where f.kind == .noUsablePrint:
                fingers = []
            case .failure(let f):
                return .failure(f)
            }
            var unique: [UInt8] = []
            for f in fingers where !unique.contains(f) { unique.append(f) }
            var name = "", scanType = "press"
            if properties, i * step + 1 < serials.count,
               case .success(let m) = reply(to: serials[i * step + 1], from: owner, context: "fprintd GetAll", deadline: deadline),
               let all = m.body.first {
                name = all.property("name")?.text.map { String($0.prefix(FprintProtocol.maximumStringLength)) } ?? ""
                scanType = all.property("scan-type")?.text == "swipe" ? "swipe" : "press"
            }
            out.append(FprintdReader(path: path, name: name, scanType: scanType, enrolStages: 0,
                                     fingers: Array(unique.prefix(FprintProtocol.maximumPrints))))
        }
        return .success(out)
    }

    func list(bus: String, user: String) {
        switch devices(bus: bus, user: user, properties: true) {
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
        guard readers.count > 1 else { return .success(readers[0]) }
        if case .success(let m) = call(FprintdSession.fprintd(FprintdSession.managerPath, FprintdSession.managerInterface, "GetDefaultDevice"),
                                       context: "fprintd GetDefaultDevice"),
           let path = m.firstText, let found = readers.first(where: { $0.path == path }) {
            return .success(found)
        }
        return .success(readers[0])
    }

    /// Claims the device for `user`. Before the Claim: GetDevices and ListEnrolledFingers, as
    /// pam_fprintd asks (and GetNameOwner, to the bus, in the same write as GetDevices); the match
    /// rule for the device's signals goes in the Claim's write. Nothing else: the device's name
    /// and scan type are not read for a verification (nothing shows them); for an enrolment they
    /// are, with its stages, after the Claim (fprintd knows the stages only then).
    func claim(bus: String, user: String, selector: String, purpose: FprintdPurpose) {
        guard claimed == nil else { return send(.failure(FprintFailure(.badRequest, "a device is already claimed"))) }
        if purpose == .verify {
            let paths: [String]
            switch start(bus, deadline: Deadline.after(milliseconds: FprintdSession.callMilliseconds)) {
            case .success(let p): paths = p
            case .failure(let f): return send(.failure(f))
            }
            // One device to verify on (the only one, or the one `selector` names): its fingers and
            // its Claim are asked for together (see claimWhileListing).
            let named = paths.filter { selector.isEmpty || $0 == selector || FprintdReader(path: $0, name: "", scanType: "", enrolStages: 0, fingers: []).shortName == selector }
            if named.count == 1, paths.count == 1 || !selector.isEmpty { return claimWhileListing(path: named[0], user: user) }
        }
        var reader: FprintdReader
        switch devices(bus: bus, user: user, properties: false).flatMap({ choose($0, selector: selector, purpose: purpose, user: user) }) {
        case .success(let r): reader = r
        case .failure(let f): return send(.failure(f))
        }
        let deadline = Deadline.after(milliseconds: FprintdSession.callMilliseconds)
        let serials: [UInt32]
        switch transmit([watch(reader.path), FprintdSession.fprintd(reader.path, FprintdSession.deviceInterface, "Claim", [.string(user)])], deadline: deadline) {
        case .success(let s) where s.count == 2: serials = s
        case .success: return send(.failure(FprintFailure(.other, "cannot send to the bus")))
        case .failure(let f): return send(.failure(f))
        }
        awaited.remove(serials[0])
        watches.insert(serials[0])
        // Signals count from now on (dispatch reads `claimed`); only after a successful Claim do
        // they matter, and `pending` is emptied before each VerifyStart.
        claimed = reader
        switch reply(to: serials[1], from: owner, context: "fprintd Claim", deadline: deadline) {
        case .success: break
        case .failure(let f):
            claimed = nil
            return send(.failure(f))
        }
        if purpose == .verify { startEarly(reader) }
        if purpose == .enrol,
           case .success(let m) = call(FprintdSession.fprintd(reader.path, FprintdSession.propertiesInterface, "GetAll",
                                                              [.string(FprintdSession.deviceInterface)]),
                                       context: "fprintd GetAll"),
           let all = m.body.first {
            // An enrolment shows the device and its stages (fprintd knows them once claimed).
            reader.name = all.property("name")?.text.map { String($0.prefix(FprintProtocol.maximumStringLength)) } ?? ""
            reader.scanType = all.property("scan-type")?.text == "swipe" ? "swipe" : "press"
            if let stages = all.property("num-enroll-stages")?.int32, stages > 0 { reader.enrolStages = Int(min(stages, 1000)) }
            claimed = reader
        }
        send(.fprintdClaimed(reader))
    }

    /// The match rule for fprintd's signals on the device at `path`.
    private func watch(_ path: String) -> DBusMessage {
        FprintdSession.bus("AddMatch", [.string("type='signal',sender='\(owner)',interface='\(FprintdSession.deviceInterface)',path='\(path)'")])
    }

    /// Claims the one device a verification can use, asking for the user's fingers on it in the
    /// same write: fprintd authorizes each call on a thread of its own (polkit, and the bus's
    /// GetConnectionUnixUser), so the two run at once instead of one after the other -- the
    /// largest part of the time before the reader is ready (bench/RESULTS.md). A user with no
    /// finger there gets "nothing enrolled", as when the fingers are asked for first; the
    /// device, if the Claim succeeded meanwhile, is released again before the answer.
    private func claimWhileListing(path: String, user: String) {
        let deadline = Deadline.after(milliseconds: FprintdSession.callMilliseconds)
        let serials: [UInt32]
        switch transmit([FprintdSession.fprintd(path, FprintdSession.deviceInterface, "ListEnrolledFingers", [.string(user)]),
                         watch(path), FprintdSession.fprintd(path, FprintdSession.deviceInterface, "Claim", [.string(user)])], deadline: deadline) {
        case .success(let s) where s.count == 3: serials = s
        case .success: return send(.failure(FprintFailure(.other, "cannot send to the bus")))
        case .failure(let f): return send(.failure(f))
        }
        awaited.remove(serials[1])
        watches.insert(serials[1])
        var reader = FprintdReader(path: path, name: "", scanType: "press", enrolStages: 0, fingers: [])
        claimed = reader
        let listed = reply(to: serials[0], from: owner, context: "fprintd ListEnrolledFingers", deadline: deadline)
        let claim = reply(to: serials[2], from: owner, context: "fprintd Claim", deadline: deadline)
        var fingers: [UInt8] = []
        switch listed {
        case .success(let m): fingers = (m.body.first?.strings(limit: 16) ?? []).compactMap(fprintdFingerNumber)
        case .failure(let f) where f.kind == .noUsablePrint: break
        case .failure(let f):
            if case .success = claim { release() }
            claimed = nil
            return send(.failure(f))
        }
        var unique: [UInt8] = []
        for f in fingers where !unique.contains(f) { unique.append(f) }
        guard !unique.isEmpty else {
            if case .success = claim { release() }
            claimed = nil
            return send(.failure(FprintFailure(.noUsablePrint, "\(user) has no fingerprint enrolled in fprintd on \(path)")))
        }
        if case .failure(let f) = claim {
            claimed = nil
            return send(.failure(f))
        }
        reader.fingers = Array(unique.prefix(FprintProtocol.maximumPrints))
        claimed = reader
        startEarly(reader)
        send(.fprintdClaimed(reader))
    }

    /// A device claimed for a verification starts verifying before the spawner is told: it puts
    /// up the touch request meanwhile, and the reader is ready when the request is shown, as
    /// with pam_fprintd, not one round trip to the spawner and one to fprintd later. A spawner
    /// that then asks for no touch (a passcode required first) closes, which stops it. If the
    /// VerifyStart cannot be sent, the first verify request sends it.
    private func startEarly(_ reader: FprintdReader) {
        _ = startVerify(reader, deadline: Deadline.after(milliseconds: FprintdSession.callMilliseconds))
    }

    private func release() {
        guard let claimed, !vanished else { return }
        _ = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "Release"), context: "fprintd Release",
                 milliseconds: FprintdSession.stopMilliseconds)
    }

    // MARK: waiting

    enum WaitEnd { case ready, timedOut, peerGone, request, vanished }

    /// Reads from the bus until `ready()` holds, fprintd vanishes, the time is up, or the
    /// spawner sends a request (the user typed instead of touching) or goes away.
    private func wait(until deadline: Deadline, _ ready: () -> Bool) -> WaitEnd {
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
    private func peerHungUp() -> Bool {
        guard let events = try? Poll.wait(FileDescriptor(rawValue: peer), for: .readable, until: Deadline(milliseconds: 0)) else { return false }
        return events.contains(.hangUp) || events.contains(.error)
    }

    /// Forgets whatever fprintd sent before now (statuses of an earlier verification): reads
    /// what is already there, without waiting, and empties `pending`.
    private func drain() {
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
        if verification != .running {
            // A finished verification is stopped before the next one starts.
            if verification == .finished { stopVerify() }
            if case .failure(let f) = startVerify(claimed, deadline: deadline) { return send(.failure(f)) }
        }
        if let serial = verifyStart {
            // Statuses may come before the reply (fprintd sends them as soon as the reader has a
            // touch); they stay in order in `pending` and count only if VerifyStart succeeded.
            let started = wait(until: deadline) { replies[serial]?.contains { $0.sender == owner } == true }
            if endVerify(after: started) { return }
            verifyStart = nil
            if case .failure(let f) = reply(to: serial, from: owner, context: "fprintd VerifyStart", deadline: deadline) {
                verification = .none
                pending = []
                return send(.failure(f))
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
        if endVerify(after: answered) { return }
        guard let status else { return send(.verified(.timedOut)) }
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
            // (about 1 ms: bench/RESULTS.md) is the longer part of what follows, longer than the
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
    private func startVerify(_ claimed: FprintdReader, deadline: Deadline) -> Result<Void, FprintFailure> {
        drain()
        selectedFinger = 0
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
    private func endVerify(after end: WaitEnd) -> Bool {
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
    private func stopVerify() {
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

    // MARK: enrol and delete

    func enrol(finger: UInt8, timeoutMilliseconds: UInt32) {
        guard let claimed else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        guard let name = fprintdFingerName(finger) else { return send(.failure(FprintFailure(.badRequest, "unknown finger \(finger)"))) }
        if vanished { return send(.failure(gone)) }
        if verification != .none { stopVerify() }
        let deadline = Deadline.after(milliseconds: Int64(timeoutMilliseconds))
        drain()
        let serial: UInt32
        switch transmit([FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "EnrollStart", [.string(name)])], deadline: deadline) {
        case .success(let s): serial = s[0]
        case .failure(let f): return send(.failure(f))
        }
        enrolling = true
        let total = claimed.enrolStages
        var done = 0
        var started = false
        while true {
            var status: (result: String, done: Bool)?
            var startError: FprintFailure?
            switch wait(until: deadline, {
                if !started, let list = replies[serial], let m = list.first(where: { $0.sender == owner }) {
                    started = true
                    replies[serial] = nil
                    awaited.remove(serial)
                    if m.kind == .error {
                        startError = FprintdErrors.failure(name: m.errorName ?? "", message: "fprintd EnrollStart: \(String((m.firstText ?? "").prefix(512)))")
                        return true
                    }
                }
                // As for verification, statuses may precede EnrollStart's reply.
                while status == nil, let event = pending.first {
                    pending.removeFirst()
                    if case .enrollStatus(let result, let isDone) = event { status = (result, isDone) }
                }
                return status != nil
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
                return send(.failure(startError))
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
            func deviceFailure(_ code: Int32, _ text: String) -> FprintResponse {
                .failure(FprintFailure(.device, domain: .device, code: code, "fprintd: \(text)"))
            }
            switch status.result {
            case "enroll-completed":
                send(.enrolStage(done: max(total, done + 1), total: max(total, done + 1)))
                send(.fprintdEnrolled)
            case "enroll-duplicate":
                send(deviceFailure(DeviceCode.dataDuplicate, "this finger is already enrolled (for this or another user)"))
            case "enroll-data-full":
                send(deviceFailure(DeviceCode.dataFull, "the reader's storage is full"))
            case "enroll-disconnected":
                send(deviceFailure(DeviceCode.removed, "the reader was disconnected"))
            default:
                send(deviceFailure(DeviceCode.general, "enrolment failed (\(String(status.result.prefix(64))))"))
            }
            return
        }
    }

    private func stopEnrol() {
        guard enrolling, let claimed, !vanished else { enrolling = false; return }
        enrolling = false
        _ = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "EnrollStop"), context: "fprintd EnrollStop",
                 milliseconds: FprintdSession.stopMilliseconds)
    }

    func delete(finger: UInt8) {
        guard let claimed else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        let result: Result<DBusMessage, FprintFailure>
        if finger == 0 {
            result = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "DeleteEnrolledFingers2"),
                          context: "fprintd DeleteEnrolledFingers2")
        } else if let name = fprintdFingerName(finger) {
            result = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "DeleteEnrolledFinger", [.string(name)]),
                          context: "fprintd DeleteEnrolledFinger")
        } else {
            return send(.failure(FprintFailure(.badRequest, "unknown finger \(finger)")))
        }
        switch result {
        case .success: send(.deleted)
        case .failure(let f): send(.failure(f))
        }
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
