import BiounlockSystem
import BiounlockCore
import BiounlockAdmin
import BiounlockSensors
import BiounlockStore
import BiounlockChain

/// `biounlock verify USER [--service S]`: runs the module's chain interactively, without PAM
/// (like `howdy test`), and says which step decided. It is a real attempt: counters, lockouts
/// and the audit log see it, under the service name given (default sudo).
enum VerifyCommand {
    static let spec = CommandSpec(
        path: ["verify"], positionals: [("USER", false)],
        options: [OptionSpec(name: "--service", value: "S", help: L("evaluate as this PAM service (default sudo)"), kind: .service),
                  OptionSpec(name: "--face", value: nil, help: L("use the enrolled face too, even with face=off (to try it before turning it on)"))],
        abstract: L("Try the whole chain for USER, as the module would, and say what decided."),
        discussion: L("Touch the reader or type the passcode when asked. The attempt counts like a real one."),
        writes: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let name = invocation.positionals[0]
        let service = invocation.value("--service") ?? "sudo"
        let logger = StderrLogger(verbose: true)
        var options = context.options
        if invocation.has("--face") { options.face = true }
        let request = AuthRequest(user: name, service: service, tty: ttyName())
        let chain = ChainAssembly.chain(
            options: options, conversation: TerminalConversation(), logger: logger, diagnostics: .stderr, request: request,
            environment: { Environment.value($0).map { String(decoding: $0, as: UTF8.self) } },
            terminal: { ControllingTerminal.forConversation(pamTTY: "") })
        let decision = chain.run(request)
        // TRANSLATORS: {result} says what happened ("unlocked by a finger", "handed to the
        // password", translated); {method}, {outcome} and {reason} are the audit log's codes
        // (fingerprint, success, finger-matched...): keep them as they are.
        Output.line(L("Result: {result} (method {method}, outcome {outcome}, decided by: {reason})",
                      ["result": StatusReport.describe(outcome: decision.outcome.label, method: decision.method, reason: decision.reason.rawValue),
                       "outcome": decision.outcome.label, "method": decision.method.rawValue, "reason": decision.reason.rawValue]))
        Output.line(L("The module would return {code}.", ["code": PamReturn(decision.outcome).name]))
        if case .success = decision.outcome { return 0 }
        return 1
    }

    static func ttyName() -> String {
        FileDescriptor.standardInput.terminalName ?? ""
    }
}

/// The CLI's conversation: messages to the terminal, hidden prompts without echo.
final class TerminalConversation: Conversation {
    func info(_ text: String) { Output.line(text) }
    func error(_ text: String) { Output.errorLine(text) }
    func promptSecret(_ prompt: String) -> ConversationReply {
        let secret: Secret
        do {
            secret = FileDescriptor.standardInput.isTerminal ? try SecretInput.prompt(prompt) : try SecretInput.readLine()
        } catch {
            return .failed
        }
        return secret.isEmpty ? .empty : .answer(secret)
    }
    func handOverPassword(_ secret: Secret) -> Bool { false }
}
