import BiounlockDBus
import BiounlockFprintProtocol
import BiounlockSystem

/// The connection to the bus, fprintd's devices, and the claim: which reader, and holding it.
extension FprintdSession {

    /// Connects (once) and learns fprintd's unique name and device paths: GetDevices (which
    /// starts fprintd through the bus if it is not running) and GetNameOwner go in the first
    /// write with the handshake; a daemon the bus had to start is asked for again once it answers.
    func start(_ address: String, deadline: Deadline) -> Result<[String], FprintFailure> {
        if connection != nil && address != bus { return .failure(FprintFailure(.badRequest, "this helper is connected to another bus")) }
        if vanished { return .failure(FprintFailure(.noReader, "the bus connection was lost")) }
        bus = address
        // NameOwnerChanged for fprintd's name only (arg0), from the bus: fprintd quitting ends a wait.
        let watch = FprintdSession.bus("AddMatch", [.string("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                                                            + "member='NameOwnerChanged',path='/org/freedesktop/DBus',arg0='\(FprintdSession.busName)'")])
        // logind's PrepareForSleep: fprintd suspends its readers before a suspend, which ends a
        // verification with an error; after the resume `verify` starts it over. Its reply is not
        // waited for, and an error (a bus that refuses the rule) only leaves that out.
        let sleeps = FprintdSession.bus("AddMatch", [.string("type='signal',sender='org.freedesktop.login1',interface='\(FprintdSession.login1Interface)',"
                                                             + "member='PrepareForSleep',path='\(FprintdSession.login1Path)'")])
        let learning = owner.isEmpty
        let getDevices = FprintdSession.fprintd(FprintdSession.managerPath, FprintdSession.managerInterface, "GetDevices")
        let first = learning ? [watch, getDevices, FprintdSession.bus("GetNameOwner", [.string(FprintdSession.busName)]), sleeps] : [getDevices]
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
            awaited.remove(serials[3])
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
    func awaitAny(_ serial: UInt32, deadline: Deadline) -> [DBusMessage]? {
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
    func watch(_ path: String) -> DBusMessage {
        FprintdSession.bus("AddMatch", [.string("type='signal',sender='\(owner)',interface='\(FprintdSession.deviceInterface)',path='\(path)'")])
    }

    /// Claims the one device a verification can use, asking for the user's fingers on it in the
    /// same write: fprintd authorizes each call on a thread of its own (polkit, and the bus's
    /// GetConnectionUnixUser), so the two run at once instead of one after the other -- the
    /// largest part of the time before the reader is ready (bench/RESULTS.md). A user with no
    /// finger there gets "nothing enrolled", as when the fingers are asked for first; the
    /// device, if the Claim succeeded meanwhile, is released again before the answer.
    func claimWhileListing(path: String, user: String) {
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
    func startEarly(_ reader: FprintdReader) {
        _ = startVerify(reader, deadline: Deadline.after(milliseconds: FprintdSession.callMilliseconds))
    }

    func release() {
        guard let claimed, !vanished else { return }
        _ = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "Release"), context: "fprintd Release",
                 milliseconds: FprintdSession.stopMilliseconds)
    }
}
