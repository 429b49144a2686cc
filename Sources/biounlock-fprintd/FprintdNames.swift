import BiounlockDBus
import BiounlockFprintProtocol
import BiounlockSystem

/// fprintd's names for libfprint's finger numbers (1 = left thumb … 10 = right little).
let fprintdFingerNames = [
    "left-thumb", "left-index-finger", "left-middle-finger", "left-ring-finger", "left-little-finger",
    "right-thumb", "right-index-finger", "right-middle-finger", "right-ring-finger", "right-little-finger",
]

func fprintdFingerName(_ number: UInt8) -> String? {
    let index = Int(number) - 1
    return fprintdFingerNames.indices.contains(index) ? fprintdFingerNames[index] : nil
}

func fprintdFingerNumber(_ name: String) -> UInt8? {
    fprintdFingerNames.firstIndex(of: name).map { UInt8($0 + 1) }
}

/// libfprint's FpDeviceError and FpDeviceRetry codes (fp-device.h), which the helper protocol
/// carries for fprintd's answers as for libfprint's own: this helper links no libfprint.
enum DeviceCode {
    static let general: Int32 = 0
    static let busy: Int32 = 4
    static let dataFull: Int32 = 8
    static let dataDuplicate: Int32 = 9
    static let removed: Int32 = 0x100
    static let retryGeneral = 0, retryTooShort = 1, retryCenterFinger = 2, retryRemoveFinger = 3
}

/// Error names fprintd and the bus answer with, and what each means for biounlock.
enum FprintdErrors {
    static let alreadyInUse = "net.reactivated.Fprint.Error.AlreadyInUse"
    static let noEnrolledPrints = "net.reactivated.Fprint.Error.NoEnrolledPrints"
    static let permissionDenied = "net.reactivated.Fprint.Error.PermissionDenied"
    /// fprintd is not running and cannot be started by the bus.
    static let notRunning: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
        "org.freedesktop.DBus.Error.Spawn.ServiceNotFound", "org.freedesktop.DBus.Error.Spawn.Failed",
        "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.NoReply",
    ]

    /// The failure for a D-Bus error reply `name` with its `message`.
    /// Security choice: every one of these is "unavailable" upstream (fall back at once), except
    /// NoEnrolledPrints, which is "nothing enrolled" -- never a failed match, never a success.
    static func failure(name: String, message: String) -> FprintFailure {
        switch name {
        case alreadyInUse:
            // FP_DEVICE_ERROR_BUSY: the same "busy" libfprint itself reports.
            return FprintFailure(.device, domain: .device, code: DeviceCode.busy, "\(message) (another fprintd client holds the reader)")
        case noEnrolledPrints:
            return FprintFailure(.noUsablePrint, message)
        case permissionDenied:
            return FprintFailure(.other, "\(message) (polkit did not authorise it)")
        case let n where notRunning.contains(n):
            return FprintFailure(.noReader, "\(message) (fprintd is not running)")
        default:
            return FprintFailure(.other, message)
        }
    }
}
