import CPAM
import Glibc
import BiounlockCore

/// Logs through pam_syslog (facility authpriv, prefixed with the module and service names).
/// Callers never pass secrets or templates; text is sent as a "%s" argument, never a format.
final class SyslogLogger: Logger {
    let pamh: OpaquePointer
    var debugEnabled = false

    init(_ pamh: OpaquePointer) { self.pamh = pamh }

    func log(_ level: LogLevel, _ message: String) {
        let priority: Int32
        switch level {
        case .error: priority = LOG_ERR
        case .warning: priority = LOG_WARNING
        case .notice: priority = LOG_NOTICE
        case .info: priority = LOG_INFO
        case .debug:
            guard debugEnabled else { return }
            priority = LOG_DEBUG
        }
        biounlock_pam_syslog(pamh, priority, message)
    }
}
