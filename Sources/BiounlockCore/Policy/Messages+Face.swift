/// The face's texts (issue 34): the prompts while the camera watches, beside the reader or
/// instead of it. Whole sentences per case, as in Messages.swift; every text goes through L().
extension Messages {
    /// Type, look or touch, on a terminal, while the camera (and the reader, `withFinger`) waits.
    public static func faceTypeOrTouchPrompt(service: String, takes: Takes, withFinger: Bool) -> String {
        // TRANSLATORS: a terminal prompt while the camera looks for the user's face (and the
        // fingerprint reader waits, when it says so); {service} is what the user is doing
        // ("logging in") or an unknown PAM service's name. Keep the trailing ": ".
        let v: KeyValuePairs = ["service": ServiceWords.words(for: service)]
        switch (takes, withFinger) {
        case (.passcodeOrPassword(.pin), true): return L("Look at the camera, touch the reader or type your PIN or password for {service}: ", v)
        case (.passcodeOrPassword(.password), true): return L("Look at the camera, touch the reader or type your passcode or password for {service}: ", v)
        case (.passcodeOrPassword(.pattern), true): return L("Look at the camera, touch the reader or type your pattern or password for {service}: ", v)
        case (.password, true): return L("Look at the camera, touch the reader or type your password for {service}: ", v)
        case (.passcodeOrPassword(.pin), false): return L("Look at the camera or type your PIN or password for {service}: ", v)
        case (.passcodeOrPassword(.password), false): return L("Look at the camera or type your passcode or password for {service}: ", v)
        case (.passcodeOrPassword(.pattern), false): return L("Look at the camera or type your pattern or password for {service}: ", v)
        case (.password, false): return L("Look at the camera or type your password for {service}: ", v)
        }
    }

    /// Callers without a terminal, while the camera (and the reader) still wait behind the prompt.
    public static func faceDialogPrompt(service: String, takes: Takes, withFinger: Bool) -> String {
        // TRANSLATORS: dialog and locker prompts while the camera (and the reader) still wait
        // behind them: Enter alone goes on waiting for the face or a touch.
        let v: KeyValuePairs = ["service": ServiceWords.words(for: service)]
        switch (takes, withFinger) {
        case (.passcodeOrPassword(.pin), true): return L("PIN or password for {service}, or Enter to use the camera or the reader: ", v)
        case (.passcodeOrPassword(.password), true): return L("Passcode or password for {service}, or Enter to use the camera or the reader: ", v)
        case (.passcodeOrPassword(.pattern), true): return L("Pattern or password for {service}, or Enter to use the camera or the reader: ", v)
        case (.password, true): return L("Password for {service}, or Enter to use the camera or the reader: ", v)
        case (.passcodeOrPassword(.pin), false): return L("PIN or password for {service}, or Enter to use the camera: ", v)
        case (.passcodeOrPassword(.password), false): return L("Passcode or password for {service}, or Enter to use the camera: ", v)
        case (.passcodeOrPassword(.pattern), false): return L("Pattern or password for {service}, or Enter to use the camera: ", v)
        case (.password, false): return L("Password for {service}, or Enter to use the camera: ", v)
        }
    }

    /// The request shown alone for `touch_first` seconds to callers without a terminal (TEXT_INFO).
    public static func faceRequest(service: String, withFinger: Bool) -> String {
        // TRANSLATORS: shown while the camera (and the reader) wait, by dialogs and lockers.
        withFinger ? L("Look at the camera or touch the fingerprint reader to authenticate for {service}", ["service": ServiceWords.words(for: service)])
                   : L("Look at the camera to authenticate for {service}", ["service": ServiceWords.words(for: service)])
    }

    /// ERROR_MSG: the camera saw a face that is not the user's (one failed biometric attempt).
    public static func faceNotRecognised(triesLeft: Int) -> String {
        L("Face not recognised. 1 try left.", plural: "Face not recognised. {count} tries left.", count: triesLeft)
    }
}
