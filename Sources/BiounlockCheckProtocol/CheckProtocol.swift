import BiounlockCore
import BiounlockFprintProtocol

/// The protocol between pam_biounlock.so running as the user (a screen locker) and
/// `biounlock-check`, the setuid-root checker that runs the policy chain for it.
///
/// Transport: the framing and channel of the libfprint helper (BiounlockFprintProtocol's
/// FrameChannel: 4-byte big-endian length, then `[version][tag][fields...]`; every wait bounded,
/// MSG_NOSIGNAL), on a socketpair whose checker end is fd 3, with a smaller frame limit and the
/// channel's `sensitive` mode (answers carry what the user typed).
///
/// Conversation, strictly in this order:
///   module  -> checker   `authenticate` (who, for which service, from where, the pam.d words,
///                        the caller's language)
///   checker -> module    any number of `info`, `error`, `prompt` (each prompt answered by one
///                        `answer` from the module), `handOn`, then exactly one `result`.
/// `handOn` carries nothing: it asks the module to set PAM_AUTHTOK to the answer it gave last.
/// So nothing secret ever travels from the checker to the module -- least of all a verified
/// passcode -- and the module sets PAM_AUTHTOK itself, in its own (the caller's) PAM handle.
///
/// Everything from the module is the user's to forge: the checker takes from it only what cannot
/// widen what the user can do (the user name is checked against the checker's real uid; the words
/// go through Options.applyingCallerArguments; the environment is two names that can only make
/// the session look remote; the language is a plain locale name that chooses only which catalog
/// the checker's texts come from). Any malformed frame, unknown tag, trailing byte or bound exceeded is
/// the end of the exchange: never a partial message.
public enum CheckProtocol {
    /// Bumped on any incompatible change; both sides refuse a frame of another version.
    public static let version: UInt8 = 1
    /// Largest frame either side accepts (a request with every word at its limit fits).
    public static let maximumFrameLength = 32 * 1024
    /// Most pam.d words relayed, and the longest (longer words cannot be valid caller words).
    public static let maximumWords = 64
    public static let maximumWordLength = 256
    /// Longest user name, service, tty or rhost (longer is refused, not cut).
    public static let maximumNameLength = 256
    /// Longest prompt or message.
    public static let maximumTextLength = FprintProtocol.maximumStringLength
    /// The only environment variables relayed: they can only make the session look remote.
    public static let relayedEnvironment = ["SSH_CONNECTION", "SSH_CLIENT"]
    /// The descriptor on which the checker finds its end of the socket.
    public static let checkerDescriptor: Int32 = 3
    /// The checker's whole life, whatever it waits for (its watchdog ends it then). Each step is
    /// bounded well below it: the reader by `timeout`, each answer by a terminal prompt's limit.
    public static let checkerLifetimeSeconds = 600
}

/// What the module asks: authenticate `user` for `service`.
public struct CheckRequest: Equatable, Sendable {
    public var user: String
    public var service: String
    public var tty: String
    public var rhost: String
    /// PAM_SILENT.
    public var silent: Bool
    /// The module's arguments from its pam.d line.
    public var words: [String]
    /// Values of CheckProtocol.relayedEnvironment that are set (PAM environment, then process).
    public var environment: [String: String]
    /// The caller's language (Localization.callerLanguage): the name of the locale its messages
    /// are in (`zh_CN.UTF-8`) and its LANGUAGE, empty for English. The checker uses them only if
    /// they are plain names (Localization.isPlainLocaleName), never as paths.
    public var locale: String
    public var language: String

    public init(user: String, service: String, tty: String = "", rhost: String = "", silent: Bool = false,
                words: [String] = [], environment: [String: String] = [:], locale: String = "", language: String = "") {
        self.user = user; self.service = service; self.tty = tty; self.rhost = rhost; self.silent = silent
        self.words = words; self.environment = environment; self.locale = locale; self.language = language
    }

    /// The request as the policy chain sees it.
    public var authRequest: AuthRequest {
        AuthRequest(user: user, service: service, tty: tty, rhost: rhost, silent: silent)
    }
}

/// The module's answer to a prompt (ConversationReply on the wire).
public enum CheckAnswer {
    case answer(Secret)
    case empty
    case tooLong
    case failed

