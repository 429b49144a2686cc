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
    /// Where it is used: a switch per group of services, and one for the rest (the toggle),
    /// under an expander (SettingsWindow+Services.swift).
    // TRANSLATORS: an expander under the main switch, which opens onto a switch for sudo, one for
    // the login and lock screen and one for everything else.
    let whereRow = ExpanderRow(title: L("Where to Use It"), subtitle: L("sudo, the login and lock screen, everything else"))
    var whereSwitches: [(scope: ManagerAPI.Scope, row: ActionRow, control: Switch)] = []
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
    /// While a lockout lifts by itself: ticks each second so that its row counts down, and says
    /// "Not locked" once its time is up.
    var countdown: RepeatingTimer?

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
        addWhere()
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
        let somewhere = s.enabled || s.services.values.contains(true)
        toggle.settle(somewhere)
        toggleRow.subtitle = somewhere ? L("On") : L("Off")
        showWhere(s)
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
        showLockouts(s)
        requiredRow.subtitle = Texts.passcodeRequired(s.passcodeRequired)
        countdown = nil  // its deinit stops the ticking
        if [s.biometricLockout, s.passcodeLockout].contains(where: \.liftsByItself) {
            countdown = RepeatingTimer(seconds: 1) { [weak self] in self?.tick() ?? false }
        }
    }

    func showLockouts(_ s: AccountStatus) {
        let now = SystemClock().now()
        fingerLockRow.subtitle = Texts.lockout(s.biometricLockout, now: now)
        passcodeLockRow.subtitle = Texts.lockout(s.passcodeLockout, now: now)
    }

    /// One second of a lockout's countdown: the lockout rows again (nothing else is redrawn, so
    /// a row the user is about to press stays put). A lockout with a time lifts at that time --
    /// the service's rule (Lockouts) -- so it is shown lifted then without asking the service.
    /// False ends the ticking.
    func tick() -> Bool {
        guard var s = status else { return false }
        let now = SystemClock().now()
        for lockout in [\AccountStatus.biometricLockout, \AccountStatus.passcodeLockout]
        where s[keyPath: lockout].liftsByItself && s[keyPath: lockout].until <= now {
            s[keyPath: lockout] = .open
        }
        status = s
        showLockouts(s)
        return [s.biometricLockout, s.passcodeLockout].contains(where: \.liftsByItself)
    }

    /// Nothing to show: the service cannot be reached, or answered what cannot be read.
    func showProblem(_ text: String) {
        toggle.sensitive = false
        whereRow.visible = false
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

    /// The user moved the main switch: on means on somewhere. Off turns it off everywhere (the
    /// toggle and every per-service setting, one change: Disable "@all"); on turns it on
    /// everywhere (Enable "@all"), after the seeds' check.
    func requestToggle(_ on: Bool) {
        request(on, scope: .everywhere, control: toggle)
    }

    /// A switch asks for `on` for `scope`. Turning on first asks what stands in the way
    /// (nothing changes, no password asked); only then is the change itself made. Turning off
    /// needs no password. Every answer ends in a fresh status, which settles every switch.
    func request(_ on: Bool, scope: ManagerAPI.Scope, control: Switch) {
        guard let bus else { control.settle(!on); return }
        setBusy(true)
        if !on {
            bus.callManagerAsync(.disable, [.string(""), .string(scope.argument)]) { [weak self] result in
                guard let self else { return }
                self.setBusy(false)
                if case .failure(let e) = result { self.toasts.toast(Texts.error(e)) }
                self.refresh()
            }
            return
        }
        bus.callManagerAsync(.checkEnable, [.string(""), .string(scope.argument)]) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let e):
                self.setBusy(false)
                control.settle(false)
                self.toasts.toast(Texts.error(e))
                self.refresh()
            case .success(let values):
                let missing = SettingsWindow.pairs(values.first)
                if !missing.isEmpty {
                    self.setBusy(false)
                    self.refuse(missing, control: control)
                } else {
                    // Nothing missing: the change itself needs a fresh proof of who is typing.
                    self.withProof(heading: L("Turn On Fingerprint Unlock"), then: { self.enable(scope, control: control) },
                                   otherwise: { self.setBusy(false); control.settle(false); self.refresh() })
                }
            }
        }
    }

    /// Turns it on for `scope` (the service asks for a fresh proof first: AuthenticationRequired).
    func enable(_ scope: ManagerAPI.Scope, control: Switch) {
        change(.enable, [.string(""), .string(scope.argument)], heading: L("Turn On Fingerprint Unlock")) { [weak self] result in
            guard let self else { return }
            self.setBusy(false)
            switch result {
            case .success(let values):
                let enabled = values.first?.bool ?? false
                if !enabled {
                    self.refuse(SettingsWindow.pairs(values.count > 1 ? values[1] : nil), control: control)
                } else {
                    self.clearMissing()
                    self.refresh()
                }
            case .failure(let e):
                control.settle(false)
                self.toasts.toast(Texts.error(e))
                self.refresh()
            }
        }
    }

    /// The seeds' refusal: the switch that asked goes back off, and each missing piece is said
    /// under the main toggle, with the button that fixes it. (nil: said again after a fix; no
    /// switch moved.)
    func refuse(_ missing: [(String, String)], control: Switch?) {
        if let control {
            control.settle(false)
            if control === toggle { toggleRow.subtitle = L("Off") }
        }
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
        // Right under the switch that was refused, above "Where to Use It".
        if !missingRows.isEmpty { unlockGroup.moveToEnd(whereRow) }
    }

    /// After a fix: what is still missing, said again (nothing changes).
    func recheckMissing() {
        guard let bus, !missingRows.isEmpty else { return }
        bus.callManagerAsync(.checkEnable, [.string(""), .string("")]) { [weak self] result in
            guard let self, case .success(let values) = result else { return }
            let missing = SettingsWindow.pairs(values.first)
            if missing.isEmpty { self.clearMissing() } else { self.refuse(missing, control: nil) }
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
        let image = FingerprintImage()
        let bar = ProgressBar()
        let label = Label("")
        var subscriptions: [UInt32] = []
        var finished = false
        init(finger: Finger, dialog: MessageDialog) { self.finger = finger; self.dialog = dialog }
    }
    var enrolment: Enrolment?
}
