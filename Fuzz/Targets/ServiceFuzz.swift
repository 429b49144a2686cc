import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockService
import BiounlockServiceProtocol
import Synchronization
import Glibc

// Fuzz target: biounlockd's method handlers (Manager.serve), with everything a local user
// controls -- which method, its arguments of any shape and size, the bytes behind each
// descriptor (or none, or a closed one), which connection and which uid call -- and what polkit
// and PAM answer. The store is real (/dev/shm); polkit, PAM and the reader are scripted.
//
// Oracles, beyond "no trap, no ASan report":
// - a user's record changes only through a call that was allowed to change it: the caller's own
//   (polkit said yes to manage-own) and, but for Disable, after an Authenticate that PAM accepted
//   on the same connection; or another's, with manage-others authorised;
// - Authenticate grants only when PAM accepted (the secret was the password);
// - every reply is the method's output signature or one of biounlockd's errors.
//
// Input: a byte of polkit answers, then calls; each call: method (1 byte), caller (1 byte:
// connection and uid), argument count (1 byte), arguments (a type byte, then a length byte and
// that many bytes for strings), then a descriptor mode byte and its bytes.

let password: [UInt8] = Array("letmein1".utf8)
let users: [(name: String, uid: UInt32)] = [("daemon", 1), ("bin", 2)]

nonisolated(unsafe) var storeDirectory = ""
let storePath: String = {
    var template = Array("/dev/shm/bu-fuzz-service.XXXXXX".utf8CString)
    guard let dir = mkdtemp(&template) else { fatalError("mkdtemp") }
    storeDirectory = String(cString: dir)
    atexit {
        for name in ["db/biounlock.db", "db/biounlock.db-wal", "db/biounlock.db-shm", "db/biounlock.db-lock"] { unlink(storeDirectory + "/" + name) }
        rmdir(storeDirectory + "/db")
        rmdir(storeDirectory)
    }
    return storeDirectory + "/db/biounlock.db"
}()

final class Quiet: Logger, @unchecked Sendable { func log(_ level: LogLevel, _ message: String) {} }

final class ScriptedAuthority: Authority, @unchecked Sendable {
    var own: AuthorityAnswer = .authorized
    var others: AuthorityAnswer = .notAuthorized(challenge: true)
    func check(action: String, caller: Caller) -> AuthorityAnswer { action == ManagerAPI.manageOwnAction ? own : others }
}

final class ScriptedPAM: Reauthenticator, @unchecked Sendable {
    let accepted = Mutex(Set<String>())
    var lastAccepted = false
    func check(user: String, secret: Secret) -> ReauthAnswer {
        let right = secret.withBytes { Array($0) == password }
        lastAccepted = right
        return right ? .accepted : .rejected
    }
}

/// An enrolment that ends at once, as the input says.
struct InstantEnrolment: EnrolmentRunner {
    final class Control: EnrolmentControl, @unchecked Sendable { func cancel() {} }
    func start(_ request: EnrolRequest, events: @escaping @Sendable (EnrolEvent) -> Void) -> Result<EnrolmentControl, SensorUnavailable> {
        events(.ready(total: 5))
        events(.stage(done: 1, total: 5))
        events(.retry(.tooShort))
        events(.finished(.enrolled(Template(finger: request.finger, sensor: .simulated, data: Array("fuzz-\(request.user)".utf8), created: 1),
                                   fprintdPrints: nil)))
        return .success(Control())
    }
}

let authority = ScriptedAuthority()
let pam = ScriptedPAM()
let manager: Manager = {
    guard case .success(let loaded) = Configuration.load(arguments: ["db=\(storePath)", "sensor=simulated", "sim_socket=\(storeDirectory)/sim",
                                                                     "config=\(storeDirectory)/none.conf"]) else { fatalError("options") }
    let env = ServiceEnvironment(authority: authority, reauthenticator: pam, enrolments: InstantEnrolment(), logger: Quiet(),
                                 emit: { _ in }, monotonic: { monotonicMilliseconds() })
    var rules = ReauthRules()
    rules.waitsMilliseconds = [0] // no waits in the fuzzer: the rules' arithmetic is unit-tested
    return Manager(options: loaded.options, environment: env, rules: rules)
}()

func snapshot() -> [String: String] {
    guard let store = try? Store.open(path: storePath, mode: .administer) else { return [:] }
    var out: [String: String] = [:]
    for u in users {
        if let r = try? store.loadUser(u.name) {
            out[u.name] = "\(r.enabled) \(r.serviceOverrides.sorted { $0.key < $1.key }) \(r.templates.map(\.finger)) \(r.passcode?.hash ?? "-") \(r.biometricFailures) \(r.passcodeFailures)"
        }
    }
    return out
}

