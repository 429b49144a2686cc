import BiounlockCore
import BiounlockAdmin
import BiounlockSystem
import BiounlockServiceProtocol
import BiounlockBus
import BiounlockGtk

/// Adding a finger: the service's enrolment, its progress signals and its dialog.
extension SettingsWindow {
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
        e.image.show(done: 0, total: 1, saying: L("Getting the reader ready…"))
        box.append(e.image.area)
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
            let words = done == 0 ? L("Touch the reader.") : L("Touch {done} of {total} taken.", ["done": String(done), "total": String(total)])
            e.label.set(words)
            e.image.show(done: done, total: total, saying: words)
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
                let words = L("{finger} enrolled.", ["finger": Texts.finger(e.finger.name)])
                e.image.show(done: 1, total: 1, saying: words)
                enrolEnded(e, words)
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
}
