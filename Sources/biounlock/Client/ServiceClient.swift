import BiounlockSystem
import BiounlockCore
import BiounlockServiceProtocol
import BiounlockBus

/// The CLI's way to biounlockd (a user's own account, without root): the system bus, the
/// service's errors in the user's words, secrets into a socket whose other end goes along.
final class ServiceClient {
    let bus: BusConnection
    /// The command as the user typed it (for the message when the service is not there).
    let command: String

    init(command: String) throws(CommandFailure) {
        self.command = command
        switch BusConnection.system() {
        case .success(let c): bus = c
        case .failure(let e): throw ServiceClient.unreachable(e, command: command)
        }
    }

    /// Never a wrong answer: where the service cannot be asked, the user is told so (exit 1).
    static func unreachable(_ e: BusError, command: String) -> CommandFailure {
        CommandFailure(L("the biounlock service (biounlockd) cannot be reached, so nothing was read or changed: {reason}\n  Is biounlock installed and the system bus running? Root can run '{command}' without it.",
                         ["reason": e.message.isEmpty ? e.name : e.message, "command": "sudo " + command]))
    }

    /// One call; every error becomes a failure in the user's words.
    @discardableResult
    func call(_ method: ManagerAPI.Method, _ arguments: [BusValue] = [], descriptors: [FileDescriptor] = [],
              timeoutMilliseconds: Int32 = 120_000) throws(CommandFailure) -> [BusValue] {
        switch bus.callManager(method, arguments, descriptors: descriptors, timeoutMilliseconds: timeoutMilliseconds) {
        case .success(let values): return values
        case .failure(let e): throw explain(e)
        }
    }

    func explain(_ e: BusError) -> CommandFailure {
        if e.serviceMissing { return ServiceClient.unreachable(e, command: command) }
        switch e.managerError {
        case .notAuthorized?:
            return CommandFailure(L("not allowed from this session: you can change your own biometric unlock from a local, active session only (polkit refused it)"))
        case .authenticationRequired?:
            return CommandFailure(L("the service asks you to authenticate again; run the command again"))
        case .authenticationFailed?:
            return CommandFailure(L("authentication failed: that is neither your password nor your biounlock passcode; nothing was changed"))
        case .tooManyAttempts?:
            let seconds = Int64(e.message.prefix { $0.isNumber }) ?? 60
            return CommandFailure(L("too many failed attempts: try again in {time}", ["time": describeTimeLeft(seconds)]))
        case .invalidPasscode?:
            return CommandFailure(L("passcode not set: {problem}", ["problem": e.message]))
        case .otherAccount?:
            return CommandFailure(L("your biounlock record belongs to an account that had your name before; an administrator must clear it first: {command}",
                                    ["command": "sudo biounlock forget \(ClientIdentity.name)"]))
        case .busy?:
            return CommandFailure(L("the biounlock service is busy (an enrolment, or too many requests at once); try again shortly"))
        case .notEnrolled?:
            return CommandFailure(L("that finger is not enrolled"))
        case .noSuchUser?, .invalidArgument?, .unavailable?, .failed?, nil:
            return CommandFailure(L("the biounlock service could not do it: {reason}", ["reason": e.message.isEmpty ? e.name : e.message]))
        }
    }

    /// The service's unique name (it is started by the first call if it was not running):
    /// its signals are taken from that sender only.
    func serviceOwner() throws(CommandFailure) -> String {
        switch bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [.string(ManagerAPI.busName)]) {
        case .success(let v): if let name = v.first?.string { return name }
            throw CommandFailure(L("the biounlock service could not do it: {reason}", ["reason": "GetNameOwner"]))
        case .failure(let e): throw explain(e)
        }
    }

    /// The caller's own record.
    func status() throws(CommandFailure) -> AccountStatus {
        let v = try call(.getStatus, [.string("")])
        guard let first = v.first, let status = AccountStatus(first) else {
            throw CommandFailure(L("the biounlock service could not do it: {reason}", ["reason": "GetStatus"]))
        }
        return status
    }

    /// A socket with `secret` written into it and its writing side shut: the descriptor to send.
    static func carrying(_ secret: Secret) throws(CommandFailure) -> OwnedDescriptor {
        do throws(Errno) {
            let pair = try FileDescriptor.localStreamPair()
            var bytes = secret.withBytes { Array($0) }
            defer { wipe(&bytes) }
            try pair.second.descriptor.writeAll(bytes)
            return OwnedDescriptor(taking: pair.releaseFirst())
        } catch {
            throw CommandFailure(L("the biounlock service could not do it: {reason}", ["reason": "\(error)"]))
        }
    }

    /// Re-authenticates this connection (the Unix password or the biounlock passcode).
    func authenticate(_ secret: Secret) throws(CommandFailure) {
        let fd = try ServiceClient.carrying(secret)
        try call(.authenticate, [.handle(0)], descriptors: [fd.descriptor], timeoutMilliseconds: 60_000)
    }
}

/// Who runs the CLI: the account of its real uid.
enum ClientIdentity {
    static let account: Account? = Accounts.lookup(uid: ProcessIdentity.realUserID)
    static var name: String { account?.name ?? "uid \(ProcessIdentity.realUserID)" }
}
