import BiounlockCore
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
    let passcodeRow = ActionRow(title: L("Passcode"))

    let statusGroup = PreferencesGroup(title: L("Status"))
    let fingerLockRow = ActionRow(title: L("Fingerprint Lockout"))
    let passcodeLockRow = ActionRow(title: L("Passcode Lockout"))
    let requiredRow = ActionRow(title: L("Passcode Required Next"))

    var status: AccountStatus?

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
        for group in [fingersGroup, passcodeGroup, statusGroup] { group.visible = false }
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
            case .failure(let e):
                self.showProblem(Texts.error(e))
            }
        }
    }

    func show(_ s: AccountStatus) {
        status = s
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
                fingerRows.append(row)
            }
        }
        for row in fingerRows { fingersGroup.add(row) }

        passcodeRow.subtitle = Texts.passcode(s.passcode)
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
        guard let bus else { return }
        bus.callManagerAsync(.enable, [.string(""), .string("")]) { [weak self] result in
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

    /// A fix button. Setting a PIN is done here; enrolling a finger from the window is not
    /// written yet, so that button names the command that does it.
    func fix(_ fix: Texts.Fix) {
        switch fix {
        case .addFinger:
            toasts.toast(L("Enrol a finger with: {command}", ["command": "biounlock enrol --finger right-index"]), seconds: 10)
        case .setPasscode:
            setPINDialog()
        }
    }

    // MARK: the proof and the PIN

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
        if let status, status.authenticatedFor > 10 { then(); return }
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

    /// Set a PIN: the password first (as passwd asks), then the new PIN twice.
    func setPINDialog() {
        let password = PasswordEntry(placeholder: L("Your password"))
        password.accessibleName(L("Your password"))
        let pin = PasswordEntry(placeholder: L("New PIN"))
        pin.accessibleName(L("New PIN"))
        let again = PasswordEntry(placeholder: L("New PIN again"))
        again.accessibleName(L("New PIN again"))
        let fields = Box(vertical: true, spacing: 6)
        fields.append(password)
        fields.append(pin)
        fields.append(again)
        let dialog = MessageDialog(parent: window, heading: L("Set a PIN"),
                                   body: L("Your password first, then the new PIN twice. The PIN is asked for when the reader cannot be used."))
        dialog.setExtraChild(fields)
        dialog.addResponse("cancel", L("Cancel"))
        dialog.addResponse("set", L("Set PIN"), suggested: true)
        dialog.setCloseResponse("cancel")
        dialog.onResponse { [weak self] response in
            guard let self else { return }
            let secrets = (SettingsWindow.take(password), SettingsWindow.take(pin), SettingsWindow.take(again))
            guard response == "set", let proof = secrets.0, let first = secrets.1, let second = secrets.2 else { return }
            guard !first.isEmpty, first.constantTimeEquals(second) else {
                self.toasts.toast(L("The two PINs are not the same; nothing was changed."))
                return
            }
            self.authenticate(proof, then: { self.setPasscode(first) }, otherwise: {})
        }
        dialog.present()
        password.grabFocus()
    }

    func setPasscode(_ pin: Secret) {
        guard let bus, let fd = SettingsWindow.carrying(pin) else { return }
        bus.callManagerAsync(.setPasscode, [.string(""), .string("pin"), .handle(0)], descriptors: [fd.descriptor]) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                self.toasts.toast(L("PIN set."))
                self.refresh()
                self.recheckMissing()
            case .failure(let e):
                if e.managerError == .invalidPasscode {
                    self.toasts.toast(L("PIN not set: {problem}", ["problem": e.message]))
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
