import BiounlockCore
import BiounlockAdmin
import BiounlockSystem
import BiounlockServiceProtocol
import BiounlockBus
import BiounlockGtk

/// Changes that need a fresh proof (the password), removing a finger, and the passcode: set,
/// change, remove.
extension SettingsWindow {
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

    /// Set (or change) the passcode: its kind (a PIN, a password or a pattern drawn on the 3x3
    /// grid, twice), the Unix password first (as passwd asks), then the new passcode twice.
    /// Checked here by the kind's own rules (PasscodeKind, as the service checks it again)
    /// before anything is sent.
    func setPINDialog() {
        let pinKind = ToggleButton(label: L("PIN"))
        let passwordKind = ToggleButton(label: L("Password"))
        let patternKind = ToggleButton(label: L("Pattern"))
        passwordKind.join(pinKind)
        patternKind.join(pinKind)
        pinKind.isActive = status?.passcode != "password" && status?.passcode != "pattern"
        passwordKind.isActive = status?.passcode == "password"
        patternKind.isActive = status?.passcode == "pattern"
        let kinds = Box(vertical: false)
        kinds.addCSSClass("linked")
        kinds.append(pinKind)
        kinds.append(passwordKind)
        kinds.append(patternKind)
        let password = PasswordEntry(placeholder: L("Your password"))
        password.accessibleName(L("Your password"))
        let first = PasswordEntry(placeholder: L("New passcode"))
        first.accessibleName(L("New passcode"))
        let again = PasswordEntry(placeholder: L("New passcode again"))
        again.accessibleName(L("New passcode again"))
        let grid = PatternGrid()
        let gridLabel = Label(L("Draw a pattern of at least 4 points."))
        gridLabel.wrap()
        // Its text changes after each drawing; the longer ones (the mismatch) would otherwise
        // widen the dialog and move the grid under the pointer before the next drawing (seen in
        // settings-app.sh: the dots shifted 16-86 px and the next drag missed them).
        gridLabel.maxWidthChars(24)
        grid.onChange = { gridLabel.set($0) }
        let fields = Box(vertical: true, spacing: 6)
        fields.append(kinds)
        fields.append(password)
        fields.append(first)
        fields.append(again)
        fields.append(grid.area)
        fields.append(gridLabel)
        let showKind = {
            let pattern = patternKind.isActive
            first.visible = !pattern
            again.visible = !pattern
            grid.area.visible = pattern
            gridLabel.visible = pattern
        }
        showKind()
        Signals.connect(patternKind.g, "toggled", showKind)
        let dialog = MessageDialog(parent: window, heading: L("Set a Passcode"),
                                   body: L("A PIN (at least 4 digits), a password (at least 6 characters) or a pattern (at least 4 points), asked for when the reader cannot be used. Your password first, then the new passcode twice."))
        dialog.setExtraChild(fields)
        dialog.addResponse("cancel", L("Cancel"))
        dialog.addResponse("set", L("Set Passcode"), suggested: true)
        dialog.setCloseResponse("cancel")
        dialog.onResponse { [weak self] response in
            guard let self else { return }
            let kind: PasscodeKind = patternKind.isActive ? .pattern : passwordKind.isActive ? .password : .pin
            var secrets = (SettingsWindow.take(password), SettingsWindow.take(first), SettingsWindow.take(again))
            // The pattern's digits leave the grid as its Secret; the grid forgets them (and
            // zeroes its path) whatever the answer, as the entries are cleared by take().
            let drawn = grid.confirmed
            grid.forget()
            if kind == .pattern {
                guard response == "set" else { return }
                guard let drawn else {
                    self.toasts.toast(L("Draw the pattern twice, the same both times; nothing was changed."))
                    return
                }
                secrets.1 = drawn
                secrets.2 = drawn
            }
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
                self.toasts.toast(kind == .pin ? L("PIN set.") : kind == .pattern ? L("Pattern set.") : L("Password set."))
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
        for w in whereSwitches { w.control.sensitive = !on }
    }

    static func pairs(_ value: BusValue?) -> [(String, String)] {
        (value?.elements ?? []).compactMap { item in
            guard case .tuple(let m) = item, m.count == 2, let code = m[0].string else { return nil }
            return (code, m[1].string ?? "")
        }
    }
}
