import CGIO
import Synchronization
import BiounlockSystem
import BiounlockCore
import BiounlockService
import BiounlockServiceProtocol
import BiounlockBus

/// The GDBus side of biounlockd: registers the object, takes the name, hands each call to a
/// pool thread (which asks the bus who called and runs the handler), sends the handlers'
/// signals, notices clients leaving, and leaves when idle. Decisions live in BiounlockService.
///
/// Security choices:
/// - the caller's uid is the bus daemon's (GetConnectionCredentials of the message's sender,
///   which the bus daemon stamps); no argument names the caller;
/// - GDBus checks every call's argument types against the introspection data before it reaches
///   us (InvalidArgs otherwise), and the bus daemon rejects strings that are not UTF-8;
/// - a flood is answered Busy at once, from the main thread, before anything is queued: at most
///   CallLimits' calls run or wait, per connection, per user and in all;
/// - descriptors are taken from a message only at the index an `h` argument names (a dup each,
///   closed after the call, whatever happened); the message's others close with it.
final class Server: @unchecked Sendable {
    let connection: BusConnection
    let manager: Manager
    let idleMilliseconds: Int64
    let logger: ServiceLogger
    let loop = MainLoop()
    private var pool: UnsafeMutablePointer<GThreadPool>?
    private var vtable: UnsafeMutablePointer<GDBusInterfaceVTable>?
    private var nodeInfo: UnsafeMutablePointer<GDBusNodeInfo>?
    /// Who each connection is (the bus does not change it while the connection lives).
    private let credentials = Mutex<[String: (uid: UInt32, pid: UInt32)]>([:])

    init(connection: BusConnection, manager: Manager, idleMilliseconds: Int64, logger: ServiceLogger) {
        self.connection = connection; self.manager = manager; self.idleMilliseconds = idleMilliseconds; self.logger = logger
    }

    /// One call on its way to a pool thread.
    final class PendingCall {
        let invocation: OpaquePointer
        let sender: String
        let method: String
        let arguments: [BusValue]
        let descriptors: [Int32: FileDescriptor]
        let interactive: Bool
        init(invocation: OpaquePointer, sender: String, method: String, arguments: [BusValue],
             descriptors: [Int32: FileDescriptor], interactive: Bool) {
            self.invocation = invocation; self.sender = sender; self.method = method; self.arguments = arguments
            self.descriptors = descriptors; self.interactive = interactive
        }
    }

    // MARK: start

