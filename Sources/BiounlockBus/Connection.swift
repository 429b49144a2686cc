import CGIO
import BiounlockSystem
import BiounlockServiceProtocol

/// A D-Bus error as a client sees it: its name ("org.biounlock.Manager1.Error.Busy",
/// "org.freedesktop.DBus.Error.ServiceUnknown") and message, or a local failure (no bus).
public struct BusError: Error, Equatable, Sendable, CustomStringConvertible {
    public let name: String
    public let message: String
    public init(name: String, message: String) { self.name = name; self.message = message }
    public var description: String { "\(name): \(message)" }

    /// biounlockd's own error, when it is one.
    public var managerError: ManagerAPI.ErrorName? { ManagerAPI.ErrorName(dbusName: name) }

    /// The service is not there: not installed, not activatable, or it went away mid-call.
    public var serviceMissing: Bool {
        [
            "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
            "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Spawn.ChildExited",
            "org.freedesktop.DBus.Error.Spawn.ExecFailed", "org.freedesktop.DBus.Error.Spawn.Failed",
            "org.freedesktop.DBus.Error.Spawn.ServiceNotFound", "org.freedesktop.DBus.Error.Spawn.PermissionsInvalid",
            "org.freedesktop.DBus.Error.Spawn.FileInvalid", "org.freedesktop.DBus.Error.TimedOut",
            "org.freedesktop.DBus.Error.Disconnected", BusError.noBus,
        ].contains(name) || name.hasPrefix("org.freedesktop.systemd1.")
    }

    /// Not a D-Bus error name: the bus itself could not be reached.
    public static let noBus = "biounlock.NoBus"

    /// Takes a GError (transfer full) from a D-Bus call, keeping the remote error's name.
    static func take(_ error: UnsafeMutablePointer<GError>?, noBus: Bool = false) -> BusError {
        guard let error else { return BusError(name: "org.freedesktop.DBus.Error.Failed", message: "failed without an error") }
        defer { g_error_free(error) }
        var name = noBus ? BusError.noBus : "org.freedesktop.DBus.Error.Failed"
        if let remote = g_dbus_error_get_remote_error(error) {
            name = String(cString: remote)
            g_free(remote)
            _ = g_dbus_error_strip_remote_error(error)
        } else if !noBus, error.pointee.domain == g_io_error_quark() {
            switch error.pointee.code {
            case Int32(G_IO_ERROR_TIMED_OUT.rawValue): name = "org.freedesktop.DBus.Error.TimedOut"
            case Int32(G_IO_ERROR_CLOSED.rawValue): name = "org.freedesktop.DBus.Error.Disconnected"
            default: break
            }
        }
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        return BusError(name: name, message: String(message.prefix(1024)))
    }
}

