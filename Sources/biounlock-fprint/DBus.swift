import CFPrint
import BiounlockFprintProtocol

// GDBus and GVariant, wrapped the way GLib.swift wraps libfprint: each owning wrapper frees its
// C object exactly once, every D-Bus error becomes the protocol's FprintFailure here, and nothing
// above this file sees a GError or a GVariant pointer. Only biounlock-fprint links GIO: the PAM
// module never loads D-Bus or GLib into its host.

/// A GVariant we own one reference to (g_variant_unref on deinit).
final class Variant {
    let pointer: OpaquePointer

    /// Takes over a reference the caller owns (transfer full); a floating one is sunk.
    init(taking pointer: OpaquePointer) { self.pointer = g_variant_take_ref(pointer) }

    deinit { g_variant_unref(pointer) }

    /// The GVariant type string ("s", "(ao)", …).
    var type: String { string(g_variant_get_type_string(pointer)) }

    var count: Int { Int(clamping: g_variant_n_children(pointer)) }

    /// Child `index` of a container, or nil when there is none.
    func child(_ index: Int) -> Variant? {
        guard index >= 0, index < count, let c = g_variant_get_child_value(pointer, gsize(index)) else { return nil }
        return Variant(taking: c)
    }

    /// The value inside a "v".
    var unboxed: Variant? {
        guard type == "v", let inner = g_variant_get_variant(pointer) else { return nil }
        return Variant(taking: inner)
    }

    /// A string ("s" or "o"), or nil for any other type.
    var text: String? {
        guard type == "s" || type == "o" else { return nil }
        return string(g_variant_get_string(pointer, nil))
    }

    var bool: Bool? { type == "b" ? g_variant_get_boolean(pointer) != 0 : nil }
    var int32: Int32? { type == "i" ? g_variant_get_int32(pointer) : nil }

    /// The strings of an "as" or "ao", at most `limit` of them.
    func strings(limit: Int) -> [String]? {
        guard type == "as" || type == "ao" else { return nil }
        var out: [String] = []
        for i in 0..<min(count, limit) { if let s = child(i)?.text { out.append(s) } }
        return out
    }

    /// A tuple of strings, as method arguments (floating: the call consumes it).
    static func tuple(_ strings: [String]) -> OpaquePointer? {
        var children: [OpaquePointer?] = strings.map { g_variant_new_string($0) }
        return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }
}

/// The D-Bus error name of a GError from a method call ("net.reactivated.Fprint.Error.AlreadyInUse").
func remoteErrorName(_ error: UnsafeMutablePointer<GError>) -> String? {
    guard let name = g_dbus_error_get_remote_error(error) else { return nil }
    defer { g_free(name) }
    return String(cString: name)
}

/// Error names fprintd and the bus answer with, and what each means for biounlock.
enum FprintdErrors {
    static let alreadyInUse = "net.reactivated.Fprint.Error.AlreadyInUse"
    static let noEnrolledPrints = "net.reactivated.Fprint.Error.NoEnrolledPrints"
    static let permissionDenied = "net.reactivated.Fprint.Error.PermissionDenied"
    static let noActionInProgress = "net.reactivated.Fprint.Error.NoActionInProgress"
    /// fprintd is not running and cannot be started by the bus.
    static let notRunning: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
        "org.freedesktop.DBus.Error.Spawn.ServiceNotFound", "org.freedesktop.DBus.Error.Spawn.Failed",
        "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.NoReply",
    ]

    /// Turns a GError of a D-Bus call (transfer full) into the protocol's failure and frees it.
    /// Security choice: every one of these is "unavailable" upstream (fall back at once), except
    /// NoEnrolledPrints, which is "nothing enrolled" -- never a failed match, never a success.
    static func failure(_ error: UnsafeMutablePointer<GError>?, context: String) -> FprintFailure {
        guard let error else { return FprintFailure(.other, "\(context): failed without an error") }
        defer { g_error_free(error) }
        let name = remoteErrorName(error)
        if name != nil { _ = g_dbus_error_strip_remote_error(error) }
        let message = "\(context): \(error.pointee.message.map { String(cString: $0) } ?? "unknown error")"
        if name == nil, error.pointee.domain == g_io_error_quark() {
            return FprintFailure(.other, domain: .io, code: error.pointee.code, message)
        }
        return failure(name: name, message: message)
    }

    /// The failure for a D-Bus error reply `name` (from a GError, or an error message the inbox saw).
    static func failure(name: String?, message: String) -> FprintFailure {
        switch name {
        case alreadyInUse?:
            // FP_DEVICE_ERROR_BUSY: the same "busy" libfprint itself reports.
            return FprintFailure(.device, domain: .device, code: Int32(FP_DEVICE_ERROR_BUSY.rawValue),
                                 "\(message) (another fprintd client holds the reader)")
        case noEnrolledPrints?:
            return FprintFailure(.noUsablePrint, message)
        case permissionDenied?:
            return FprintFailure(.other, "\(message) (polkit did not authorise it)")
        case let n? where notRunning.contains(n):
            return FprintFailure(.noReader, "\(message) (fprintd is not running)")
        default:
            return FprintFailure(.other, message)
        }
    }
}

