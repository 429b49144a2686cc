import BiounlockSystem
import BiounlockServiceProtocol

/// Who called, as the bus says: the connection's unique name and the uid and pid the bus daemon
/// read from the socket (GetConnectionCredentials). Never taken from an argument.
public struct Caller: Equatable, Sendable {
    /// The connection's unique name (":1.42"): never reused while the bus runs, so a grant bound
    /// to it cannot pass to another client.
    public let busName: String
    public let uid: UInt32
    public let pid: UInt32
    /// The call's ALLOW_INTERACTIVE_AUTHORIZATION flag: polkit may ask an administrator.
    public let allowsInteraction: Bool

    public init(busName: String, uid: UInt32, pid: UInt32, allowsInteraction: Bool) {
        self.busName = busName; self.uid = uid; self.pid = pid; self.allowsInteraction = allowsInteraction
    }
}

/// One method call, decoded: its name, its arguments (a tuple's members) and the descriptors it
/// carried, by their index in the message (already duplicated for the handler; whoever made the
/// call closes them afterwards, whatever the handler did).
public struct MethodCall: Sendable {
    public let method: String
    public let arguments: [BusValue]
    public let descriptors: [Int32: FileDescriptor]
    public let caller: Caller

    public init(method: String, arguments: [BusValue], descriptors: [Int32: FileDescriptor] = [:], caller: Caller) {
        self.method = method; self.arguments = arguments; self.descriptors = descriptors; self.caller = caller
    }
}

/// A handler's answer: the out arguments, or a D-Bus error.
public enum MethodReply: Equatable, Sendable {
    case values([BusValue])
    case error(ManagerAPI.ErrorName, String)

    public var errorName: ManagerAPI.ErrorName? {
        if case .error(let name, _) = self { return name }
        return nil
    }
}

/// A handler's refusal, turned into a D-Bus error by `Manager.handle`. The message is English
/// (clients show their own words by name) and never holds a secret.
public struct ServiceError: Error, Equatable, Sendable {
    public let name: ManagerAPI.ErrorName
    public let message: String
    public init(_ name: ManagerAPI.ErrorName, _ message: String) { self.name = name; self.message = message }
}

/// A signal the service sends to one client (its unique name), never broadcast: how a caller's
/// enrolment goes is no one else's business.
public struct OutgoingSignal: Equatable, Sendable {
    public let destination: String
    public let signal: ManagerAPI.Signal
    public let arguments: [BusValue]
    public init(destination: String, signal: ManagerAPI.Signal, arguments: [BusValue]) {
        self.destination = destination; self.signal = signal; self.arguments = arguments
    }
}
