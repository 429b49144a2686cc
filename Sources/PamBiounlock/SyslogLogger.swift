import BiounlockCore
import BiounlockSystem
import CPAM

/// Logs through pam_syslog (facility authpriv, prefixed with the module and service names).
/// Callers never pass secrets or templates; text is sent as a "%s" argument, never a format.
final class SyslogLogger: Logger {
    let pamh: OpaquePointer
    var debugEnabled = false

    init(_ pamh: OpaquePointer) { self.pamh = pamh }

    func log(_ level: LogLevel, _ message: String) {
        let priority: SystemLog.Priority
        switch level {
        case .error: priority = .error
        case .warning: priority = .warning
        case .notice: priority = .notice
        case .info: priority = .info
        case .debug:
            guard debugEnabled else { return }
            priority = .debug
        }
        biounlock_pam_syslog(pamh, priority.rawValue, message)
    }
}
