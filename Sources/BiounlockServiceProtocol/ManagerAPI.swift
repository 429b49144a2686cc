import BiounlockCore

/// biounlockd's D-Bus API: the names every side agrees on (the service, the CLI's user mode, the
/// settings app, the tests). The interface itself is `ManagerInterface.xml` (the same text as
/// data/dbus/org.biounlock.Manager1.xml, which a test compares), documented in biounlockd(8) and
/// docs/DESIGN.md.
public enum ManagerAPI {
    public static let busName = "org.biounlock.Manager1"
    public static let objectPath = "/org/biounlock/Manager1"
    public static let interface = "org.biounlock.Manager1"

    /// The polkit actions (packaging/polkit/org.biounlock.policy).
    public static let manageOwnAction = "org.biounlock.manage-own"
    public static let manageOthersAction = "org.biounlock.manage-others"

    /// The PAM service with which the service re-authenticates a caller (/etc/pam.d/biounlock-reauth).
    public static let reauthService = "biounlock-reauth"
    /// How the service's own rows appear in the audit log (the `service` column).
    public static let auditService = "biounlockd"

    public enum Method: String, CaseIterable, Sendable {
        case getStatus = "GetStatus"
        case getEvents = "GetEvents"
        case checkEnable = "CheckEnable"
        case authenticate = "Authenticate"
        case enable = "Enable"
        case disable = "Disable"
        case setPasscode = "SetPasscode"
        case removePasscode = "RemovePasscode"
        case startEnrolment = "StartEnrolment"
        case cancelEnrolment = "CancelEnrolment"
        case deleteFingers = "DeleteFingers"
        case resetLockouts = "ResetLockouts"
        case forgetPassword = "ForgetPassword"

        /// The input signature (what GDBus checks against the introspection data before a handler runs).
        public var inputSignature: String {
            switch self {
            case .getStatus: return "(s)"
            case .getEvents: return "(sxu)"
            case .checkEnable: return "(ss)"
            case .authenticate: return "(h)"
            case .enable: return "(ss)"
            case .disable: return "(ss)"
            case .setPasscode: return "(ssh)"
            case .removePasscode: return "(s)"
            case .startEnrolment: return "(ssu)"
            case .cancelEnrolment: return "()"
            case .deleteFingers: return "(ss)"
            case .resetLockouts: return "(ss)"
            case .forgetPassword: return "(s)"
            }
        }

        public var outputSignature: String {
            switch self {
            case .getStatus: return "(a{sv})"
            case .getEvents: return "(a(xssssss))"
            case .checkEnable: return "(a(ss))"
            case .authenticate: return "(u)"
            case .enable: return "(ba(ss))"
            case .deleteFingers: return "(u)"
            case .forgetPassword: return "(b)"
            case .disable, .setPasscode, .removePasscode, .startEnrolment, .cancelEnrolment, .resetLockouts: return "()"
            }
        }
    }

    public enum Signal: String, CaseIterable, Sendable {
        /// (s finger, u done, u total): touch `done` of `total` taken (0 of N once the reader is ready).
        case enrolStage = "EnrolStage"
        /// (s finger, s reason): the touch did not count; a RetryCode.
        case enrolRetry = "EnrolRetry"
        /// (s finger, s result, s detail): the enrolment ended; an EnrolResult, and why in English.
        case enrolFinished = "EnrolFinished"
    }

    /// The errors the service answers with (org.biounlock.Manager1.Error.*). Messages are English
    /// and for logs; clients show their own (translated) text by name.
    public enum ErrorName: String, CaseIterable, Sendable {
        /// polkit did not authorise the action for the caller (a remote or inactive session; another
        /// user's account without an administrator's authentication).
        case notAuthorized = "NotAuthorized"
        /// A change that needs a fresh proof: call Authenticate first (the Unix password or the
        /// current biounlock passcode, never a finger).
        case authenticationRequired = "AuthenticationRequired"
        case authenticationFailed = "AuthenticationFailed"
        /// Too many failed re-authentications: the message begins with the seconds to wait.
        case tooManyAttempts = "TooManyAttempts"
        case invalidArgument = "InvalidArgument"
        /// The new passcode breaks a rule of its kind (the message says which, in English).
        case invalidPasscode = "InvalidPasscode"
        case noSuchUser = "NoSuchUser"
        case notEnrolled = "NotEnrolled"
        /// The store's record of the name belongs to another account (`biounlock forget`, root).
        case otherAccount = "OtherAccount"
        /// Another call or an enrolment of the caller is in progress, or too many calls at once.
        case busy = "Busy"
        /// The store, the reader, fprintd or polkit could not be used.
        case unavailable = "Unavailable"
        case failed = "Failed"

