import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockServiceProtocol

extension Manager {
    /// The record of `target` as GetStatus shows it: what `biounlock status` shows, with the
    /// lockouts and the passcode rule computed here (Lockouts, PasscodeRequirement: the same
    /// functions the module decides with), so that no client computes them differently.
    func status(of target: Target, caller: Caller) throws(ServiceError) -> AccountStatus {
        var record = try loadRecord(target)
        if options.sensor == .fprintd, case .success(let devices) = environment.fprintdFingers(options, target.account.name) {
            record.templates += devices.flatMap(\.templates)
        }
        var s = AccountStatus(user: target.account.name, uid: target.account.uid)
        let now = environment.clock.now()
        s.accountMatches = record.uid == nil && record.templates.isEmpty && record.passcode == nil && !record.isEnabledForAnyService
            ? true : AccountBinding.of(record, account: target.account).isBound
        s.enabled = record.enabled
        s.services = record.serviceOverrides
        for group in ServiceGroup.allCases { s.groups[group.rawValue] = group.state(of: record).rawValue }
        s.fingers = record.templates.map { t in
            AccountStatus.Finger(finger: t.finger.name, sensor: t.sensor.rawValue, enrolled: t.sensor == .fprintd ? 0 : t.created,
                                 reader: t.driver.isEmpty ? "" : "\(t.driver)/\(t.device)")
        }
        s.passcode = record.passcode?.kind.rawValue ?? ""
        s.policy = options.policy.rawValue
        s.sensor = options.sensor.rawValue
        s.biometricFailures = UInt32(clamping: max(0, record.biometricFailures))
        s.passcodeFailures = UInt32(clamping: max(0, record.passcodeFailures))
        // What lifts each lockout (docs/DESIGN.md, "Counting"): the finger's, a right passcode or
        // the Unix password at a root caller (pam_sm_setcred), or a reset; under policy=biometrics
        // also the time. The passcode's: its wait running out, the password, or a reset.
        switch Lockouts.biometric(record, options: options, now: now) {
        case .open: s.biometricLockout = .open
        case .locked(let until):
            s.biometricLockout = AccountStatus.Lockout(locked: true, until: until ?? 0,
                                                       clearedBy: (options.policy == .biometrics ? ["time"] : ["passcode"]) + ["password", "reset"])
        }
        switch Lockouts.passcode(record, options: options, now: now) {
        case .open: s.passcodeLockout = .open
        case .locked(let until):
            s.passcodeLockout = AccountStatus.Lockout(locked: true, until: until ?? 0, clearedBy: ["time", "password", "reset"])
        }
        if let reason = PasscodeRequirement.reason(record, options: options, now: now, bootID: SessionProbe.currentBootID) {
            s.passcodeRequired = Manager.requirementName(reason)
        }
        s.lastSuccess = record.lastSuccess ?? 0
        s.lastFailure = record.lastFailure ?? 0
        let monotonicNow = environment.monotonic()
        state.withLock { st in
            if let g = st.grants[caller.busName], g.uid == caller.uid, g.until > monotonicNow, target.isSelf {
                s.authenticatedFor = UInt32(clamping: (g.until - monotonicNow + 999) / 1000)
            }
            s.enrolling = st.enrolments[caller.busName] != nil
        }
        return s
    }

    /// The user's row, or an empty one when the store has none (a read never creates the store).
    func loadRecord(_ target: Target) throws(ServiceError) -> UserRecord {
        guard FileSystem.exists(options.storePath) else { return UserRecord(name: target.account.name) }
        let store = try openStore()
        return try storeCall("cannot read the store") { () throws(StoreFailure) in try store.loadUser(target.account.name) }
            ?? UserRecord(name: target.account.name)
    }

    /// What stands in the way of turning biometric unlock on: the checks of `biounlock enable`
    /// (EnableCheck), as codes the clients translate, with the reason in English.
    func missing(for target: Target) throws(ServiceError) -> [(ManagerAPI.Missing, String)] {
        let record = try loadRecord(target)
        var out: [(ManagerAPI.Missing, String)] = []
        if record.uid != nil || !record.templates.isEmpty || record.passcode != nil {
            if !AccountBinding.of(record, account: target.account).isBound {
                out.append((.otherAccount, AccountBinding.of(record, account: target.account).problem(user: target.account.name)))
                return out
            }
        }
        switch options.sensor {
        case .libfprint:
            let selector = options.fprintDevice
            switch environment.listReaders(options) {
            case .success(let readers) where readers.contains(where: { selector == nil || $0.matches(selector ?? "") }): break
            case .success: out.append((.noReader, "no fingerprint reader is present"))
            case .failure(let why): out.append((.readersUnlisted, why.description))
            }
            if !record.templates.contains(where: { $0.sensor == .libfprint }) { out.append((.noFinger, "no finger is enrolled")) }
        case .fprintd:
            switch environment.fprintdFingers(options, target.account.name) {
            case .success(let devices) where devices.isEmpty: out.append((.noReader, "fprintd has no reader"))
            case .success(let devices):
                if devices.flatMap(\.templates).isEmpty { out.append((.noFinger, "fprintd holds no fingerprint")) }
            case .failure(let why): out.append((.fprintdUnavailable, why.description))
            }
        case .simulated, .auto:
            if !record.templates.contains(where: { $0.sensor == options.sensor }) { out.append((.noFinger, "no finger is enrolled")) }
        }
        if options.policy == .biometricsOrPasscode && record.passcode == nil {
            out.append((.noPasscode, "no passcode is set (policy \(options.policy.rawValue) falls back to it)"))
        }
        return out
    }

    /// `boot`, `enrolment`, `age` or `first-use` (the words of `biounlock status --json`).
    static func requirementName(_ reason: Reason) -> String {
        switch reason {
        case .passcodeRequiredAfterEnrolment: return "enrolment"
        case .passcodeRequiredAfterIdle: return "age"
        case .passcodeRequiredFirstUse: return "first-use"
        default: return "boot"
        }
    }
}
