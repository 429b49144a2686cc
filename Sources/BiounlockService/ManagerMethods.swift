import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockServiceProtocol

extension Manager {
    /// Runs `body` (the change) and its audit row as one store transaction: a change is never
    /// committed without its row, whatever happens to the service in between.
    func change(_ what: String, target: Target, caller: Caller, store: Store,
                _ body: () throws(StoreFailure) -> Void) throws(ServiceError) {
        var failure: StoreFailure?
        do {
            try store.inOneTransaction {
                do throws(StoreFailure) { try body() } catch { failure = error; return }
                record(what, target: target, caller: caller, store: store)
            }
        } catch {
            failure = failure ?? error
        }
        if let failure {
            environment.logger.log(.error, "cannot \(what) for \(sanitizedForLog(target.account.name)): \(failure)")
            throw ServiceError(.unavailable, "the store could not be written")
        }
    }

    /// Refuses to add to a record that belongs to another account than the one with its name
    /// now (AccountBinding): root clears it first (`biounlock forget`).
    func requireOwnRecord(_ target: Target, store: Store) throws(ServiceError) {
        guard let record = try storeCall("cannot read the store", { () throws(StoreFailure) in try store.loadUser(target.account.name) }) else { return }
        guard AccountBinding.of(record, account: target.account).isBound else {
            throw ServiceError(.otherAccount, "the record of \(sanitizedForLog(target.account.name)) belongs to another account; root must clear it (biounlock forget)")
        }
    }

    /// Enable's, Disable's and CheckEnable's `service`: "", a PAM service name, or a group
    /// ("@sudo", "@login", "@all": ManagerAPI.Scope).
    func parseScope(_ name: String) throws(ServiceError) -> ManagerAPI.Scope {
        guard let scope = ManagerAPI.Scope(argument: name) else {
            throw ServiceError(.invalidArgument, "not a PAM service name or a group (@sudo, @login, @all)")
        }
        return scope
    }

    /// Writes `scope`'s change: one statement, or a group's overrides, in the caller's transaction.
    func setEnabled(_ on: Bool, scope: ManagerAPI.Scope, user: String, store: Store) throws(StoreFailure) {
        let now = environment.clock.now()
        switch scope {
        case .toggle: try store.setEnabled(on, user: user, service: nil, at: now)
        case .service(let name): try store.setEnabled(on, user: user, service: name, at: now)
        case .group(let group): try store.setEnabled(on, user: user, services: group.services, at: now)
        case .everywhere: try store.setEnabledEverywhere(on, user: user, at: now)
        }
    }

    // MARK: reading

    func getStatus(user: String, caller: Caller) throws(ServiceError) -> BusValue {
        let target = try target(user, caller: caller)
        try mayRead(target, caller: caller)
        return try status(of: target, caller: caller).busValue
    }

    func getEvents(user: String, since: Int64, limit: UInt32, caller: Caller) throws(ServiceError) -> BusValue {
        let target = try target(user, caller: caller)
        try mayRead(target, caller: caller)
        let count = Int(limit == 0 ? ManagerAPI.defaultEventLimit : min(limit, ManagerAPI.maximumEventLimit))
        guard FileSystem.exists(options.storePath) else { return .array(element: "(xssssss)", []) }
        let store = try openStore()
        let events = try storeCall("cannot read the log") { () throws(StoreFailure) in
            try store.recentEvents(user: target.account.name, since: since > 0 ? since : nil, limit: count)
        }
        return .array(element: "(xssssss)", events.map {
            EventRow(time: $0.time, service: $0.service, tty: $0.tty, rhost: $0.rhost, method: $0.method.rawValue,
                     outcome: $0.outcome, reason: $0.reason).busValue
        })
    }

    func checkEnable(user: String, service name: String, caller: Caller) throws(ServiceError) -> BusValue {
        _ = try parseScope(name)
        let target = try target(user, caller: caller)
        try mayRead(target, caller: caller)
        return .stringPairs(try missing(for: target).map { ($0.0.rawValue, $0.1) })
    }

    // MARK: re-authentication

