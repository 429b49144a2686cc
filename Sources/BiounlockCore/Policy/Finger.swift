/// Fingers, named as fprintd names them (`right-index-finger`); short forms (`right-index`)
/// are accepted on input. Raw values match libfprint's FpFinger numbers.
public enum Finger: Int, CaseIterable, Sendable {
    case leftThumb = 1, leftIndex, leftMiddle, leftRing, leftLittle
    case rightThumb, rightIndex, rightMiddle, rightRing, rightLittle

    public var name: String {
        switch self {
        case .leftThumb: return "left-thumb"
        case .leftIndex: return "left-index-finger"
        case .leftMiddle: return "left-middle-finger"
        case .leftRing: return "left-ring-finger"
        case .leftLittle: return "left-little-finger"
        case .rightThumb: return "right-thumb"
        case .rightIndex: return "right-index-finger"
        case .rightMiddle: return "right-middle-finger"
        case .rightRing: return "right-ring-finger"
        case .rightLittle: return "right-little-finger"
        }
    }

    /// Accepts `right-index-finger`, `right-index`, and `right-thumb`.
    public init?(name: String) {
        guard let match = Finger.allCases.first(where: { $0.name == name || $0.name == name + "-finger" }) else {
            return nil
        }
        self = match
    }

    public static let `default` = Finger.rightIndex
}

/// How a transaction was decided.
public enum AuthMethod: String, Sendable {
    case fingerprint, passcode
    /// A face seen by the camera (biounlock-face): a second biometric, under the finger's rules.
    case face
    /// The Unix password, checked by the next module and seen afterwards in pam_sm_setcred.
    case password
    case none
}
