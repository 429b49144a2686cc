import BiounlockSystem
import BiounlockCore
import BiounlockFprintProtocol
import BiounlockCheckProtocol

/// The checker's side of the PAM conversation: every message and prompt goes over the channel to
/// the module, which puts it through the caller's own conversation (a locker's dialog, or the
/// one secret it already read) and sends the answer back.
///
/// Security choices:
/// - an answer is copied from the frame straight into a zeroing Secret; the frame is wiped;
/// - `handOverPassword` sends no text at all, only "hand on the answer you gave last" -- and
///   only when the secret the chain hands on *is* that answer. The chain never hands on a
///   verified passcode, and with nothing secret going back the checker cannot leak one;
/// - each answer is awaited at most `Options.typingTimeoutSeconds` (a terminal prompt's limit)
///   and never past `end`, the checker's own end of life; a module that goes away or sends
///   anything but an answer is a conversation failure (PAM_CONV_ERR), never an answer.
final class RelayedConversation: Conversation {
    let channel: FrameChannel
    let logger: Logger
    /// Monotonic milliseconds after which nothing more is awaited.
    let end: Int64
    private var lastAnswer: Secret?
    /// What the chain handed on to the next module (the caller's last answer), for the checker's
    /// own check of the Unix password (CheckerService.witnessUnixPassword); nil when nothing was.
    private(set) var handedOn: Secret?
    /// The module went away or broke the protocol: nothing more is sent or awaited.
    private(set) var broken = false

    init(channel: FrameChannel, logger: Logger, end: Int64) {
        self.channel = channel; self.logger = logger; self.end = end
    }

    static let sendMilliseconds: Int64 = 5_000

    @discardableResult
    func send(_ message: CheckerMessage) -> Bool {
        guard !broken else { return false }
        let deadline = min(monotonicMilliseconds() &+ RelayedConversation.sendMilliseconds, end)
        if case .failure(let f) = channel.send(message.payload, until: deadline) {
            logger.log(.notice, "the caller stopped listening (\(f))")
            broken = true
            return false
        }
        return true
    }

    func info(_ text: String) { send(.info(text)) }
    func error(_ text: String) { send(.error(text)) }

    func promptSecret(_ prompt: String) -> ConversationReply {
        lastAnswer = nil
        guard send(.prompt(prompt)) else { return .failed }
        let deadline = min(monotonicMilliseconds() &+ Int64(Options.typingTimeoutSeconds) * 1000, end)
        switch channel.receive(until: deadline) {
        case .success(var payload):
            defer { Memory.zero(&payload) }
            guard case .answer(let answer)? = ModuleMessage(payload: payload) else {
                logger.log(.warning, "the caller sent something other than an answer to a prompt; ending")
                broken = true
                channel.markBroken()
                return .failed
            }
            if case .answer(let secret) = answer { lastAnswer = secret }
            return answer.reply
        case .failure(let f):
            logger.log(.notice, "no answer from the caller (\(f))")
            broken = true
            return .failed
        }
    }

    func handOverPassword(_ secret: Secret) -> Bool {
        guard let last = lastAnswer, last === secret || last.constantTimeEquals(secret) else {
            logger.log(.error, "asked to hand on text that is not the caller's last answer; not handed on")
            return false
        }
        guard send(.handOn) else { return false }
        handedOn = last
        return true
    }
}

/// Prefixes every line as pam_syslog does inside a root caller ("pam_biounlock(SERVICE:auth): "),
/// so that the checker's lines read like the module's; the service is known once the request is.
public final class ServiceLogger: Logger {
    let base: Logger
    public var service = "?"

    public init(_ base: Logger) { self.base = base }

    public func log(_ level: LogLevel, _ message: String) {
        base.log(level, "pam_biounlock(\(sanitizedForLog(service)):auth): \(message)")
    }
}
