import BiounlockCore
import BiounlockSystem
import BiounlockServiceProtocol
import BiounlockBus

/// What the window says, in the user's language (every text through L(); scripts/po finds them).
/// The service's codes and errors become words here: never a D-Bus error name on screen.
enum Texts {
    /// What fixes a missing piece from this window.
    enum Fix: Equatable {
        case addFinger, setPasscode
        var label: String {
            switch self {
            case .addFinger: return L("Add a Finger")
            case .setPasscode: return L("Set a PIN")
            }
        }
    }

    /// One of CheckEnable's or Enable's (code, detail) pairs: what is missing, in words, and the
    /// button that fixes it (nil when nothing in this window can: no reader, say).
    static func missing(_ code: String, detail: String) -> (text: String, fix: Fix?) {
        switch ManagerAPI.Missing(rawValue: code) {
        case .noFinger?:
            return (L("No finger is enrolled yet: add one first."), .addFinger)
        case .noPasscode?:
            return (L("No PIN or password is set: biometric unlock needs one to fall back on."), .setPasscode)
        case .noReader?:
            return (L("No fingerprint reader was found. Connect one, then try again."), nil)
        case .readersUnlisted?:
            return (L("The fingerprint readers cannot be listed: {reason}", ["reason": detail]), nil)
        case .fprintdUnavailable?:
            return (L("The fingerprint service (fprintd) cannot be reached: {reason}", ["reason": detail]), nil)
        case .otherAccount?:
            return (L("Your biometric unlock record belongs to an account that had your name before; an administrator must clear it first."), nil)
        case nil:
            return (detail.isEmpty ? code : detail, nil)
        }
    }

    /// A failed call to the service, in words.
    static func error(_ e: BusError) -> String {
        if e.serviceMissing {
            return L("The biometric unlock service (biounlockd) cannot be reached, so nothing can be shown or changed. Is biounlock installed?")
        }
        switch e.managerError {
        case .notAuthorized?:
            return L("Not allowed from this session: you can change your own biometric unlock from a local, active session only.")
        case .authenticationRequired?:
            return L("The service asks for your password again.")
        case .authenticationFailed?:
            return L("Wrong password or passcode; nothing was changed.")
        case .tooManyAttempts?:
            let seconds = Int64(e.message.prefix { $0.isNumber }) ?? 60
            return L("Too many failed attempts: try again in {time}.", ["time": describeTimeLeft(seconds)])
        case .busy?:
            return L("The biometric unlock service is busy (an enrolment, or too many requests at once); try again shortly.")
        case .otherAccount?:
            return L("Your biometric unlock record belongs to an account that had your name before; an administrator must clear it first.")
        case .notEnrolled?:
            return L("That finger is not enrolled.")
        case .invalidPasscode?, .noSuchUser?, .invalidArgument?, .unavailable?, .failed?, nil:
            return L("The biometric unlock service could not do it: {reason}", ["reason": e.message.isEmpty ? e.name : e.message])
        }
    }

    /// fprintd's finger names as a person says them.
    static func finger(_ name: String) -> String {
        switch Finger(name: name) {
        case .leftThumb?: return L("Left thumb")
        case .leftIndex?: return L("Left index finger")
        case .leftMiddle?: return L("Left middle finger")
        case .leftRing?: return L("Left ring finger")
        case .leftLittle?: return L("Left little finger")
        case .rightThumb?: return L("Right thumb")
        case .rightIndex?: return L("Right index finger")
        case .rightMiddle?: return L("Right middle finger")
        case .rightRing?: return L("Right ring finger")
        case .rightLittle?: return L("Right little finger")
        case nil: return name
        }
    }

    static func passcode(_ kind: String) -> String {
        switch kind {
        case "": return L("Not set")
        case "pin": return L("PIN")
        case "password": return L("Password")
        case "pattern": return L("Pattern")
        default: return kind
        }
    }

    /// A lockout and what ends it.
    static func lockout(_ l: AccountStatus.Lockout, now: Int64) -> String {
        guard l.locked else { return L("Not locked") }
        var ways: [String] = []
        for way in l.clearedBy {
            switch way {
            case "passcode": ways.append(L("entering your passcode"))
            case "password": ways.append(L("your password at sudo or the login screen"))
            case "reset": ways.append(L("a reset"))
            default: break
            }
        }
        // TRANSLATORS: {ways} is a list such as "entering your passcode, a reset".
        let cleared = ways.isEmpty ? "" : " " + L("(or earlier: {ways})", ["ways": ways.joined(separator: L(", "))])
        guard l.until > 0 else { return L("Locked until cleared by: {ways}", ["ways": ways.joined(separator: L(", "))]) }
        return L("Locked: {time} left", ["time": describeTimeLeft(l.until &- now)]) + cleared
    }

    /// Why the passcode is asked for before the finger next.
    static func passcodeRequired(_ rule: String) -> String {
        switch rule {
        case "": return L("No")
        case "boot": return L("Yes: the computer was restarted")
        case "enrolment": return L("Yes: the enrolled fingers changed")
        case "age": return L("Yes: the passcode was not entered for a while")
        case "first-use": return L("Yes: the passcode has not been entered yet")
        default: return L("Yes ({rule})", ["rule": rule])
        }
    }
}
