import CFPrint
import BiounlockFprintProtocol

// The only place where GLib's ownership rules and errors are handled. Each owning wrapper frees
// its C object exactly once (deinit); nothing above this file sees a GError.

/// A strong reference to a GObject (g_object_unref on deinit).
final class GObjectRef {
    let pointer: gpointer

    /// Takes over a reference the caller owns (transfer full).
    init(taking pointer: gpointer) { self.pointer = pointer }

    /// Adds a reference to an object the caller does not own (transfer none).
    init(retaining pointer: gpointer) { self.pointer = g_object_ref(pointer) }

    /// Sinks a floating reference (fp_print_new returns one) or adds a reference.
    init(sinking pointer: gpointer) { self.pointer = g_object_ref_sink(pointer) }

    deinit { g_object_unref(pointer) }

    var print: OpaquePointer { OpaquePointer(pointer) }
}

/// Turns a GError (transfer full) into the protocol's failure and frees it.
/// Device errors keep their FpDeviceError code, retries their FpDeviceRetry code.
func takeError(_ error: UnsafeMutablePointer<GError>?, kind: FprintFailure.Kind = .device, context: String) -> FprintFailure {
    guard let error else { return FprintFailure(.other, "\(context): failed without an error") }
    defer { g_error_free(error) }
    let domain: FprintFailure.Domain
    switch error.pointee.domain {
    case fp_device_error_quark(): domain = .device
    case fp_device_retry_quark(): domain = .retry
    case g_io_error_quark(): domain = .io
    default: domain = .other
    }
    let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    return FprintFailure(kind, domain: domain, code: error.pointee.code, "\(context): \(message)")
}

/// Whether a GError is G_IO_ERROR_CANCELLED (our timer or a vanished peer cancelled the call).
func isCancelled(_ error: UnsafeMutablePointer<GError>?) -> Bool {
    guard let error else { return false }
    return error.pointee.domain == g_io_error_quark() && error.pointee.code == Int32(G_IO_ERROR_CANCELLED.rawValue)
}

func isRetry(_ error: UnsafeMutablePointer<GError>?) -> Bool {
    guard let error else { return false }
    return error.pointee.domain == fp_device_retry_quark()
}

func string(_ p: UnsafePointer<gchar>?) -> String {
    p.map { String(cString: $0) } ?? ""
}

/// One libfprint operation's cancellation: a GCancellable cancelled by a timer on the default
/// main context (which the _sync call itself iterates) or when the peer hangs up.
///
/// Security choice: the helper runs each _sync call on its main thread, which owns the global
/// default GMainContext and no other; no second thread exists. The timer and the hang-up watch
/// are removed before the operation's result is used.
final class Cancellation {
    let cancellable: UnsafeMutablePointer<GCancellable>
    private var timer: guint = 0
    private var watch: guint = 0
    private(set) var timedOut = false
    private(set) var peerGone = false
    /// The peer sent something (a new request) while the operation waited (`wakeOnInput`).
    private(set) var inputPending = false

    init(timeoutMilliseconds: UInt32, peer: Int32, wakeOnInput: Bool = false) {
        cancellable = g_cancellable_new()
        let me = Unmanaged.passUnretained(self).toOpaque()
        timer = g_timeout_add(max(timeoutMilliseconds, 1), { data in
            guard let data else { return gboolean(0) }
            let c = Unmanaged<Cancellation>.fromOpaque(data).takeUnretainedValue()
            c.timer = 0
            c.timedOut = true
            g_cancellable_cancel(c.cancellable)
            return gboolean(0) // G_SOURCE_REMOVE
        }, me)
        let conditions = GIOCondition(rawValue: G_IO_HUP.rawValue | G_IO_ERR.rawValue | (wakeOnInput ? G_IO_IN.rawValue : 0))
        watch = g_unix_fd_add(peer, conditions, { _, condition, data in
            guard let data else { return gboolean(0) }
            let c = Unmanaged<Cancellation>.fromOpaque(data).takeUnretainedValue()
            c.watch = 0
            if condition.rawValue & (G_IO_HUP.rawValue | G_IO_ERR.rawValue) != 0 { c.peerGone = true } else { c.inputPending = true }
            g_cancellable_cancel(c.cancellable)
            return gboolean(0)
        }, me)
    }

    /// Removes the timer and the watch (call before dropping the object: their callbacks hold
    /// an unretained pointer to it).
    func finish() {
        if timer != 0 { g_source_remove(timer); timer = 0 }
        if watch != 0 { g_source_remove(watch); watch = 0 }
    }

    deinit {
        finish()
        g_object_unref(cancellable)
    }
}
