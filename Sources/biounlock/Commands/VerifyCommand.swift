import Glibc
import BiounlockCore
import BiounlockSensors
import BiounlockStore

/// `biounlock verify USER [--service S]`: runs the module's chain interactively, without PAM
/// (like `howdy test`), and says which step decided. It is a real attempt: counters, lockouts
/// and the audit log see it, under the service name given (default sudo).
enum VerifyCommand {
    static let spec = CommandSpec(
        path: ["verify"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--service", value: "S", help: "evaluate as this PAM service (default sudo)")],
        abstract: "Try the whole chain for USER, as the module would, and say what decided.",
        discussion: "Touch the reader or type the passcode when asked. The attempt counts like a real one.",
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let service = invocation.value("--service") ?? "sudo"
        let logger = StderrLogger(verbose: true)
        let options = context.options
        let chain = PolicyChain(
            options: options, conversation: TerminalConversation(), logger: logger, sensors: Sensors(logger: logger),
            openStore: {
                Result { () throws(StoreFailure) -> AuthStore in
                    let store = try Store.open(path: options.storePath, mode: .authenticate)
                    store.retention = Store.Retention(options)
                    return store
                }
            },
            sessionFacts: { SessionProbe.facts(rhost: "", tty: "", environment: { getenv($0).map { String(cString: $0) } }, options: options) },
            terminal: { ControllingTerminal.forConversation(pamTTY: "") })
        let decision = chain.run(AuthRequest(user: name, service: service, tty: ttyName()))
        Output.line("Result: \(decision.outcome.label) (method \(decision.method.rawValue), decided by: \(decision.reason.rawValue))")
        Output.line("The module would return \(pamCode(decision.outcome)).")
        if case .success = decision.outcome { return 0 }
        return 1
    }

    static func pamCode(_ outcome: Outcome) -> String {
        switch outcome {
        case .success: return "PAM_SUCCESS"
        case .ignore: return "PAM_IGNORE"
        case .unavailable: return "PAM_AUTHINFO_UNAVAIL"
        case .maxTries: return "PAM_MAXTRIES"
        case .userUnknown: return "PAM_USER_UNKNOWN"
        case .conversationFailed: return "PAM_CONV_ERR"
        }
    }

    static func ttyName() -> String {
        guard let name = ttyname(STDIN_FILENO) else { return "" }
        return String(cString: name)
    }
}

/// The CLI's conversation: messages to the terminal, hidden prompts without echo.
final class TerminalConversation: Conversation {
    func info(_ text: String) { Output.line(text) }
    func error(_ text: String) { Output.errorLine(text) }
    func promptSecret(_ prompt: String) -> ConversationReply {
        let secret: Secret
        do {
            secret = isatty(STDIN_FILENO) != 0 ? try SecretInput.prompt(prompt) : try SecretInput.readLine(fd: STDIN_FILENO)
        } catch {
            return .failed
        }
        return secret.isEmpty ? .empty : .answer(secret)
    }
    func handOverPassword(_ secret: Secret) -> Bool { false }
}
