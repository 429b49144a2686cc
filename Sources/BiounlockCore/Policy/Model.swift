import BiounlockSystem

// What biounlock keeps: a user's row, their prints and face, the passcode, the audit log's rows.
// The store (BiounlockStore) persists them; the policy chain reads and updates them through
// AuthStore (Interfaces.swift).

/// One enrolled fingerprint.
public struct Template: Equatable, Sendable {
    public var finger: Finger
    public var sensor: SensorKind
    /// Backend data: the touched id for the simulated sensor, a serialized FP3 print for libfprint.
    public var data: [UInt8]
    /// Reader driver and device id the print was taken on (empty for the simulated sensor).
    public var driver: String
    public var device: String
    public var created: Int64

    public init(finger: Finger, sensor: SensorKind, data: [UInt8], driver: String = "", device: String = "", created: Int64) {
        self.finger = finger; self.sensor = sensor; self.data = data
        self.driver = driver; self.device = device; self.created = created
    }
}

/// A stored passcode: the Argon2id encoding and its kind. Never printed or logged.
public struct StoredPasscode: Equatable, Sendable {
    public var hash: String
    public var kind: PasscodeKind
    public init(hash: String, kind: PasscodeKind) { self.hash = hash; self.kind = kind }
}

/// What the store knows about one user.
public struct UserRecord: Equatable, Sendable {
    public var name: String
    /// The user's "biometric unlock" toggle (off by default).
    public var enabled: Bool
    /// Per-service overrides of `enabled`, keyed by PAM service name.
    public var serviceOverrides: [String: Bool]
    public var templates: [Template]
    /// The enrolled face, read only when the face may be used in this transaction (face=on, a
    /// person at the terminal or a face_dialog_services service): AuthStore.faceTemplates.
    public var faceTemplates: [FaceTemplate] = []
    public var passcode: StoredPasscode?
    public var biometricFailures: Int
    public var passcodeFailures: Int
    public var lastSuccess: Int64?
    public var lastFailure: Int64?
    /// When the last failed match / wrong passcode happened (lockout clocks start there).
    public var biometricFailureAt: Int64?
    public var passcodeFailureAt: Int64?
    /// The last time the user proved themselves with the passcode (or, under policy=biometrics,
    /// the password), the boot it happened in, and the enrolled set it saw.
    public var passcodeSuccessAt: Int64?
    public var passcodeBootID: String?
    /// The boot in which the Unix password last proved the user (PasswordWitness; not the
    /// passcode): at login services the rule "after a restart" asks for it (issue 32).
    public var passwordBootID: String?
    public var passcodeEnrolmentVersion: Int64?
    /// Bumped by every change of the enrolled set (enrol, re-enrol, unenrol; under sensor=fprintd
    /// also a change made in fprintd, seen through `fprintdPrints`).
    public var enrolmentVersion: Int64 = 0
    /// sensor=fprintd: the prints fprintd held for the user when biounlock last looked
    /// (FprintdPrints' text), nil when it never did.
    public var fprintdPrints: String?
    /// The account the row belongs to. A name is only a key: after an account is deleted, NSS
    /// may give its name to a new account (another uid), which must not inherit the old fingers
    /// and passcode. nil: bound to no account (a row from before the binding whose name was no
    /// account then, or a damaged value). See AccountBinding.
    public var uid: UInt32?

    public init(name: String, enabled: Bool = false, serviceOverrides: [String: Bool] = [:], templates: [Template] = [],
                passcode: StoredPasscode? = nil, biometricFailures: Int = 0, passcodeFailures: Int = 0,
                lastSuccess: Int64? = nil, lastFailure: Int64? = nil) {
        self.name = name; self.enabled = enabled; self.serviceOverrides = serviceOverrides
        self.templates = templates; self.passcode = passcode
        self.biometricFailures = biometricFailures; self.passcodeFailures = passcodeFailures
        self.lastSuccess = lastSuccess; self.lastFailure = lastFailure
    }

    /// Whether biometric unlock applies to `service`: its override if any, else the user's toggle.
    public func isEnabled(for service: String) -> Bool {
        serviceOverrides[service] ?? enabled
    }

    /// Whether biometric unlock applies to some service: the toggle, or an override that turns it on.
    public var isEnabledForAnyService: Bool {
        enabled || serviceOverrides.values.contains(true)
    }
}

/// One row of the audit log. Holds no secret and no template.
public struct AuditEvent: Equatable, Sendable {
    public var time: Int64
    public var user: String
    public var service: String
    public var tty: String
    public var rhost: String
    public var method: AuthMethod
    public var outcome: String
    public var reason: String

    public init(time: Int64, user: String, service: String, tty: String, rhost: String, method: AuthMethod, outcome: String, reason: String) {
        self.time = time; self.user = user; self.service = service; self.tty = tty
        self.rhost = rhost; self.method = method; self.outcome = outcome; self.reason = reason
    }
}

/// One enrolled face: descriptors taken by biounlock-face (BiounlockFaceProtocol's
/// FaceTemplateData), kept in the store's templates table with sensor `face`.
public struct FaceTemplate: Equatable, Sendable {
    public var data: [UInt8]
    /// The camera it was taken with (V4L2 card and path, or the simulated camera).
    public var camera: String
    public var created: Int64
    public init(data: [UInt8], camera: String, created: Int64) { self.data = data; self.camera = camera; self.created = created }
}
