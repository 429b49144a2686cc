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
            if error.pointee.domain == g_io_error_quark() {
                return FprintFailure(.other, domain: .io, code: error.pointee.code, message)
            }
            return FprintFailure(.other, message)
        }
    }
}