    public init(_ reply: ConversationReply) {
        switch reply {
        case .answer(let s): self = .answer(s)
        case .empty: self = .empty
        case .tooLong: self = .tooLong
        case .failed: self = .failed
        }
    }

    public var reply: ConversationReply {
        switch self {
        case .answer(let s): return .answer(s)
        case .empty: return .empty
        case .tooLong: return .tooLong
        case .failed: return .failed
        }
    }
}

/// Frames from the module to the checker.
public enum ModuleMessage {
    case authenticate(CheckRequest)
    case answer(CheckAnswer)

    static let authenticateTag: UInt8 = 1
    static let answerTag: UInt8 = 2

    /// The frame payload. For an answer it holds the secret: the caller wipes it (wipeBytes) once
    /// sent. It is built in storage reserved up front, so no copy of the secret is left behind in a
    /// buffer the array outgrew.
    public var payload: [UInt8] {
        switch self {
        case .authenticate(let r):
            var w = WireWriter()
            w.u8(CheckProtocol.version)
            w.u8(ModuleMessage.authenticateTag)
            for field in [r.user, r.service, r.tty, r.rhost] { w.string(field) }
            w.u8(r.silent ? 1 : 0)
            let words = r.words.filter { $0.utf8.count <= CheckProtocol.maximumWordLength }.prefix(CheckProtocol.maximumWords)
            w.u32(UInt32(words.count))
            for word in words { w.string(word) }
            let environment = CheckProtocol.relayedEnvironment.compactMap { name in r.environment[name].map { (name, $0) } }
            w.u32(UInt32(environment.count))
            for (name, value) in environment { w.string(name); w.string(value) }
            // Longer than the parser takes: sent empty (English) rather than refused.
            for text in [r.locale, r.language] { w.string(text.utf8.count <= CheckProtocol.maximumNameLength ? text : "") }
            return w.bytes
        case .answer(let a):
            let kind: UInt8
            switch a {
            case .answer: kind = 1
            case .empty: kind = 2
            case .tooLong: kind = 3
            case .failed: kind = 4
            }
            guard case .answer(let secret) = a else { return [CheckProtocol.version, ModuleMessage.answerTag, kind] }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(7 + secret.count)
            bytes += [CheckProtocol.version, ModuleMessage.answerTag, kind]
            let n = UInt32(secret.count)
            bytes += [UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            secret.withBytes { bytes.append(contentsOf: $0) }
            return bytes
        }
    }

    /// Parses one frame, or nil when it is not exactly one valid message of this version. An
    /// answer's secret is copied straight from `payload` into a Secret (the caller wipes `payload`).
    public init?(payload: [UInt8]) {
        guard payload.count >= 2, payload[0] == CheckProtocol.version else { return nil }
        switch payload[1] {
        case ModuleMessage.authenticateTag:
            var r = WireReader(Array(payload[2...]))
            guard let user = r.name(), let service = r.name(), let tty = r.name(), let rhost = r.name(),
                  let silent = r.u8(), silent <= 1, let count = r.count(limit: CheckProtocol.maximumWords) else { return nil }
            var words: [String] = []
            for _ in 0..<count {
                guard let word = r.data(limit: CheckProtocol.maximumWordLength), let text = String(validating: word, as: UTF8.self) else { return nil }
                words.append(text)
            }
            guard let envCount = r.count(limit: CheckProtocol.relayedEnvironment.count) else { return nil }
            var environment: [String: String] = [:]
            for _ in 0..<envCount {
                guard let name = r.name(), CheckProtocol.relayedEnvironment.contains(name), environment[name] == nil,
                      let value = r.name() else { return nil }
                environment[name] = value
            }
            guard let locale = r.name(), let language = r.name(), r.isAtEnd else { return nil }
            self = .authenticate(CheckRequest(user: user, service: service, tty: tty, rhost: rhost, silent: silent == 1,
                                              words: words, environment: environment, locale: locale, language: language))
        case ModuleMessage.answerTag:
            guard payload.count >= 3 else { return nil }
            switch payload[2] {
            case 1:
                guard payload.count >= 7 else { return nil }
                var length = 0
                for i in 3..<7 { length = length << 8 | Int(payload[i]) }
                guard length > 0, length <= Secret.maximumLength, payload.count == 7 + length else { return nil }
                guard let secret = Secret.copying(payload[7..<(7 + length)]) else { return nil }
                self = .answer(.answer(secret))
            case 2 where payload.count == 3: self = .answer(.empty)
            case 3 where payload.count == 3: self = .answer(.tooLong)
            case 4 where payload.count == 3: self = .answer(.failed)
            default: return nil
            }
        default:
            return nil
        }
    }
}

/// Frames from the checker to the module.
public enum CheckerMessage: Equatable, Sendable {
    /// PAM_TEXT_INFO.
    case info(String)
    /// PAM_ERROR_MSG.
    case error(String)
    /// PAM_PROMPT_ECHO_OFF; the module answers with ModuleMessage.answer.
    case prompt(String)
    /// Set PAM_AUTHTOK to the answer given last (text that is not the passcode, for pam_unix).
    case handOn
    /// The chain's decision; the module returns the PAM code a root caller would get for it.
    case result(Decision)