struct Reader {
    var bytes: [UInt8]
    var i = 0
    mutating func byte() -> UInt8? { guard i < bytes.count else { return nil }; defer { i += 1 }; return bytes[i] }
    mutating func take(_ n: Int) -> [UInt8] { let end = min(bytes.count, i + n); defer { i = end }; return Array(bytes[i..<end]) }
}

func value(_ r: inout Reader) -> BusValue? {
    guard let t = r.byte() else { return nil }
    switch t % 8 {
    case 0, 1, 2:
        let n = Int(r.byte() ?? 0)
        var text = String(decoding: r.take(n), as: UTF8.self)
        if t % 8 == 2 {
            // Words the handlers know, service groups (Enable/Disable "@login", "@all") among them.
            let words = ["", "daemon", "bin", "root", "right-index", "pin", "pattern", "sudo", "biometric", "@login", "@all", "@sudo"]
            text = words[Int(n) % words.count]
        }
        if t == 200 { text = String(repeating: "a", count: 70_000) }
        return .string(text)
    case 3: return .uint32(UInt32(r.byte() ?? 0) << (UInt32(t) % 24))
    case 4: return .int64(Int64(Int8(bitPattern: r.byte() ?? 0)) << 40)
    case 5: return .handle(Int32(Int8(bitPattern: r.byte() ?? 0)) % 3)
    case 6: return .boolean((r.byte() ?? 0) & 1 == 1)
    default: return .array(element: "s", [.string("x")])
    }
}

nonisolated(unsafe) var granted: Set<String> = []

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var r = Reader(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let answers: [AuthorityAnswer] = [.authorized, .notAuthorized(challenge: false), .notAuthorized(challenge: true), .unavailable("x")]
    let p = r.byte() ?? 0
    authority.own = answers[Int(p) % 4]
    authority.others = answers[Int(p / 4) % 4]
    let buses = [":1.1", ":1.2", ":1.3"]
    for bus in buses { manager.connectionClosed(bus) } // no grant outlives an input
    granted = []
    var calls = 0
    while let m = r.byte(), calls < 16 {
        calls += 1
        let methods = ManagerAPI.Method.allCases
        let methodName = m < 250 ? methods[Int(m) % methods.count].rawValue : "Nonsense\(m)"
        let who = r.byte() ?? 0
        // A connection is one user's, as on a bus: :1.1 and :1.2 are daemon's, :1.3 bin's.
        let bus = buses[Int(who) % buses.count]
        let caller = bus == ":1.3" ? users[1] : users[0]
        var arguments: [BusValue] = []
        for _ in 0..<Int((r.byte() ?? 0) % 5) { if let v = value(&r) { arguments.append(v) } }
        // The descriptor at index 0: none, a closed empty pipe, or a pipe with the input's bytes.
        var descriptors: [Int32: FileDescriptor] = [:]
        var fds: [Int32] = [-1, -1]
        let mode = r.byte() ?? 0
        if mode % 3 != 0, pipe(&fds) == 0 {
            let payload: [UInt8] = mode % 3 == 2 ? (mode & 0x80 != 0 ? password : r.take(Int(r.byte() ?? 0))) : []
            _ = payload.withUnsafeBufferPointer { write(fds[1], $0.baseAddress, $0.count) }
            close(fds[1])
            descriptors[0] = FileDescriptor(rawValue: fds[0])
        }
        let before = snapshot()
        pam.lastAccepted = false
        let reply = manager.serve(MethodCall(method: methodName, arguments: arguments, descriptors: descriptors,
                                             caller: Caller(busName: bus, uid: caller.uid, pid: 1, allowsInteraction: false)))
        if fds[0] >= 0 { close(fds[0]) }
        let after = snapshot()
        if case .values(let v) = reply, let method = ManagerAPI.Method(rawValue: methodName) {
            let signature = "(" + v.map(\.signature).joined() + ")"
            if signature != method.outputSignature { fatalError("\(methodName) answered \(signature)") }
            if method == .authenticate {
                if !pam.lastAccepted { fatalError("a grant without PAM's yes") }
                granted.insert(bus)
            }
        }
        // Who may have changed what.
        for u in users where before[u.name] != after[u.name] {
            let own = u.uid == caller.uid
            let ownAllowed = authority.own == .authorized && (granted.contains(bus) || methodName == "Disable")
            let othersAllowed = authority.others == .authorized
            if own ? !ownAllowed : !othersAllowed {
                fatalError("\(methodName) by uid \(caller.uid) changed \(u.name)'s record without being allowed to")
            }
        }
    }
    return 0
}