/// What GDBus's worker thread saw of fprintd, in the order the messages arrived.
///
/// Security choice: this order decides which statuses belong to a verification, and GLib's
/// main-context dispatch does not keep it (a method reply takes more hops than a signal). A
/// message filter runs on the worker thread for every incoming message, in arrival order; it
/// keeps only the replies it was told to expect and signals whose sender the bus stamped as
/// fprintd's unique name, on the claimed device's path. It is the only code that runs on that
/// thread; everything it shares is behind one mutex.
final class Inbox {
    enum Event: Equatable {
        /// The reply to an expected call (an error name and text when it failed).
        case reply(UInt32, String?, String)
        case verifyStatus(String, Bool)
        case fingerSelected(String)
        case enrollStatus(String, Bool)
        /// NameOwnerChanged for fprintd's name: its new owner ("" when it quit).
        case ownerChanged(String)
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var events: [Event] = []
    private var expected: Set<UInt32> = []
    private var owner = ""
    private(set) var device = ""
    /// Bounded: a flood of signals cannot grow the helper without end.
    static let limit = 256

    init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    /// Whose signals count, and on which object path.
    func watch(owner: String, device: String) {
        locked { self.owner = owner; self.device = device }
    }

    /// Runs `send` (which returns the call's serial) with the inbox locked, so that the worker
    /// thread cannot see the reply before the serial is expected.
    func expectingReply(_ send: () -> UInt32?) -> UInt32? {
        locked {
            let serial = send()
            if let serial { expected.insert(serial) }
            return serial
        }
    }

    /// Everything queued so far, oldest first.
    func take() -> [Event] {
        locked {
            defer { events = [] }
            return events
        }
    }

    private func push(_ event: Event) {
        if events.count < Inbox.limit { events.append(event) }
        // Wakes the helper's main loop if it waits (a harmless extra iteration otherwise).
        g_main_context_wakeup(nil)
    }

    /// Called by the filter on the worker thread, for each incoming message (transfer none here).
    func see(_ message: OpaquePointer) {
        let type = g_dbus_message_get_message_type(message)
        if type == G_DBUS_MESSAGE_TYPE_METHOD_RETURN || type == G_DBUS_MESSAGE_TYPE_ERROR {
            let serial = g_dbus_message_get_reply_serial(message)
            locked {
                guard expected.remove(serial) != nil else { return }
                if type == G_DBUS_MESSAGE_TYPE_ERROR {
                    let name = string(g_dbus_message_get_error_name(message))
                    var text = ""
                    if let body = g_dbus_message_get_body(message) {
                        text = Variant(taking: g_variant_ref(body)).child(0)?.text.map { String($0.prefix(512)) } ?? ""
                    }
                    push(.reply(serial, name.isEmpty ? "org.freedesktop.DBus.Error.Failed" : name, text))
                } else {
                    push(.reply(serial, nil, ""))
                }
            }
            return
        }
        guard type == G_DBUS_MESSAGE_TYPE_SIGNAL else { return }
        let sender = string(g_dbus_message_get_sender(message))
        let path = string(g_dbus_message_get_path(message))
        let interface = string(g_dbus_message_get_interface(message))
        let member = string(g_dbus_message_get_member(message))
        guard let body = g_dbus_message_get_body(message) else { return }
        let arguments = Variant(taking: g_variant_ref(body))
        locked {
            if sender == "org.freedesktop.DBus", interface == "org.freedesktop.DBus", member == "NameOwnerChanged" {
                if arguments.type == "(sss)", arguments.child(0)?.text == FprintdSession.busName {
                    push(.ownerChanged(arguments.child(2)?.text ?? ""))
                }
                return
            }
            // Only fprintd itself, only the claimed device: the bus stamps the true sender.
            guard !owner.isEmpty, sender == owner, !device.isEmpty, path == device,
                  interface == FprintdSession.deviceInterface else { return }
            switch (member, arguments.type) {
            case ("VerifyStatus", "(sb)"):
                if let r = arguments.child(0)?.text, let d = arguments.child(1)?.bool { push(.verifyStatus(String(r.prefix(64)), d)) }
            case ("VerifyFingerSelected", "(s)"):
                if let f = arguments.child(0)?.text { push(.fingerSelected(String(f.prefix(64)))) }
            case ("EnrollStatus", "(sb)"):
                if let r = arguments.child(0)?.text, let d = arguments.child(1)?.bool { push(.enrollStatus(String(r.prefix(64)), d)) }
            default:
                break
            }
        }
    }
}