    static let tags: (info: UInt8, error: UInt8, prompt: UInt8, handOn: UInt8, result: UInt8) = (10, 11, 12, 13, 14)

    public var payload: [UInt8] {
        var w = WireWriter()
        w.u8(CheckProtocol.version)
        switch self {
        case .info(let text): w.u8(CheckerMessage.tags.info); w.string(text)
        case .error(let text): w.u8(CheckerMessage.tags.error); w.string(text)
        case .prompt(let text): w.u8(CheckerMessage.tags.prompt); w.string(text)
        case .handOn: w.u8(CheckerMessage.tags.handOn)
        case .result(let d):
            w.u8(CheckerMessage.tags.result)
            w.u8(d.outcome.wireTag)
            w.string(d.outcome.successMethod?.rawValue ?? "")
            w.string(d.reason.rawValue)
            w.string(d.method.rawValue)
        }
        return w.bytes
    }

    public init?(payload: [UInt8]) {
        guard payload.count >= 2, payload[0] == CheckProtocol.version else { return nil }
        var r = WireReader(Array(payload[2...]))
        switch payload[1] {
        case CheckerMessage.tags.info:
            guard let text = r.string() else { return nil }
            self = .info(text)
        case CheckerMessage.tags.error:
            guard let text = r.string() else { return nil }
            self = .error(text)
        case CheckerMessage.tags.prompt:
            guard let text = r.string() else { return nil }
            self = .prompt(text)
        case CheckerMessage.tags.handOn:
            self = .handOn
        case CheckerMessage.tags.result:
            guard let tag = r.u8(), let success = r.string(), let reasonText = r.string(), let methodText = r.string(),
                  let reason = Reason(rawValue: reasonText), let method = AuthMethod(rawValue: methodText),
                  let outcome = Outcome(wireTag: tag, successMethod: success) else { return nil }
            self = .result(Decision(outcome, reason, method: method))
        default:
            return nil
        }
        guard r.isAtEnd else { return nil }
    }
}

extension Outcome {
    var wireTag: UInt8 {
        switch self {
        case .success: return 1
        case .ignore: return 2
        case .unavailable: return 3
        case .maxTries: return 4
        case .userUnknown: return 5
        case .conversationFailed: return 6
        }
    }

    var successMethod: AuthMethod? {
        if case .success(let m) = self { return m }
        return nil
    }

    /// A success must name how (finger, face or passcode); anything else names nothing.
    init?(wireTag: UInt8, successMethod: String) {
        switch (wireTag, successMethod) {
        case (1, let m):
            guard let method = AuthMethod(rawValue: m), method == .fingerprint || method == .passcode || method == .face else { return nil }
            self = .success(method)
        case (2, ""): self = .ignore
        case (3, ""): self = .unavailable
        case (4, ""): self = .maxTries
        case (5, ""): self = .userUnknown
        case (6, ""): self = .conversationFailed
        default: return nil
        }
    }
}

extension WireReader {
    /// UTF-8 text of at most CheckProtocol.maximumNameLength bytes; invalid UTF-8 is refused.
    mutating func name() -> String? {
        guard let bytes = data(limit: CheckProtocol.maximumNameLength) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
