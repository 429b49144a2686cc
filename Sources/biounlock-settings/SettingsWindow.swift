import BiounlockCore
import BiounlockAdmin
import BiounlockSystem
import BiounlockServiceProtocol
import BiounlockBus
import BiounlockGtk

/// The one window, like a GNOME Settings panel: the toggle (and what stands in its way), the
/// fingers, the passcode and the lockouts of the user's own account, as biounlockd says them.
/// Every call to the service is asynchronous (BusConnection.callManagerAsync): its answer
/// arrives on GTK's main loop, and nothing waits for it meanwhile.
final class SettingsWindow {
    let window: ApplicationWindow
    let toasts = ToastOverlay()
    let bus: BusConnection?

    // The toggle and what stands in its way.
    let unlockGroup = PreferencesGroup(title: L("Biometric Unlock"),
                                       description: L("Touch the fingerprint reader instead of typing your password for sudo, the login and the lock screen."))
    let toggleRow = ActionRow(title: L("Fingerprint Unlock"))
    let toggle = Switch()
    let busy = Spinner()
    /// The rows that say what is missing (shown under the toggle when it was refused).
    var missingRows: [ActionRow] = []
    /// A row that says the service cannot be reached (or another error that leaves nothing to show).
    var problemRow: ActionRow?

    let fingersGroup = PreferencesGroup(title: L("Fingers"))
    var fingerRows: [ActionRow] = []

    let passcodeGroup = PreferencesGroup(title: L("Passcode"),
                                         description: L("Asked for when the reader cannot be used, and from time to time instead of the finger."))
    var passcodeRow = ActionRow(title: L("Passcode"))

    let statusGroup = PreferencesGroup(title: L("Status"))
    let fingerLockRow = ActionRow(title: L("Fingerprint Lockout"))
    let passcodeLockRow = ActionRow(title: L("Passcode Lockout"))
    let requiredRow = ActionRow(title: L("Passcode Required Next"))

    let eventsGroup = PreferencesGroup(title: L("Recent Events"), description: L("Your own authentications and changes, newest first."))
    var eventRows: [ActionRow] = []

    var status: AccountStatus?
    /// When `status` arrived (its authenticatedFor counts from then).
    var statusAt: Int64 = 0

    init(application: Application) {
        window = ApplicationWindow(application: application)
        window.setTitle(L("Biometric Unlock"))
        window.setDefaultSize(640, 720)
        switch BusConnection.system() {
        case .success(let c): bus = c
        case .failure: bus = nil
        }

        let page = PreferencesPage()
        let content = Box(vertical: true)
        content.append(HeaderBar())
        content.append(toasts)
        toasts.setChild(page)
        window.setContent(content)

        toggleRow.subtitle = L("Off")
        toggle.centreVertically()
        // The switch's accessible name is the row's title (the row labels its activatable widget).
        toggle.sensitive = false
        busy.accessibleName(L("Working"))
        busy.visible = false
        toggleRow.addSuffix(busy)
        toggleRow.addSuffix(toggle)
        toggleRow.activates(toggle)
        toggle.onRequest { [weak self] on in self?.requestToggle(on) }
        unlockGroup.add(toggleRow)
        page.add(unlockGroup)

        page.add(fingersGroup)

        passcodeRow.subtitle = ""
        passcodeGroup.add(passcodeRow)
        page.add(passcodeGroup)

        for row in [fingerLockRow, passcodeLockRow, requiredRow] { statusGroup.add(row) }
        page.add(statusGroup)
        // Shown once the service has answered: nothing to show before (or without) it.
        page.add(eventsGroup)
        for group in [fingersGroup, passcodeGroup, statusGroup, eventsGroup] { group.visible = false }
    }

    func present() {
        window.present()
        refresh()
    }

    // MARK: reading