/// A connection to a message bus (GDBusConnection), for biounlockd and its clients.
public final class BusConnection: @unchecked Sendable {
    /// GDBusConnection*: GDBus's connections are safe to use from any thread.
    public let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }

    /// The system bus (DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket). A closed
    /// bus does not end the process: calls fail instead.
    public static func system() -> Result<BusConnection, BusError> {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SYSTEM, nil, &error) else { return .failure(BusError.take(error, noBus: true)) }
        g_dbus_connection_set_exit_on_close(c, 0)
        return .success(BusConnection(taking: c))
    }

    /// A bus at `address` (tests: a private bus).
    public static func connect(address: String) -> Result<BusConnection, BusError> {
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let c = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            return .failure(BusError.take(error, noBus: true))
        }
        g_dbus_connection_set_exit_on_close(c, 0)
        return .success(BusConnection(taking: c))
    }

    /// Whether the process exits when the bus closes (biounlockd: yes, it has nothing left to
    /// do; clients: no, their call fails and they say so).
    public func exitOnClose(_ yes: Bool) { g_dbus_connection_set_exit_on_close(pointer, yes ? 1 : 0) }

    /// This connection's unique name (":1.42").
    public var uniqueName: String { g_dbus_connection_get_unique_name(pointer).map { String(cString: $0) } ?? "" }

    /// A method call, waiting at most `timeoutMilliseconds` (-1: GDBus's default, 25 s) for
    /// the reply; `descriptors` go along as a GUnixFDList (an `h` argument is an index into
    /// it); `interactive` sets ALLOW_INTERACTIVE_AUTHORIZATION (polkit may ask someone).
    /// Returns the reply's members.
    public func call(_ destination: String, _ path: String, _ interface: String, _ method: String,
                     _ arguments: [BusValue] = [], descriptors: [FileDescriptor] = [], timeoutMilliseconds: Int32 = -1,
                     interactive: Bool = false, autoStart: Bool = true) -> Result<[BusValue], BusError> {
        let parameters = Variants.make(.tuple(arguments))
        let fdList: UnsafeMutablePointer<GUnixFDList>?
        switch BusConnection.fdList(descriptors) {
        case .success(let list): fdList = list
        case .failure(let error):
            g_variant_unref(g_variant_ref_sink(parameters))
            return .failure(error)
        }
        defer { if let fdList { g_object_unref(UnsafeMutableRawPointer(fdList)) } }
        var flags = autoStart ? G_DBUS_CALL_FLAGS_NONE.rawValue : G_DBUS_CALL_FLAGS_NO_AUTO_START.rawValue
        if interactive { flags |= G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION.rawValue }
        var error: UnsafeMutablePointer<GError>?
        var outList: UnsafeMutablePointer<GUnixFDList>?
        let reply = g_dbus_connection_call_with_unix_fd_list_sync(pointer, destination, path, interface, method, parameters, nil,
                                                                  GDBusCallFlags(rawValue: flags), timeoutMilliseconds, fdList,
                                                                  &outList, nil, &error)
        return BusConnection.members(of: reply, outList: outList, error: error)
    }

    /// The descriptors of a call as a GUnixFDList (which holds its own duplicates: the caller
    /// may close its own once the call is sent); nil for none.
    private static func fdList(_ descriptors: [FileDescriptor]) -> Result<UnsafeMutablePointer<GUnixFDList>?, BusError> {
        guard !descriptors.isEmpty else { return .success(nil) }
        let list = g_unix_fd_list_new()
        for d in descriptors {
            var error: UnsafeMutablePointer<GError>?
            if g_unix_fd_list_append(list, d.rawValue, &error) < 0 {
                g_object_unref(UnsafeMutableRawPointer(list))
                return .failure(BusError.take(error))
            }
        }
        return .success(list)
    }

    /// A reply's members (the reply, the descriptors it carried and the error are let go here;
    /// biounlock's methods return no descriptors).
    private static func members(of reply: OpaquePointer?, outList: UnsafeMutablePointer<GUnixFDList>?,
                                error: UnsafeMutablePointer<GError>?) -> Result<[BusValue], BusError> {
        if let outList { g_object_unref(UnsafeMutableRawPointer(outList)) }
        guard let reply else { return .failure(BusError.take(error)) }
        defer { g_variant_unref(reply) }
        guard case .tuple(let members)? = Variants.read(reply) else {
            return .failure(BusError(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "a reply biounlock cannot read"))
        }
        return .success(members)
    }

    private final class Reply {
        let connection: BusConnection
        let completion: (Result<[BusValue], BusError>) -> Void
        init(_ connection: BusConnection, _ completion: @escaping (Result<[BusValue], BusError>) -> Void) {
            self.connection = connection; self.completion = completion
        }
    }

    /// The same call without waiting: `completion` runs later on the thread that runs the
    /// caller's thread-default main context (the settings app: GTK's main loop), so that a
    /// window never blocks while the service works. The connection stays alive until then.
    public func callManagerAsync(_ method: ManagerAPI.Method, _ arguments: [BusValue] = [], descriptors: [FileDescriptor] = [],
                                 timeoutMilliseconds: Int32 = 120_000, interactive: Bool = false,
                                 _ completion: @escaping (Result<[BusValue], BusError>) -> Void) {
        callAsync(ManagerAPI.busName, ManagerAPI.objectPath, ManagerAPI.interface, method.rawValue, arguments, descriptors: descriptors,
                  timeoutMilliseconds: timeoutMilliseconds, interactive: interactive, completion)
    }

    /// Any method call, without waiting (as callManagerAsync).
    public func callAsync(_ destination: String, _ path: String, _ interface: String, _ method: String,
                          _ arguments: [BusValue] = [], descriptors: [FileDescriptor] = [], timeoutMilliseconds: Int32 = -1,
                          interactive: Bool = false, _ completion: @escaping (Result<[BusValue], BusError>) -> Void) {
        let parameters = Variants.make(.tuple(arguments))
        let fdList: UnsafeMutablePointer<GUnixFDList>?
        switch BusConnection.fdList(descriptors) {
        case .success(let list): fdList = list
        case .failure(let error):
            g_variant_unref(g_variant_ref_sink(parameters))
            completion(.failure(error))
            return
        }
        defer { if let fdList { g_object_unref(UnsafeMutableRawPointer(fdList)) } }
        var flags = G_DBUS_CALL_FLAGS_NONE.rawValue
        if interactive { flags |= G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION.rawValue }
        let data = Unmanaged.passRetained(Reply(self, completion)).toOpaque()
        g_dbus_connection_call_with_unix_fd_list(pointer, destination, path, interface, method,
                                                 parameters, nil, GDBusCallFlags(rawValue: flags), timeoutMilliseconds, fdList, nil, { _, result, data in
            guard let data else { return }
            let reply = Unmanaged<Reply>.fromOpaque(data).takeRetainedValue()
            var error: UnsafeMutablePointer<GError>?
            var outList: UnsafeMutablePointer<GUnixFDList>?
            let value = g_dbus_connection_call_with_unix_fd_list_finish(reply.connection.pointer, &outList, result, &error)
            reply.completion(BusConnection.members(of: value, outList: outList, error: error))
        }, data)
    }

    /// A call to biounlockd (ManagerAPI's bus name, path and interface).
    public func callManager(_ method: ManagerAPI.Method, _ arguments: [BusValue] = [], descriptors: [FileDescriptor] = [],
                            timeoutMilliseconds: Int32 = 120_000, interactive: Bool = false) -> Result<[BusValue], BusError> {
        call(ManagerAPI.busName, ManagerAPI.objectPath, ManagerAPI.interface, method.rawValue, arguments,
             descriptors: descriptors, timeoutMilliseconds: timeoutMilliseconds, interactive: interactive)
    }

    // MARK: signals

    private final class SignalHandler {
        let body: (String, [BusValue]) -> Void
        init(_ body: @escaping (String, [BusValue]) -> Void) { self.body = body }
    }

    /// Calls `body(member, arguments)` for each matching signal, on the thread that runs the
    /// default main context (a `MainLoop`). Returns the subscription's id.
    @discardableResult
    public func subscribe(sender: String?, interface: String?, member: String?, path: String?,
                          _ body: @escaping (String, [BusValue]) -> Void) -> UInt32 {
        let handler = Unmanaged.passRetained(SignalHandler(body)).toOpaque()
        return g_dbus_connection_signal_subscribe(pointer, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE, { _, _, _, _, name, parameters, data in
            guard let data, let name, let parameters else { return }
            let handler = Unmanaged<SignalHandler>.fromOpaque(data).takeUnretainedValue()
            guard case .tuple(let members)? = Variants.read(parameters) else { return }
            handler.body(String(cString: name), members)
        }, handler, { data in
            if let data { Unmanaged<SignalHandler>.fromOpaque(data).release() }
        })
    }

    public func unsubscribe(_ id: UInt32) { g_dbus_connection_signal_unsubscribe(pointer, id) }

    /// Sends what is queued (before a process exits).
    public func flush() { _ = g_dbus_connection_flush_sync(pointer, nil, nil) }
}

