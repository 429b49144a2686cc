import BiounlockSystem

/// Step 8 of the chain: asking. The reader waits for a touch while the user may type the
/// passcode or the Unix password -- at once on a terminal, and without a terminal after at most
/// `touch_first` seconds -- so that nobody waits out the finger's timeout before they may type.
///
/// - On a terminal (type or touch): one prompt, read by biounlock itself while the reader waits;
///   a touch ends it with no key pressed, Enter ends it with what was typed. Once the reader is
///   done the prompt keeps taking keys until Enter (no keystroke is lost).
/// - Without one (dialogs, lockers, pamtester, sshd with remote=passcode|allow): the touch request,
///   the reader alone for `touch_first` seconds, then the PAM conversation's hidden prompt. The
///   reader keeps waiting behind that prompt (the conversation blocks, and biounlock starts no
///   thread), so Enter alone there means "use the reader": a touch made while the prompt was up
///   counts, and the wait goes on until `timeout`.
extension PolicyChain {
    func ask(_ session: FingerSession, takes: Messages.Takes, request: AuthRequest) -> Entry {
        // A caller of prompt_first_services has read the secret already and answers the
        // conversation's prompts with it -- GNU screen's lock does so on a terminal, as root
        // too: the module never prompts on that terminal behind its back (a second prompt there,
        // the typed secret never asked for).
        if options.prompt == .concurrent, !options.promptsFirst(request.service), let terminal = heldTerminal ?? terminal() {
            return typeOrTouch(session, at: terminal, takes: takes, request: request)
        }
        return dialog(session, takes: takes, request: request)
    }

    func typeOrTouch(_ session: FingerSession, at terminal: TypeOrTouchTerminal, takes: Messages.Takes, request: AuthRequest) -> Entry {
        let prompt = session.face.map { Messages.faceTypeOrTouchPrompt(service: request.service, takes: takes, withFinger: $0.watchesFinger) }
        terminal.start(prompt: prompt ?? Messages.typeOrTouchPrompt(service: request.service, takes: takes))
        activeTerminal = terminal
        var cancelled = false
        defer {
            activeTerminal = nil
            terminal.finish(cancelled: cancelled)
            if cancelled { interruptedTerminal = terminal }
        }
        let typingDeadline = Deadline.after(milliseconds: Int64(Options.typingTimeoutSeconds) * 1000, clock: clock)
        while true {
            if session.isOpen {
                let event = session.next(interrupt: terminal.fd)
                if let entry = react(event, session: session, terminal: terminal, takes: takes, request: request) { return entry }
                guard event == .waiting else { continue }
            } else if !terminal.waitForKey(until: typingDeadline) {
                return .nothing(.typingTimedOut)
            }
            switch terminal.readAvailable() {
            case .pending: continue
            case .line(let secret): return .typed(secret)
            case .tooLong: return .typedTooLong
            case .empty: return .nothing(session.end?.reason ?? .passcodeDeclined)
            case .closed: return .conversationFailed
            case .cancelled:
                cancelled = true
                return .cancelled
            }
        }
    }