    /// Asks for the account's record and shows it.
    func refresh() {
        guard let bus else {
            showProblem(Texts.error(BusError(name: BusError.noBus, message: "")))
            return
        }
        bus.callManagerAsync(.getStatus, [.string("")], timeoutMilliseconds: 30_000) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let values):
                guard let first = values.first, let s = AccountStatus(first) else {
                    self.showProblem(Texts.error(BusError(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "GetStatus")))
                    return
                }
                self.show(s)
                self.refreshEvents()
            case .failure(let e):
                self.showProblem(Texts.error(e))
            }
        }
    }

    /// The account's newest audit rows (GetEvents), in words.
    func refreshEvents() {
        bus?.callManagerAsync(.getEvents, [.string(""), .int64(0), .uint32(8)], timeoutMilliseconds: 30_000) { [weak self] result in
            guard let self, case .success(let values) = result else { return }
            for row in self.eventRows { self.eventsGroup.remove(row) }
            self.eventRows = []
            let events = (values.first?.elements ?? []).compactMap(EventRow.init)
            if events.isEmpty {
                let row = ActionRow(title: L("Nothing yet"))
                row.plainText()
                self.eventRows.append(row)
            }
            for e in events {
                let what = StatusReport.describe(outcome: e.outcome, method: AuthMethod(rawValue: e.method) ?? .none, reason: e.reason)
                // TRANSLATORS: when and where an event happened: {time} is a date and time, {service} e.g. sudo.
                let row = ActionRow(title: what, subtitle: L("{time} · {service}", ["time": SettingsWindow.shortTime(e.time), "service": e.service]))
                row.plainText()
                self.eventRows.append(row)
            }
            for row in self.eventRows { self.eventsGroup.add(row) }
            self.eventsGroup.visible = true
        }
    }

    /// "2026-12-05 18:40 UTC" (the ISO 8601 form the CLI prints, to the minute).
    static func shortTime(_ t: Int64) -> String {
        let iso = iso8601(t)
        return String(iso.prefix(16).map { $0 == "T" ? " " : $0 }) + " UTC"
    }

    func show(_ s: AccountStatus) {
        status = s
        statusAt = SystemClock().now()
        if let problemRow { unlockGroup.remove(problemRow); self.problemRow = nil }
        toggle.sensitive = true
        toggle.settle(s.enabled)
        toggleRow.subtitle = s.enabled ? L("On") : L("Off")
        for group in [fingersGroup, passcodeGroup, statusGroup] { group.visible = true }

        for row in fingerRows { fingersGroup.remove(row) }
        fingerRows = []
        if s.fingers.isEmpty {
            let row = ActionRow(title: L("No fingers enrolled"))
            row.plainText()
            fingerRows.append(row)
        } else {
            for f in s.fingers {
                let subtitle: String
                if f.sensor == "fprintd" {
                    subtitle = L("Kept by fprintd")
                } else if f.enrolled > 0 {
                    subtitle = L("Enrolled on {date}", ["date": String(iso8601(f.enrolled).prefix(10))])
                } else {
                    subtitle = ""
                }
                let row = ActionRow(title: Texts.finger(f.finger), subtitle: subtitle)
                row.plainText()
                let remove = Button(icon: "user-trash-symbolic")
                remove.accessibleName(L("Remove {finger}", ["finger": Texts.finger(f.finger)]))
                remove.tooltip(L("Remove {finger}", ["finger": Texts.finger(f.finger)]))
                remove.centreVertically()
                remove.addCSSClass("flat")
                let name = f.finger
                remove.onClicked { [weak self] in self?.removeFinger(name) }
                row.addSuffix(remove)
                fingerRows.append(row)
            }
        }
        // The last row: Add a Finger (the same as the fix button, there whether or not it is on).
        let add = ActionRow(title: L("Add a Finger"))
        add.plainText()
        let addButton = Button(icon: "list-add-symbolic")
        // Its accessible name is the row's title (the row labels its activatable widget).
        addButton.tooltip(L("Add a Finger"))
        addButton.centreVertically()
        addButton.addCSSClass("flat")
        addButton.onClicked { [weak self] in self?.addFinger() }
        add.addSuffix(addButton)
        add.activates(addButton)
        fingerRows.append(add)
        for row in fingerRows { fingersGroup.add(row) }

        // The passcode row, with what can be done about it: set one, or change or remove it.
        passcodeGroup.remove(passcodeRow)
        passcodeRow = ActionRow(title: L("Passcode"), subtitle: Texts.passcode(s.passcode))
        passcodeRow.plainText()
        if s.passcode.isEmpty {
            let set = Button(label: L("Set a PIN"))
            set.accessibleName(L("Set a PIN"))
            set.centreVertically()
            set.onClicked { [weak self] in self?.setPINDialog() }
            passcodeRow.addSuffix(set)
        } else {
            let change = Button(label: L("Change"))
            change.accessibleName(L("Change the Passcode"))
            change.centreVertically()
            change.onClicked { [weak self] in self?.setPINDialog() }
            passcodeRow.addSuffix(change)
            let remove = Button(icon: "user-trash-symbolic")
            remove.accessibleName(L("Remove the Passcode"))
            remove.tooltip(L("Remove the Passcode"))
            remove.centreVertically()
            remove.addCSSClass("flat")
            remove.onClicked { [weak self] in self?.removePasscode() }
            passcodeRow.addSuffix(remove)
        }
        passcodeGroup.add(passcodeRow)
        let now = SystemClock().now()
        fingerLockRow.subtitle = Texts.lockout(s.biometricLockout, now: now)
        passcodeLockRow.subtitle = Texts.lockout(s.passcodeLockout, now: now)
        requiredRow.subtitle = Texts.passcodeRequired(s.passcodeRequired)
    }

    /// Nothing to show: the service cannot be reached, or answered what cannot be read.
    func showProblem(_ text: String) {
        toggle.sensitive = false
        if let problemRow { problemRow.subtitle = text; return }
        let row = ActionRow(title: L("Cannot Reach the Service"), subtitle: text)
        row.plainText()
        let icon = Image(icon: "dialog-warning-symbolic")
        icon.accessibleName(L("Warning"))
        row.addPrefix(icon)
        unlockGroup.add(row)
        problemRow = row
    }

    // MARK: the toggle

    /// The user moved the switch. Turning it on first asks what stands in the way (nothing
    /// changes, no password asked); only then is the change itself made.
    func requestToggle(_ on: Bool) {
        guard let bus else { toggle.settle(false); return }
        setBusy(true)
        if !on {
            bus.callManagerAsync(.disable, [.string(""), .string("")]) { [weak self] result in
                guard let self else { return }
                self.setBusy(false)
                if case .failure(let e) = result { self.toasts.toast(Texts.error(e)) }
                self.refresh()
            }
            return
        }
        bus.callManagerAsync(.checkEnable, [.string(""), .string("")]) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let e):
                self.setBusy(false)
                self.toggle.settle(false)
                self.toasts.toast(Texts.error(e))
            case .success(let values):
                let missing = SettingsWindow.pairs(values.first)
                if !missing.isEmpty {
                    self.setBusy(false)
                    self.refuse(missing)
                } else {
                    // Nothing missing: the change itself needs a fresh proof of who is typing.
                    self.withProof(heading: L("Turn On Fingerprint Unlock"), then: { self.enable() },
                                   otherwise: { self.setBusy(false); self.toggle.settle(false) })
                }
            }
        }
    }

    /// Turns it on (the service asks for a fresh proof first: AuthenticationRequired).
    func enable() {
        change(.enable, [.string(""), .string("")], heading: L("Turn On Fingerprint Unlock")) { [weak self] result in
            guard let self else { return }
            self.setBusy(false)
            switch result {
            case .success(let values):
                let enabled = values.first?.bool ?? false
                if !enabled {
                    self.refuse(SettingsWindow.pairs(values.count > 1 ? values[1] : nil))
                } else {
                    self.clearMissing()
                    self.refresh()
                }
            case .failure(let e):
                self.toggle.settle(false)
                self.toasts.toast(Texts.error(e))
            }
        }
    }

    /// The seeds' refusal: the switch goes back off, and each missing piece is said under it,
    /// with the button that fixes it.
    func refuse(_ missing: [(String, String)]) {
        toggle.settle(false)
        toggleRow.subtitle = L("Off")
        clearMissing()
        for (code, detail) in missing {
            let (text, fix) = Texts.missing(code, detail: detail)
            let row = ActionRow(title: text)
            row.plainText()
            let icon = Image(icon: "dialog-warning-symbolic")
            icon.accessibleName(L("Warning"))
            row.addPrefix(icon)
            if let fix {
                let button = Button(label: fix.label)
                button.centreVertically()
                button.accessibleName(fix.label)
                button.accessibleDescription(text)
                button.addCSSClass("suggested-action")
                button.onClicked { [weak self] in self?.fix(fix) }
                row.addSuffix(button)
            }
            unlockGroup.add(row)
            missingRows.append(row)
        }
    }

    /// After a fix: what is still missing, said again (nothing changes).
    func recheckMissing() {
        guard let bus, !missingRows.isEmpty else { return }
        bus.callManagerAsync(.checkEnable, [.string(""), .string("")]) { [weak self] result in
            guard let self, case .success(let values) = result else { return }
            let missing = SettingsWindow.pairs(values.first)
            if missing.isEmpty { self.clearMissing() } else { self.refuse(missing) }
        }
    }

    func clearMissing() {
        for row in missingRows { unlockGroup.remove(row) }
        missingRows = []
    }

    /// A fix button.
    func fix(_ fix: Texts.Fix) {
        switch fix {
        case .addFinger: addFinger()
        case .setPasscode: setPINDialog()
        }
    }

    // MARK: enrolment

    /// The enrolment in progress: its dialog and the signal subscriptions that feed it.
    final class Enrolment {
        let finger: Finger
        let dialog: MessageDialog
        let bar = ProgressBar()
        let label = Label("")
        var subscriptions: [UInt32] = []
        var finished = false
        init(finger: Finger, dialog: MessageDialog) { self.finger = finger; self.dialog = dialog }
    }
    var enrolment: Enrolment?

    /// Add a Finger: the next finger not yet enrolled (right index first), after the password.
    func addFinger() {
        guard enrolment == nil else { return }
        let enrolled = Set(status?.fingers.map(\.finger) ?? [])
        let order: [Finger] = [.rightIndex, .leftIndex, .rightMiddle, .leftMiddle, .rightThumb, .leftThumb,
                               .rightRing, .leftRing, .rightLittle, .leftLittle]
        guard let finger = order.first(where: { !enrolled.contains($0.name) }) else {
            toasts.toast(L("Every finger is enrolled already."))
            return
        }
        withProof(heading: L("Add a Finger"), then: { [weak self] in self?.findService(then: { self?.startEnrolment(finger, owner: $0) }) },
                  otherwise: {})
    }

    /// The service's unique name: its progress signals are taken from that sender only, so
    /// nobody else on the bus can make the window show progress or "enrolled".
    func findService(then: @escaping (String) -> Void) {
        bus?.callAsync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                       [.string(ManagerAPI.busName)], timeoutMilliseconds: 10_000) { [weak self] result in
            switch result {
            case .success(let v): if let owner = v.first?.string { then(owner) }
            case .failure(let e): self?.toasts.toast(Texts.error(e))
            }
        }
    }

    func startEnrolment(_ finger: Finger, owner: String) {
        guard let bus else { return }
        let dialog = MessageDialog(parent: window, heading: L("Add a Finger"),
                                   body: L("{finger}: touch the reader, lift the finger, and touch again until the bar is full.",
                                           ["finger": Texts.finger(finger.name)]))
        let e = Enrolment(finger: finger, dialog: dialog)
        enrolment = e
        e.bar.accessibleName(L("Enrolment progress"))
        e.label.set(L("Getting the reader ready…"))
        e.label.wrap()
        let box = Box(vertical: true, spacing: 12)
        box.append(e.bar)
        box.append(e.label)
        dialog.setExtraChild(box)
        dialog.addResponse("cancel", L("Cancel"))
        dialog.setCloseResponse("cancel")
        dialog.onResponse { [weak self, weak e] _ in
            guard let self, let e else { return }
            if !e.finished {
                self.bus?.callManagerAsync(.cancelEnrolment, timeoutMilliseconds: 10_000) { _ in }
                self.endEnrolment(e)
            }
            if self.enrolment === e { self.enrolment = nil }
        }
        dialog.present()

        e.subscriptions.append(bus.subscribe(sender: owner, interface: ManagerAPI.interface, member: nil, path: ManagerAPI.objectPath) { [weak self, weak e] member, args in
            guard let self, let e, !e.finished, args.first?.string == finger.name else { return }
            self.enrolSignal(e, member, args)
        })
        // The service going away ends it at once: nothing was stored.
        e.subscriptions.append(bus.subscribe(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                                             path: "/org/freedesktop/DBus") { [weak self, weak e] _, args in
            guard let self, let e, !e.finished, args.count == 3, args[0].string == owner, args[2].string == "" else { return }
            self.enrolEnded(e, L("Enrolment failed: {reason}. Nothing was stored.", ["reason": L("the biounlock service stopped")]))
        })
        change(.startEnrolment, [.string(""), .string(finger.name), .uint32(ManagerAPI.defaultEnrolSeconds)], heading: L("Add a Finger")) { [weak self, weak e] result in
            guard let self, let e, case .failure(let error) = result else { return }
            self.enrolEnded(e, Texts.error(error))
        }
    }

    func enrolSignal(_ e: Enrolment, _ member: String, _ args: [BusValue]) {
        switch (ManagerAPI.Signal(rawValue: member), args.count) {
        case (.enrolStage?, 3):
            let done = args[1].uint32 ?? 0, total = max(args[2].uint32 ?? 1, 1)
            e.bar.fraction = Double(min(done, total)) / Double(total)
            e.label.set(done == 0 ? L("Touch the reader.")
                                  : L("Touch {done} of {total} taken.", ["done": String(done), "total": String(total)]))
        case (.enrolRetry?, 2):
            switch ManagerAPI.RetryCode(rawValue: args[1].string ?? "") {
            case .differentFinger?: e.label.set(L("That was a different finger: touch again with the same one."))
            case .tooShort?: e.label.set(Messages.retry(.tooShort))
            case .centerFinger?: e.label.set(Messages.retry(.centerFinger))
            case .removeFinger?: e.label.set(Messages.retry(.removeFinger))
            case .general?, nil: e.label.set(Messages.retry(.general))
            }
        case (.enrolFinished?, 3):
            let detail = args[2].string ?? ""
            switch ManagerAPI.EnrolResult(rawValue: args[1].string ?? "") {
            case .done?:
                e.bar.fraction = 1
                enrolEnded(e, L("{finger} enrolled.", ["finger": Texts.finger(e.finger.name)]))
                refresh()
                recheckMissing()
            case .cancelled?:
                enrolEnded(e, L("Enrolment cancelled. Nothing was stored."))
            case .failed?, nil:
                enrolEnded(e, L("Enrolment failed: {reason}. Nothing was stored.", ["reason": detail]))
            }
        default:
            break
        }
    }

    /// The end, said in the dialog, whose button becomes Done.
    func enrolEnded(_ e: Enrolment, _ text: String) {
        endEnrolment(e)
        e.label.set(text)
        e.dialog.setResponseLabel("cancel", L("Done"))
    }

    func endEnrolment(_ e: Enrolment) {
        e.finished = true
        for id in e.subscriptions { bus?.unsubscribe(id) }
        e.subscriptions = []
    }

    // MARK: the proof and the PIN

    /// A change the service may want a fresh proof for: when it answers AuthenticationRequired
    /// (the proof ran out since the status said otherwise), the password is asked and the call
    /// made once more.
    func change(_ method: ManagerAPI.Method, _ arguments: [BusValue], heading: String,
                _ completion: @escaping (Result<[BusValue], BusError>) -> Void) {
        guard let bus else { return }
        bus.callManagerAsync(method, arguments) { [weak self] result in
            guard let self, case .failure(let e) = result, e.managerError == .authenticationRequired else { completion(result); return }
            self.statusAt = 0
            self.status?.authenticatedFor = 0
            self.withProof(heading: heading, then: { bus.callManagerAsync(method, arguments, completion) },
                           otherwise: { completion(result) })
        }
    }

    /// Remove a finger: after the password (the service's rule), DeleteFingers.
    func removeFinger(_ name: String) {
        let finger = Texts.finger(name)
        withProof(heading: L("Remove {finger}", ["finger": finger]), then: { [weak self] in
            self?.change(.deleteFingers, [.string(""), .string(name)], heading: L("Remove {finger}", ["finger": finger])) { result in
                guard let self else { return }
                switch result {
                case .success: self.toasts.toast(L("{finger} removed.", ["finger": finger]))
                case .failure(let e): self.toasts.toast(Texts.error(e))
                }
                self.refresh()
            }
        }, otherwise: {})
    }

    /// A socket carrying `secret`, its writing side shut: the descriptor to send (the service
    /// reads the secret from it, never from a message argument).
    static func carrying(_ secret: Secret) -> OwnedDescriptor? {
        do throws(Errno) {
            let pair = try FileDescriptor.localStreamPair()
            var bytes = secret.withBytes { Array($0) }
            defer { wipe(&bytes) }
            try pair.second.descriptor.writeAll(bytes)
            return OwnedDescriptor(taking: pair.releaseFirst())
        } catch {
            return nil
        }
    }

    /// What an entry holds, as a Secret; the entry is cleared.
    static func take(_ entry: PasswordEntry) -> Secret? {
        let secret = entry.withText { Secret(copying: $0.baseAddress, count: $0.count) }
        entry.clear()
        return secret
    }

    /// Asks for the Unix password (or the current biometric unlock passcode; never a finger),
    /// unless the service still holds a proof for this connection, then calls `then`.
    func withProof(heading: String, then: @escaping () -> Void, otherwise: @escaping () -> Void) {
        if let status, Int64(status.authenticatedFor) - (SystemClock().now() &- statusAt) > 10 { then(); return }
        let password = PasswordEntry(placeholder: L("Your password"))
        password.accessibleName(L("Your password"))
        let dialog = MessageDialog(parent: window, heading: heading,
                                   body: L("Type your password (or your biometric unlock passcode) to confirm that it is you."))
        dialog.setExtraChild(password)
        dialog.addResponse("cancel", L("Cancel"))
        dialog.addResponse("confirm", L("Confirm"), suggested: true)
        dialog.setCloseResponse("cancel")
        dialog.onResponse { [weak self] response in
            guard let self else { return }
            let secret = SettingsWindow.take(password)
            guard response == "confirm", let secret, !secret.isEmpty else { otherwise(); return }
            self.authenticate(secret, then: then, otherwise: otherwise)
        }
        dialog.present()
        password.grabFocus()
    }

    func authenticate(_ secret: Secret, then: @escaping () -> Void, otherwise: @escaping () -> Void) {
        guard let bus, let fd = SettingsWindow.carrying(secret) else { otherwise(); return }
        bus.callManagerAsync(.authenticate, [.handle(0)], descriptors: [fd.descriptor], timeoutMilliseconds: 60_000) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success: then()
            case .failure(let e):
                self.toasts.toast(Texts.error(e))
                otherwise()
            }
        }
    }

    /// Remove the passcode: after the password, RemovePasscode.
    func removePasscode() {
        withProof(heading: L("Remove the Passcode"), then: { [weak self] in
            self?.change(.removePasscode, [.string("")], heading: L("Remove the Passcode")) { result in
                guard let self else { return }
                switch result {
                case .success: self.toasts.toast(L("Passcode removed."))
                case .failure(let e): self.toasts.toast(Texts.error(e))
                }
                self.refresh()
            }
        }, otherwise: {})
    }

    /// Set (or change) the passcode: its kind (a PIN or a password), the Unix password first (as
    /// passwd asks), then the new passcode twice. Checked here by the kind's own rules
    /// (PasscodeKind, as the service checks it again) before anything is sent.
    func setPINDialog() {
        let pinKind = ToggleButton(label: L("PIN"))
        let passwordKind = ToggleButton(label: L("Password"))
        passwordKind.join(pinKind)
        pinKind.isActive = status?.passcode != "password"
        passwordKind.isActive = status?.passcode == "password"
        let kinds = Box(vertical: false)
        kinds.addCSSClass("linked")
        kinds.append(pinKind)
        kinds.append(passwordKind)
        let password = PasswordEntry(placeholder: L("Your password"))
        password.accessibleName(L("Your password"))
        let first = PasswordEntry(placeholder: L("New passcode"))
        first.accessibleName(L("New passcode"))
        let again = PasswordEntry(placeholder: L("New passcode again"))
        again.accessibleName(L("New passcode again"))
        let fields = Box(vertical: true, spacing: 6)
        fields.append(kinds)
        fields.append(password)
        fields.append(first)
        fields.append(again)
        let dialog = MessageDialog(parent: window, heading: L("Set a Passcode"),
                                   body: L("A PIN (at least 4 digits) or a password (at least 6 characters), asked for when the reader cannot be used. Your password first, then the new passcode twice."))
        dialog.setExtraChild(fields)
        dialog.addResponse("cancel", L("Cancel"))
        dialog.addResponse("set", L("Set Passcode"), suggested: true)
        dialog.setCloseResponse("cancel")
        dialog.onResponse { [weak self] response in
            guard let self else { return }
            let kind: PasscodeKind = passwordKind.isActive ? .password : .pin
            let secrets = (SettingsWindow.take(password), SettingsWindow.take(first), SettingsWindow.take(again))
            guard response == "set", let proof = secrets.0, let new = secrets.1, let second = secrets.2 else { return }
            if let problem = kind.problem(with: new) {
                self.toasts.toast(L("The passcode was not set: {problem}.", ["problem": problem]))
                return
            }
            guard new.constantTimeEquals(second) else {
                self.toasts.toast(L("The two entries are not the same; nothing was changed."))
                return
            }
            self.authenticate(proof, then: { self.setPasscode(new, kind: kind) }, otherwise: {})
        }
        dialog.present()
        password.grabFocus()
    }

    func setPasscode(_ secret: Secret, kind: PasscodeKind) {
        guard let bus, let fd = SettingsWindow.carrying(secret) else { return }
        bus.callManagerAsync(.setPasscode, [.string(""), .string(kind.rawValue), .handle(0)], descriptors: [fd.descriptor]) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                self.toasts.toast(kind == .pin ? L("PIN set.") : L("Password set."))
                self.refresh()
                self.recheckMissing()
            case .failure(let e):
                if e.managerError == .invalidPasscode {
                    self.toasts.toast(L("The passcode was not set: {problem}.", ["problem": e.message]))
                } else {
                    self.toasts.toast(Texts.error(e))
                }
            }
        }
    }

    func setBusy(_ on: Bool) {
        busy.visible = on
        busy.spinning = on
        toggle.sensitive = !on
    }

    static func pairs(_ value: BusValue?) -> [(String, String)] {
        (value?.elements ?? []).compactMap { item in
            guard case .tuple(let m) = item, m.count == 2, let code = m[0].string else { return nil }
            return (code, m[1].string ?? "")
        }
    }
}
