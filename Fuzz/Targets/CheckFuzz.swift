import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockFprintProtocol
import BiounlockCheckProtocol
import BiounlockCheck
import Glibc

// Fuzz target: the protocol between the module running as the user and biounlock-check, from
// both ends, with everything a hostile caller controls.
//
// Input: a selector byte, then bytes cut into frames (two length bytes each).
// - Every frame is parsed as a module message and as a checker message; what parses must
//   round-trip through its wire form.
// - Selector even: the frames are what the "module" sends to the checker's service
//   (CheckerService.serve, the real policy chain on a real store in /dev/shm, user daemon with
//   PIN 2468, no reader): it may only decide success if the input carries the PIN, and it may
//   switch only to a plain locale name and LANGUAGE list (never a path).
// - Selector odd: the frames are what a "checker" sends to the module's relay loop
//   (CheckerClient.relay): nothing may trap, and its answer is exactly a decoded result frame.

let user = "daemon"
let pin: [UInt8] = Array("2468".utf8)

/// The store, made once per process, removed when the run ends (libFuzzer exits through exit()).
nonisolated(unsafe) var storeDirectory = ""
let storePath: String = {
    var template = Array("/dev/shm/bu-fuzz-check.XXXXXX".utf8CString)
    guard let dir = mkdtemp(&template) else { fatalError("mkdtemp") }
    storeDirectory = String(cString: dir)
    atexit {
        for name in ["db/biounlock.db", "db/biounlock.db-wal", "db/biounlock.db-shm", "db/biounlock.db-lock", "db/checker.lock"] { unlink(storeDirectory + "/" + name) }
        rmdir(storeDirectory + "/db")
        rmdir(storeDirectory)
    }
    let path = storeDirectory + "/db/biounlock.db"
    do {
        let store = try Store.open(path: path, mode: .administer)
        let hash = try Passcode.hash(Secret(bytes: pin)!, opsLimit: 1, memLimit: 8192)
        try store.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: user, at: 1)
        try store.saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array("daemon-right-index".utf8), created: 1), user: user)
        try store.setEnabled(true, user: user, service: nil, at: 1)
    } catch { fatalError("store: \(error)") }
    return path
}()

final class Quiet: Logger { func log(_ level: LogLevel, _ message: String) {} }

/// A conversation that answers from a script (the relay direction).
final class Script: Conversation {
    var answers: [ConversationReply] = [.answer(Secret(bytes: pin)!), .empty, .failed]
    func info(_ text: String) {}
    func error(_ text: String) {}
    func handOverPassword(_ secret: Secret) -> Bool { true }
    func promptSecret(_ prompt: String) -> ConversationReply { answers.isEmpty ? .failed : answers.removeFirst() }
}

func openStore(_ o: Options) -> Result<AuthStore, StoreFailure> {
    do throws(StoreFailure) { return .success(try Store.open(path: o.storePath, mode: .authenticate)) } catch { return .failure(error) }
}

struct NoReader: SensorProvider {
    func open(_ options: Options) -> Result<FingerprintSensor, SensorUnavailable> { .failure(SensorUnavailable("no reader")) }
}

func frames(_ bytes: ArraySlice<UInt8>) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var rest = bytes
    while rest.count >= 2 {
        let n = Int(rest[rest.startIndex]) << 8 | Int(rest[rest.startIndex + 1])
        rest = rest.dropFirst(2)
        out.append(Array(rest.prefix(n)))
        rest = rest.dropFirst(n)
    }
    return out
}

/// A socketpair whose one end already holds `frames` and is closed for writing.
func preloaded(_ frames: [[UInt8]]) -> FrameChannel? {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { return nil }
    var bytes: [UInt8] = []
    for f in frames { bytes += FrameBuffer.frame(f) }
    _ = bytes.withUnsafeBytes { send(fds[1], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
    shutdown(fds[1], Int32(SHUT_WR))
    // The peer end stays open for what the other side sends back, until the input is done.
    peers.append(fds[1])
    return FrameChannel(fd: fds[0], limit: CheckProtocol.maximumFrameLength, sensitive: true)
}
/// The other ends of this input's socketpairs, closed when the input is done.
nonisolated(unsafe) var peers: [Int32] = []

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard haystack.count >= needle.count else { return false }
    for i in 0...(haystack.count - needle.count) where Array(haystack[i..<(i + needle.count)]) == needle { return true }
    return false
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheck(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = input.first else { return 0 }
    let cut = Array(frames(input.dropFirst()).prefix(32))

    for f in cut {
        if let m = ModuleMessage(payload: f), case .authenticate(let r) = m {
            guard case .authenticate(let back)? = ModuleMessage(payload: ModuleMessage.authenticate(r).payload) else {
                preconditionFailure("a request round-trips")
            }
            precondition(back == r, "a request round-trips exactly")
        }
        if let m = CheckerMessage(payload: f) {
            precondition(CheckerMessage(payload: m.payload) == m, "a checker message round-trips")
        }
    }

    defer { for fd in peers { close(fd) }; peers.removeAll() }
    if selector % 2 == 0 {
        guard let channel = preloaded(cut) else { return 0 }
        var options = Options()
        options.storePath = storePath
        options.sensor = .simulated
        options.requirePasscode = .none
        options.lidPath = "/nonexistent"
        options.logindPath = "/nonexistent"
        var service = CheckerService(caller: Account(name: user, uid: 1), logger: ServiceLogger(Quiet()), sensors: NoReader(),
                                     openStore: openStore,
                                     end: monotonicMilliseconds() &+ 2_000)
        service.loadOptions = { () -> Result<Configuration.Loaded, Configuration.Failure> in .success(Configuration.Loaded(options: options)) }
        service.hostname = { "fuzz" }
        // Whatever the request says, the checker switches only to plain names (never a path).
        service.useLanguage = { locale, language in
            precondition(Localization.isPlainLocaleName(locale) && !locale.contains("/"), "a plain locale name")
            precondition(language.isEmpty || (Localization.isPlainLanguageList(language) && !language.contains("/")), "a plain LANGUAGE")
            return false
        }
        let decision = service.serve(channel)
        if case .success = decision.outcome {
            precondition(contains(input, pin), "success without the PIN")
        }
        // Keep the lockout from ending the run's interest in the PIN path.
        if let store = try? Store.open(path: storePath, mode: .administer) {
            try? store.resetCounters(user: user, biometric: true, passcode: true)
        }
    } else {
        guard let channel = preloaded(cut) else { return 0 }
        let result = CheckerClient.relay(CheckRequest(user: user, service: "fuzz"), on: channel, conversation: Script(), logger: Quiet(),
                                         silenceMilliseconds: 50)
        if case .success(let d) = result {
            precondition(cut.contains { CheckerMessage(payload: $0) == .result(d) }, "a decision the checker sent")
        }
    }
    return 0
}
