import BiounlockSystem
import BiounlockCore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockCheckProtocol

/// The module's side when it runs without root (a screen locker running PAM as the user: i3lock,
/// swaylock, hyprlock, xscreensaver's auth helper): the store is root-only, so the module starts
/// biounlock-check and relays -- the checker's prompts and messages through the caller's PAM
/// conversation, the answers back -- then returns the PAM code of the checker's decision, the
/// code a root caller gets for the same decision.
///
/// Security choices:
/// - the checker must pass TrustedFiles.checkSetuidHelper before it is started (it is handed what
///   the user types): otherwise the module falls through to the password at once and says why;
/// - it is started the way the libfprint helper is (HelperProcess: posix_spawn, empty
///   environment, default signals, /dev/null on 0-2, the socket on fd 3), with no arguments:
///   the checker takes none;
/// - every wait is bounded: each frame by `touch_first + timeout + 30 s` (the longest the checker
///   can be busy at the reader between two frames), the whole exchange by the checker's own
///   lifetime; then the checker is killed (it keeps the caller's real uid, so the caller may) and
///   reaped. Writes use MSG_NOSIGNAL: a dead checker is an error, never a SIGPIPE in the host;
/// - the answers sent are wiped once sent; PAM_AUTHTOK is set here, by the module, from the
///   module's own copy of the last answer, when the checker says "hand on": nothing secret comes
///   back from the checker;
/// - anything malformed, too much, too late or missing is `unavailable` (the password), never
///   success: only a `result` frame that decodes as a success is a success.
public enum CheckerClient {
    /// Whether the module runs without root: real and effective uid both not 0 (a setuid-root
    /// caller such as vlock, su or sudo runs the chain itself).
    public static var isNeeded: Bool { ProcessIdentity.realUserID != 0 && ProcessIdentity.effectiveUserID != 0 }

    /// Most frames read from one checker (a chain shows a handful).
    static let maximumFrames = 256

    public static func authenticate(_ request: CheckRequest, options: Options, conversation: Conversation, logger: Logger) -> Decision {
        if let problem = TrustedFiles.checkSetuidHelper(options.checkHelper) {
            logger.log(.warning, "running as uid \(ProcessIdentity.realUserID) without root: the store is root-only and check_helper is refused (\(problem)); falling back to the password")
            return Decision(.unavailable, .checkerUnavailable)
        }
        let launch = HelperLaunch(path: options.checkHelper, arguments: [], environment: [], stderrToNull: true)
        let process: HelperProcess
        switch HelperProcess.spawn(launch, limit: CheckProtocol.maximumFrameLength, sensitive: true) {
        case .success(let p): process = p
        case .failure(let why):
            logger.log(.error, "cannot start biounlock-check: \(why); falling back to the password")
            return Decision(.unavailable, .checkerUnavailable)
        }
        let silence = Int64(options.touchFirstSeconds + options.timeoutSeconds) * 1000 + 30_000
        switch relay(request, on: process.channel, conversation: conversation, logger: logger, silenceMilliseconds: silence) {
        case .success(let decision):
            if !process.reap(until: monotonicMilliseconds() &+ 1000) { process.kill() }
            logger.log(.debug, "biounlock-check decided outcome=\(decision.outcome.label) reason=\(decision.reason.rawValue)")
            return decision
        case .failure(let why):
            process.kill()
            logger.log(.error, "biounlock-check \(why); falling back to the password")
            return Decision(.unavailable, .checkerUnavailable)
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The relay loop itself, on the module's end of the checker's socket.
    /// (`sendRequest: false` is for tests that send their own first frame.)
    public static func relay(_ request: CheckRequest, on channel: FrameChannel, conversation: Conversation, logger: Logger,
                             silenceMilliseconds: Int64, sendRequest: Bool = true) -> Result<Decision, Failure> {
        let end = monotonicMilliseconds() &+ Int64(CheckProtocol.checkerLifetimeSeconds) * 1000 &+ 5_000
        func send(_ message: ModuleMessage) -> Bool {
            var payload = message.payload
            defer { Memory.zero(&payload) }
            return channel.send(payload, until: min(monotonicMilliseconds() &+ 5_000, end)).isSuccess
        }
        guard !sendRequest || send(.authenticate(request)) else { return .failure(Failure("did not take the request")) }
        var lastAnswer: Secret?
        for _ in 0..<maximumFrames {
            switch channel.receive(until: min(monotonicMilliseconds() &+ silenceMilliseconds, end)) {
            case .failure(let f):
                return .failure(Failure(f == .timedOut ? "did not answer in time" : f == .closed ? "ended without a decision" : "\(f)"))
            case .success(let payload):
                guard let message = CheckerMessage(payload: payload) else {
                    channel.markBroken()
                    return .failure(Failure("sent a malformed message"))
                }
                switch message {
                case .info(let text): conversation.info(text)
                case .error(let text): conversation.error(text)
                case .prompt(let text):
                    let reply = conversation.promptSecret(text)
                    if case .answer(let secret) = reply { lastAnswer = secret } else { lastAnswer = nil }
                    guard send(.answer(CheckAnswer(reply))) else { return .failure(Failure("stopped reading answers")) }
                case .handOn:
                    if let lastAnswer, !conversation.handOverPassword(lastAnswer) {
                        logger.log(.notice, "could not hand the typed text on to the next module; it will ask itself")
                    }
                case .result(let decision):
                    return .success(decision)
                }
            }
        }
        return .failure(Failure("sent too many messages"))
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { return true } else { return false } }
}