    /// Re-authenticates the caller's own account with the secret read from `fd` (the Unix
    /// password or the current biounlock passcode, through biounlock-reauth; never a finger) and
    /// grants this connection `rules.grantMilliseconds` of changes.
    ///
    /// Security choices: only for oneself (an administrator's proof is polkit's); polkit's
    /// manage-own first (a remote session cannot even try); one attempt per uid at a time;
    /// consecutive failures of a uid are counted and, past `rules.freeFailures`, each makes the
    /// next wait longer (and an attempt made during the wait is refused without being checked
    /// or counted) -- on top of PAM's own delay after a wrong password; a biounlock passcode is
    /// also counted by the module, under its lockout. The secret is read bounded in size and
    /// time, kept in a zeroing Secret and handed to the worker only.
    func authenticate(_ fd: FileDescriptor?, caller: Caller) throws(ServiceError) -> UInt32 {
        guard let account = environment.lookupUID(caller.uid) else { throw ServiceError(.noSuchUser, "uid \(caller.uid) has no account") }
        let target = Target(account: account, isSelf: true)
        try polkit(ManagerAPI.manageOwnAction, caller: caller)
        guard let fd else { throw ServiceError(.invalidArgument, "no descriptor at that index") }
        let now = environment.monotonic()
        let refusal = state.withLock { s -> ServiceError? in
            if s.reauthenticating.contains(caller.uid) {
                return ServiceError(.busy, "a re-authentication of this user is running")
            }
            if let f = s.failures[caller.uid] {
                let wait = rules.wait(afterFailures: f.count)
                let left = f.last &+ wait &- now
                if wait > 0 && left > 0 {
                    let seconds = (left + 999) / 1000
                    return ServiceError(.tooManyAttempts, "\(seconds): too many failed re-authentications; try again in \(seconds) s")
                }
            }
            s.reauthenticating.insert(caller.uid)
            return nil
        }
        if let refusal { throw refusal }
        defer { _ = state.withLock { $0.reauthenticating.remove(caller.uid) } }

        let secret: Secret
        switch SecretDescriptor.read(fd, within: ManagerAPI.secretReadMilliseconds) {
        case .success(let s): secret = s
        case .failure(let f): throw ServiceError(.invalidArgument, "the secret could not be read: \(f.description)")
        }
        let answer = environment.reauthenticator.check(user: account.name, secret: secret)
        let store = try? openStore()
        switch answer {
        case .accepted:
            let until = environment.monotonic() &+ rules.grantMilliseconds
            state.withLock { s in
                s.failures[caller.uid] = nil
                s.grants[caller.busName] = Grant(uid: caller.uid, until: until)
            }
            record("reauthenticated", target: target, caller: caller, store: store)
            return UInt32(clamping: rules.grantMilliseconds / 1000)
        case .rejected:
            let failures = state.withLock { s -> Int in
                var f = s.failures[caller.uid] ?? Failures(count: 0, last: 0)
                f.count += 1
                f.last = environment.monotonic()
                s.failures[caller.uid] = f
                return f.count
            }
            record("reauthentication-failed", target: target, caller: caller, store: store)
            environment.logger.log(.warning, "uid=\(caller.uid) re-authentication failed (\(failures) in a row)")
            throw ServiceError(.authenticationFailed, "the password or passcode was not accepted")
        case .unavailable(let why):
            environment.logger.log(.error, "re-authentication of uid \(caller.uid) could not be made: \(why)")
            throw ServiceError(.unavailable, "re-authentication could not be made")
        }
    }

    // MARK: the toggle

    func enable(user: String, service name: String, caller: Caller) throws(ServiceError) -> (Bool, BusValue) {
        let scope = try parseScope(name)
        let target = try target(user, caller: caller)
        try mayRead(target, caller: caller)
        // What is missing is said before any proof is asked for (the seeds' toggle: it stays
        // off and says why), and nothing changes.
        let gaps = try missing(for: target)
        if !gaps.isEmpty { return (false, .stringPairs(gaps.map { ($0.0.rawValue, $0.1) })) }
        try mayChange(target, caller: caller, proof: true)
        let store = try openStore()
        // One row for the whole change, naming it: "enabled", "enabled:sudo", "enabled:@login".
        let what = scope == .toggle ? "enabled" : "enabled:" + scope.argument
        let before = try storeCall("cannot read the store") { () throws(StoreFailure) in try store.loadUser(target.account.name) }
        try change(what, target: target, caller: caller, store: store) { () throws(StoreFailure) in
            try setEnabled(true, scope: scope, user: target.account.name, store: store)
        }
        if options.sensor == .fprintd, case .success(let devices) = environment.fprintdFingers(options, target.account.name) {
            // The prints enable accepted are the ones the module compares fprintd's with (as `biounlock enable`).
            if let prints = FprintdPrints.afterListing(devices.flatMap(\.templates), stored: before?.fprintdPrints) {
                do {
                    if before?.fprintdPrints == nil {
                        try store.recordFirstFprintdPrints(user: target.account.name, prints: prints)
                    } else {
                        try store.noteFprintdPrints(user: target.account.name, prints: prints)
                    }
                } catch {
                    environment.logger.log(.error, "cannot record the prints fprintd holds for \(sanitizedForLog(target.account.name)): \(error)")
                }
            }
        }
        return (true, .stringPairs([]))
    }