    func dialog(_ session: FingerSession, takes: Messages.Takes, request: AuthRequest) -> Entry {
        if options.readerAlone {
            // A fingerprint stack (fingerprint_services): the touch request and the reader until
            // its own timeout or max_tries; nothing is typed here (the password stack beside it
            // takes the PIN and the password).
            say(request, exchange: Messages.touchPrompt(template: options.reason, service: request.service))
            while session.isOpen {
                if let entry = react(session.next(), session: session, terminal: nil, takes: takes, request: request) { return entry }
            }
            return .nothing(session.end?.reason ?? .timedOut)
        }
        // prompt_first_services (i3lock, swaylock, sddm, screen): the prompt at once (Options.touchFirstSeconds(service:)).
        let touchFirst = options.touchFirstSeconds(service: request.service)
        if touchFirst > 0 {
            let face = session.face.map { Messages.faceRequest(service: request.service, withFinger: $0.watchesFinger) }
            say(request, exchange: face ?? Messages.touchPrompt(template: options.reason, service: request.service))
            let window = Deadline.after(milliseconds: Int64(touchFirst) * 1000, clock: clock)
            while session.isOpen {
                let event = session.next(waitUntil: window)
                if let entry = react(event, session: session, terminal: nil, takes: takes, request: request) { return entry }
                if event == .waiting { break }
            }
        }
        while true {
            let prompt: String
            if session.isOpen, let face = session.face {
                prompt = Messages.faceDialogPrompt(service: request.service, takes: takes, withFinger: face.watchesFinger)
            } else if session.isOpen {
                prompt = Messages.dialogPrompt(service: request.service, takes: takes)
            } else if case .passcodeOrPassword = takes {
                prompt = Messages.typePrompt(service: request.service, takes: takes)
            } else {
                return .nothing(session.end?.reason ?? .timedOut)
            }
            let entry = askText(prompt, whenEmpty: session.end?.reason ?? .passcodeDeclined)
            guard case .nothing = entry, session.isOpen else { return entry }
            // Enter alone while the reader waits: the user chose the reader.
            while session.isOpen {
                let event = session.next()
                if let entry = react(event, session: session, terminal: nil, takes: takes, request: request) { return entry }
            }
        }
    }

    /// One hidden prompt through the conversation.
    func askText(_ prompt: String, whenEmpty: Reason) -> Entry {
        switch conversation.promptSecret(prompt) {
        case .failed: return .conversationFailed
        case .tooLong: return .typedTooLong
        case .answer(let secret): return .typed(secret)
        case .empty: return .nothing(whenEmpty)
        }
    }

    /// Shows what the reader said; returns the entry when that ends the asking.
    func react(_ event: FingerSession.Event, session: FingerSession, terminal: TypeOrTouchTerminal?,
               takes: Messages.Takes, request: AuthRequest) -> Entry? {
        switch event {
        case .matched(let finger):
            return .matched(finger)
        case .matchedFace:
            return .matchedFace
        case .faceNotRecognised(let triesLeft):
            say(request, exchange: Messages.faceNotRecognised(triesLeft: triesLeft), isError: true)
            // The reader alone waits now: the prompt says so.
            if session.face == nil, session.isOpen {
                terminal?.changePrompt(Messages.typeOrTouchPrompt(service: request.service, takes: takes))
            }
        case .waiting:
            return nil
        case .notRecognised(let triesLeft):
            say(request, exchange: Messages.notRecognised(triesLeft: triesLeft), isError: true)
        case .retry(let reason):
            say(request, exchange: Messages.retry(reason))
        case .ended(let end):
            // The prompt shown after the message no longer offers the touch.
            terminal?.changePrompt(Messages.typePrompt(service: request.service, takes: takes))
            switch end {
            case .exhausted:
                say(request, exchange: Messages.tooManyWrongFingers, isError: true)
                // Finger only, and nowhere to type: PAM_MAXTRIES (the password module asks next).
                // So too in a fingerprint stack (reader alone), whatever the policy: nothing is typed there.
                if (options.policy == .biometrics || options.readerAlone) && terminal == nil { return .exhausted }
            case .locked:
                let until = options.policy == .biometrics ? Int64(options.biometricUnlockSeconds) : nil
                say(request, exchange: Messages.biometricsLocked(policy: options.policy, timeLeft: until, passcode: takes.passcodeKind),
                    isError: true)
            case .unavailable:
                say(request, notice: Messages.readerUnavailable)
            case .uncounted:
                break
            case .timedOut:
                // At a prompt the user is still being asked for something: say so even under PAM_SILENT.
                if terminal == nil { say(request, notice: Messages.timedOut, isError: false) } else { say(request, exchange: Messages.timedOut) }
            }
        }
        return nil
    }
}