/// GLib's default main loop, for a client waiting for signals (the CLI's enrolment) and for
/// biounlockd.
public final class MainLoop {
    let loop: OpaquePointer
    public init() { loop = g_main_loop_new(nil, 0) }
    deinit { g_main_loop_unref(loop) }
    public func run() { g_main_loop_run(loop) }
    public func quit() { g_main_loop_quit(loop) }

    private final class Callback {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
    }

    /// Calls `body` every `milliseconds` on the loop's thread while it returns true.
    @discardableResult
    public static func every(milliseconds: UInt32, _ body: @escaping () -> Bool) -> UInt32 {
        let data = Unmanaged.passRetained(Callback(body)).toOpaque()
        return g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, { data in
            guard let data else { return 0 }
            return Unmanaged<Callback>.fromOpaque(data).takeUnretainedValue().body() ? 1 : 0
        }, data, { data in
            if let data { Unmanaged<Callback>.fromOpaque(data).release() }
        })
    }

    /// Calls `body` on the loop's thread when `signal` (SIGINT, SIGTERM, SIGHUP) arrives,
    /// while it returns true (g_unix_signal_add: no handler code of ours runs in the signal).
    @discardableResult
    public static func onSignal(_ signal: Int32, _ body: @escaping () -> Bool) -> UInt32 {
        let data = Unmanaged.passRetained(Callback(body)).toOpaque()
        return g_unix_signal_add_full(G_PRIORITY_DEFAULT, signal, { data in
            guard let data else { return 0 }
            return Unmanaged<Callback>.fromOpaque(data).takeUnretainedValue().body() ? 1 : 0
        }, data, { data in
            if let data { Unmanaged<Callback>.fromOpaque(data).release() }
        })
    }
}