    /// Turning biometric unlock off needs no proof: it only ever takes a way in away.
    func disable(user: String, service name: String, caller: Caller) throws(ServiceError) {
        let scope = try parseScope(name)
        let target = try target(user, caller: caller)
        try mayChange(target, caller: caller, proof: false)
        let store = try openStore()
        try change(scope == .toggle ? "disabled" : "disabled:" + scope.argument, target: target, caller: caller, store: store) { () throws(StoreFailure) in
            try setEnabled(false, scope: scope, user: target.account.name, store: store)
        }
        // Issue 32: the password kept for the boot goes with it, as `biounlock disable` drops it.
        _ = environment.forgetKeptPassword(target.account.name)
    }

    // MARK: the passcode

    func setPasscode(user: String, kind name: String, secret fd: FileDescriptor?, caller: Caller) throws(ServiceError) {
        guard let kind = PasscodeKind(rawValue: name) else { throw ServiceError(.invalidArgument, "the kind is pin, password or pattern") }
        let target = try target(user, caller: caller)
        try mayChange(target, caller: caller, proof: true)
        guard let fd else { throw ServiceError(.invalidArgument, "no descriptor at that index") }
        let store = try openStore()
        try requireOwnRecord(target, store: store)
        let typed: Secret
        switch SecretDescriptor.read(fd, within: ManagerAPI.secretReadMilliseconds) {
        case .success(let s): typed = s
        case .failure(let f): throw ServiceError(.invalidArgument, "the passcode could not be read: \(f.description)")
        }
        // The same rules as `biounlock passcode set` (PasscodeKind), in English for the log.
        if let problem = kind.problem(with: typed) { throw ServiceError(.invalidPasscode, problem) }
        guard let normalized = kind.normalized(typed) else { throw ServiceError(.invalidPasscode, "not a valid \(kind.rawValue)") }
        let hash: String
        do { hash = try Passcode.hash(normalized) } catch {
            environment.logger.log(.error, "cannot hash a passcode: \(error)")
            throw ServiceError(.failed, "the passcode could not be hashed")
        }
        try change("passcode-set:\(kind.rawValue)", target: target, caller: caller, store: store) { () throws(StoreFailure) in
            try store.setPasscode(StoredPasscode(hash: hash, kind: kind), user: target.account.name, at: environment.clock.now())
        }
    }

    func removePasscode(user: String, caller: Caller) throws(ServiceError) {
        let target = try target(user, caller: caller)
        try mayChange(target, caller: caller, proof: true)
        let store = try openStore()
        try change("passcode-removed", target: target, caller: caller, store: store) { () throws(StoreFailure) in
            try store.setPasscode(nil, user: target.account.name, at: environment.clock.now())
        }
        _ = environment.forgetKeptPassword(target.account.name)   // issue 32, as `biounlock passcode clear`
    }

    // MARK: fingers