    func start() -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let info = g_dbus_node_info_new_for_xml(ManagerInterface.xml, &error), info.pointee.interfaces?[0] != nil else {
            logger.log(.error, "the interface description does not parse: \(BusErrorText.take(error))")
            return false
        }
        nodeInfo = info
        let me = Unmanaged.passUnretained(self).toOpaque()
        // Exclusive: the pool's threads start now and live as long as the service. The workers
        // are started from them with PR_SET_PDEATHSIG, which fires when the *thread* that
        // started a worker ends -- a pool thread retired after being idle killed an enrolment
        // in the middle (seen in Tests/EndToEnd/service.sh before this).
        pool = g_thread_pool_new({ data, context in
            guard let data, let context else { return }
            let server = Unmanaged<Server>.fromOpaque(context).takeUnretainedValue()
            server.run(Unmanaged<PendingCall>.fromOpaque(data).takeRetainedValue())
        }, me, 4, 1, &error)
        guard pool != nil else {
            logger.log(.error, "cannot start the worker threads: \(BusErrorText.take(error))")
            return false
        }
        let table = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        table.initialize(to: GDBusInterfaceVTable())
        table.pointee.method_call = { _, sender, _, _, method, parameters, invocation, context in
            guard let context, let invocation else { return }
            Unmanaged<Server>.fromOpaque(context).takeUnretainedValue()
                .receive(sender: sender, method: method, parameters: parameters, invocation: invocation)
        }
        table.pointee.get_property = { _, _, _, _, property, _, _ in
            guard let property, String(cString: property) == "Version" else { return nil }
            return g_variant_new_string(ServiceVersion.current)
        }
        vtable = table
        guard let interface = info.pointee.interfaces?[0],
              g_dbus_connection_register_object(connection.pointer, ManagerAPI.objectPath, interface, table, me, nil, &error) != 0 else {
            logger.log(.error, "cannot register \(ManagerAPI.objectPath): \(BusErrorText.take(error))")
            return false
        }
        // Clients that leave lose their grant and their enrolment.
        connection.subscribe(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                             path: "/org/freedesktop/DBus") { [weak self] _, arguments in
            guard let self, arguments.count == 3, let name = arguments[0].string, name.hasPrefix(":"),
                  arguments[2].string == "" else { return }
            _ = self.credentials.withLock { $0.removeValue(forKey: name) }
            self.manager.connectionClosed(name)
        }
        // The name last, once the object answers: DO_NOT_QUEUE (4); 1 is "primary owner".
        switch connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                               [.string(ManagerAPI.busName), .uint32(4)]) {
        case .success(let reply) where reply.first?.uint32 == 1: break
        case .success(let reply):
            logger.log(.error, "\(ManagerAPI.busName) is owned by someone else (RequestName answered \(reply.first?.uint32 ?? 0))")
            return false
        case .failure(let e):
            logger.log(.error, "cannot own \(ManagerAPI.busName): \(e)")
            return false
        }
        MainLoop.every(milliseconds: 1000) { [weak self] in
            guard let self else { return false }
            if self.manager.isIdle(for: self.idleMilliseconds) && g_thread_pool_unprocessed(self.pool) == 0 {
                self.logger.log(.info, "idle: leaving")
                self.loop.quit()
                return false
            }
            return true
        }
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            MainLoop.onSignal(signal) { [weak self] in self?.loop.quit(); return false }
        }
        return true
    }

    func run() {
        loop.run()
        // The name goes first, so that the next call activates a new instance instead of
        // reaching this one while it leaves.
        _ = connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReleaseName",
                            [.string(ManagerAPI.busName)], timeoutMilliseconds: 5000)
        if let pool { g_thread_pool_free(pool, 0, 1) } // calls already queued are answered first
        connection.flush()
    }

    // MARK: the main thread: admission

    func receive(sender: UnsafePointer<gchar>?, method: UnsafePointer<gchar>?, parameters: OpaquePointer?, invocation: OpaquePointer) {
        let senderName = sender.map { String(cString: $0) } ?? ""
        let methodName = method.map { String(cString: $0) } ?? ""
        guard !senderName.isEmpty, manager.admit(connection: senderName) else {
            g_dbus_method_invocation_return_dbus_error(invocation, ManagerAPI.ErrorName.busy.dbusName, "too many calls at once")
            return
        }
        var arguments: [BusValue] = []
        if let parameters, case .tuple(let members)? = Variants.read(parameters) { arguments = members }
        let message = g_dbus_method_invocation_get_message(invocation)
        var descriptors: [Int32: FileDescriptor] = [:]
        if let message, let list = g_dbus_message_get_unix_fd_list(message) {
            let count = g_unix_fd_list_get_length(list)
            for case .handle(let index) in arguments where index >= 0 && index < count && descriptors[index] == nil {
                var error: UnsafeMutablePointer<GError>?
                let fd = g_unix_fd_list_get(list, index, &error) // a dup, close-on-exec
                if fd >= 0 { descriptors[index] = FileDescriptor(rawValue: fd) } else { g_error_free(error) }
            }
        }
        let interactive = message.map { g_dbus_message_get_flags($0).rawValue & G_DBUS_MESSAGE_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION.rawValue != 0 } ?? false
        let call = PendingCall(invocation: invocation, sender: senderName, method: methodName, arguments: arguments,
                               descriptors: descriptors, interactive: interactive)
        var error: UnsafeMutablePointer<GError>?
        if g_thread_pool_push(pool, Unmanaged.passRetained(call).toOpaque(), &error) == 0 {
            Unmanaged.passUnretained(call).release()
            g_error_free(error)
            finish(call, .error(.busy, "cannot queue the call"))
        }
    }

    // MARK: a pool thread: who, then the handler

    func run(_ call: PendingCall) {
        guard let who = identify(call.sender) else {
            finish(call, .error(.failed, "the bus could not say who called"))
            return
        }
        let caller = Caller(busName: call.sender, uid: who.uid, pid: who.pid, allowsInteraction: call.interactive)
        finish(call, manager.serve(MethodCall(method: call.method, arguments: call.arguments, descriptors: call.descriptors, caller: caller)))
    }

    /// The caller's uid and pid from the bus daemon (GetConnectionCredentials), once per connection.
    func identify(_ sender: String) -> (uid: UInt32, pid: UInt32)? {
        if let known = credentials.withLock({ $0[sender] }) { return known }
        guard case .success(let reply) = connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                         "GetConnectionCredentials", [.string(sender)], timeoutMilliseconds: 10_000),
              let fields = reply.first?.fields, let uid = fields["UnixUserID"]?.uint32 else { return nil }
        let who = (uid: uid, pid: fields["ProcessID"]?.uint32 ?? 0)
        credentials.withLock { $0[sender] = who }
        return who
    }

    /// Answers the call (GDBus's return functions take the invocation and are safe from any
    /// thread), closes its descriptors, counts it out.
    func finish(_ call: PendingCall, _ reply: MethodReply) {
        switch reply {
        case .values(let values):
            g_dbus_method_invocation_return_value(call.invocation, Variants.make(.tuple(values)))
        case .error(let name, let message):
            g_dbus_method_invocation_return_dbus_error(call.invocation, name.dbusName, message)
        }
        for fd in call.descriptors.values { fd.close() }
        manager.done(connection: call.sender)
    }

    /// Sends a handler's signal to its one destination.
    func emit(_ signal: OutgoingSignal) {
        var error: UnsafeMutablePointer<GError>?
        if g_dbus_connection_emit_signal(connection.pointer, signal.destination, ManagerAPI.objectPath, ManagerAPI.interface,
                                         signal.signal.rawValue, Variants.make(.tuple(signal.arguments)), &error) == 0 {
            logger.log(.warning, "cannot send \(signal.signal.rawValue): \(BusErrorText.take(error))")
        }
    }
}

enum BusErrorText {
    static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    }
}