        public var dbusName: String { ManagerAPI.interface + ".Error." + rawValue }

        public init?(dbusName: String) {
            let prefix = ManagerAPI.interface + ".Error."
            guard dbusName.hasPrefix(prefix) else { return nil }
            self.init(rawValue: String(dbusName.dropFirst(prefix.count)))
        }
    }

    /// What CheckEnable and Enable say stands in the way of turning biometric unlock on.
    public enum Missing: String, CaseIterable, Sendable {
        case noReader = "no-reader"
        case readersUnlisted = "readers-unavailable"
        case fprintdUnavailable = "fprintd-unavailable"
        case noFinger = "no-finger"
        case noPasscode = "no-passcode"
        case otherAccount = "other-account"
    }

    /// Enable's, Disable's and CheckEnable's `service` argument (issue 31). Old clients send ""
    /// or a PAM service name and get what they always got; a leading `@` (which no PAM service
    /// name has: ServiceName) names a group of services, changed in one store transaction with
    /// one audit row naming it (`enabled:@login`).
    public enum Scope: Equatable, Sendable {
        /// "": the user's toggle, which every service without an override of its own follows.
        case toggle
        /// A PAM service name: that service's override.
        case service(String)
        /// "@sudo", "@login": an override for each service of the group (ServiceGroup).
        case group(ServiceGroup)
        /// "@all": everywhere -- the toggle, and every override of the user removed (the settings
        /// app's main switch).
        case everywhere

        public static let groupPrefix = "@"
        public static let everywhereArgument = "@all"

        /// nil: neither "", a PAM service name, nor a known group.
        public init?(argument: String) {
            if argument.isEmpty { self = .toggle; return }
            if argument == Scope.everywhereArgument { self = .everywhere; return }
            if argument.hasPrefix(Scope.groupPrefix) {
                guard let group = ServiceGroup(rawValue: String(argument.dropFirst(Scope.groupPrefix.count))) else { return nil }
                self = .group(group); return
            }
            guard ServiceName.isValid(argument) else { return nil }
            self = .service(argument)
        }

        public var argument: String {
            switch self {
            case .toggle: return ""
            case .service(let name): return name
            case .group(let group): return Scope.groupPrefix + group.rawValue
            case .everywhere: return Scope.everywhereArgument
            }
        }
    }

    /// EnrolRetry's reason.
    public enum RetryCode: String, CaseIterable, Sendable {
        case general, tooShort = "too-short", centerFinger = "center-finger", removeFinger = "remove-finger"
        case differentFinger = "different-finger"
    }

    /// EnrolFinished's result.
    public enum EnrolResult: String, CaseIterable, Sendable {
        case done, failed, cancelled
    }

    /// ResetLockouts' `which`.
    public enum LockoutKind: String, CaseIterable, Sendable {
        case all = "", biometric, passcode
    }

    /// The re-authentication a successful Authenticate grants, bound to the caller's connection.
    public static let grantSeconds: UInt32 = 300
    /// Longest secret read from a descriptor (a passcode's limit, Secret.maximumLength) and the
    /// time the writer gets to send it and close its end.
    public static let secretReadMilliseconds: Int64 = 2000
    /// Longest names and words the service takes.
    public static let maximumNameLength = 256
    /// StartEnrolment's timeout: 0 means this default; at most the maximum.
    public static let defaultEnrolSeconds: UInt32 = 60
    public static let maximumEnrolSeconds: UInt32 = 600
    /// GetEvents' limit: 0 means this default; at most the maximum.
    public static let defaultEventLimit: UInt32 = 50
    public static let maximumEventLimit: UInt32 = 1000
}

/// The package's version (the file VERSION; `ServiceVersionTests` fails when they differ):
/// biounlockd's Version property.
public enum ServiceVersion {
    public static let current = "0.2.0"
}