    /// Starts an enrolment in a worker; progress goes to the caller alone as signals. The
    /// template is stored when the worker hands it over, in one transaction with its audit row
    /// (saveTemplate bumps the enrolment version, so require_passcode=enrolment asks for the
    /// passcode before the new finger is taken, as for an enrolment by root).
    func startEnrolment(user: String, finger name: String, seconds requested: UInt32, caller: Caller) throws(ServiceError) {
        guard name.utf8.count <= 64, let finger = Finger(name: name) else { throw ServiceError(.invalidArgument, "not a finger name") }
        guard requested <= ManagerAPI.maximumEnrolSeconds else { throw ServiceError(.invalidArgument, "the timeout is at most \(ManagerAPI.maximumEnrolSeconds) s") }
        let seconds = requested == 0 ? ManagerAPI.defaultEnrolSeconds : requested
        let target = try target(user, caller: caller)
        try mayChange(target, caller: caller, proof: true)
        let store = try openStore()
        try requireOwnRecord(target, store: store)
        // One enrolment in the service at a time: there is one reader (and one simulated socket).
        let taken = state.withLock { s -> Bool in
            guard s.enrolments.isEmpty else { return false }
            s.enrolments[caller.busName] = Enrolment(uid: caller.uid, user: target.account.name, finger: finger, control: nil)
            return true
        }
        guard taken else { throw ServiceError(.busy, "an enrolment is running") }
        let emit = environment.emit
        let destination = caller.busName
        let fingerName = finger.name
        let started = environment.enrolments.start(EnrolRequest(user: target.account.name, finger: finger, seconds: seconds)) { [self] event in
            switch event {
            case .ready(let total):
                emit(OutgoingSignal(destination: destination, signal: .enrolStage, arguments: [.string(fingerName), .uint32(0), .uint32(UInt32(clamping: total))]))
            case .stage(let done, let total):
                emit(OutgoingSignal(destination: destination, signal: .enrolStage,
                                    arguments: [.string(fingerName), .uint32(UInt32(clamping: done)), .uint32(UInt32(clamping: total))]))
            case .retry(let code):
                emit(OutgoingSignal(destination: destination, signal: .enrolRetry, arguments: [.string(fingerName), .string(code.rawValue)]))
            case .finished(let outcome):
                let (result, detail) = finishEnrolment(outcome, target: target, caller: caller)
                _ = state.withLock { $0.enrolments.removeValue(forKey: destination) }
                emit(OutgoingSignal(destination: destination, signal: .enrolFinished,
                                    arguments: [.string(fingerName), .string(result.rawValue), .string(detail)]))
            }
        }
        switch started {
        case .success(let control):
            // A cancel (or the caller leaving) that came while the worker started applies now.
            let stillWanted = state.withLock { s -> Bool in
                guard s.enrolments[destination] != nil else { return false }
                s.enrolments[destination]?.control = control
                return true
            }
            if !stillWanted { control.cancel() }
        case .failure(let why):
            _ = state.withLock { $0.enrolments.removeValue(forKey: destination) }
            environment.logger.log(.error, "cannot start an enrolment for \(sanitizedForLog(target.account.name)): \(why)")
            throw ServiceError(.unavailable, "the enrolment could not start")
        }
    }

    /// Stores a finished enrolment (or says why not): the template and its audit row in one
    /// transaction; for sensor=fprintd, which keeps the print itself, the enrolment change.
    func finishEnrolment(_ outcome: EnrolOutcome, target: Target, caller: Caller) -> (ManagerAPI.EnrolResult, String) {
        switch outcome {
        case .cancelled:
            return (.cancelled, "cancelled")
        case .failed(let why):
            environment.logger.log(.notice, "enrolment for \(sanitizedForLog(target.account.name)) failed: \(why)")
            return (.failed, why)
        case .enrolled(let template, let prints):
            do throws(ServiceError) {
                let store = try openStore()
                try change("finger-enrolled:\(template.finger.name)", target: target, caller: caller, store: store) { () throws(StoreFailure) in
                    if template.sensor == .fprintd {
                        try store.noteEnrolmentChange(user: target.account.name, at: environment.clock.now(), fprintdPrints: prints)
                    } else {
                        try store.saveTemplate(template, user: target.account.name)
                    }
                }
                return (.done, "")
            } catch {
                return (.failed, "the template could not be stored")
            }
        }
    }

    func cancelEnrolment(caller: Caller) {
        let control = state.withLock { s -> EnrolmentControl? in
            guard let e = s.enrolments[caller.busName] else { return nil }
            if e.control == nil { s.enrolments[caller.busName] = nil } // still starting: it cancels itself
            return e.control
        }
        control?.cancel()
    }

    func deleteFingers(user: String, finger name: String, caller: Caller) throws(ServiceError) -> UInt32 {
        var finger: Finger?
        if !name.isEmpty {
            guard name.utf8.count <= 64, let f = Finger(name: name) else { throw ServiceError(.invalidArgument, "not a finger name") }
            finger = f
        }
        let target = try target(user, caller: caller)
        try mayChange(target, caller: caller, proof: true)
        let store = try openStore()
        let what = "fingers-removed:\(finger?.name ?? "all")"
        if options.sensor == .fprintd {
            let held: [Finger]
            switch environment.fprintdFingers(options, target.account.name) {
            case .success(let devices): held = devices.flatMap(\.templates).map(\.finger)
            case .failure(let why):
                environment.logger.log(.error, "fprintd not available: \(why)")
                throw ServiceError(.unavailable, "fprintd is not available")
            }
            let doomed = held.filter { finger == nil || $0 == finger }
            guard !doomed.isEmpty else { throw ServiceError(.notEnrolled, "no such finger is enrolled") }
            if case .failure(let why) = environment.deleteFromFprintd(options, target.account.name, finger) {
                environment.logger.log(.error, "fprintd could not delete: \(why)")
                throw ServiceError(.unavailable, "fprintd could not delete it")
            }
            let prints: String? = (try? environment.fprintdFingers(options, target.account.name).get()).map { FprintdPrints.text($0.flatMap(\.templates)) }
            try change(what, target: target, caller: caller, store: store) { () throws(StoreFailure) in
                try store.noteEnrolmentChange(user: target.account.name, at: environment.clock.now(), fprintdPrints: prints)
            }
            _ = environment.forgetKeptPassword(target.account.name)   // issue 32, as `biounlock unenrol`
            return UInt32(clamping: doomed.count)
        }
        let record = try storeCall("cannot read the store") { () throws(StoreFailure) in try store.loadUser(target.account.name) }
        let doomed = (record?.templates ?? []).filter { finger == nil || $0.finger == finger }
        guard !doomed.isEmpty else { throw ServiceError(.notEnrolled, "no such finger is enrolled") }
        // The reader first (while the prints are known), then the store, which is what grants access.
        for (template, outcome) in environment.deleteFromReader(doomed, options) {
            if case .failed(let why) = outcome {
                environment.logger.log(.warning, "\(template.finger.name) of \(sanitizedForLog(target.account.name)) could not be deleted from its reader: \(why)")
            }
        }
        var removed = 0
        try change(what, target: target, caller: caller, store: store) { () throws(StoreFailure) in
            removed = try store.deleteTemplates(user: target.account.name, finger: finger)
        }
        _ = environment.forgetKeptPassword(target.account.name)   // issue 32, as `biounlock unenrol`
        return UInt32(clamping: removed)
    }

    // MARK: lockouts

    func resetLockouts(user: String, which name: String, caller: Caller) throws(ServiceError) {
        guard let which = ManagerAPI.LockoutKind(rawValue: name) else { throw ServiceError(.invalidArgument, "which is \"\", biometric or passcode") }
        let target = try target(user, caller: caller)
        try mayChange(target, caller: caller, proof: true)
        let store = try openStore()
        let what = which == .all ? "lockouts-reset" : "lockouts-reset:\(which.rawValue)"
        try change(what, target: target, caller: caller, store: store) { () throws(StoreFailure) in
            try store.resetCounters(user: target.account.name, biometric: which != .passcode, passcode: which != .biometric)
        }
    }

    // MARK: the password kept for the boot

    /// Drops the Unix password kept for the boot (issue 32, `keep_password`): the next login at a
    /// login service then opens no keyring until the password is typed again. Like Disable it
    /// needs no proof -- it only ever takes something away -- and is audited like every change.
    func forgetPassword(user: String, caller: Caller) throws(ServiceError) -> Bool {
        let target = try target(user, caller: caller)
        try mayChange(target, caller: caller, proof: false)
        let store = try openStore()
        var dropped = false
        try change("password-forgotten", target: target, caller: caller, store: store) { () throws(StoreFailure) in
            dropped = environment.forgetKeptPassword(target.account.name)
        }
        environment.logger.log(.info, "\(sanitizedForLog(target.account.name)): \(dropped ? "the password kept for the boot dropped" : "no password was kept for the boot")")
        return dropped
    }
}
