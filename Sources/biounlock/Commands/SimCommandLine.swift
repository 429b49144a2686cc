import BiounlockCore
import BiounlockSensors

/// `biounlock sim scan|retry|error|unplug|sleep`: act as the finger on the simulated sensor.
enum SimCommandLine {
    static let waitOption = OptionSpec(name: "--wait", value: "SECONDS", help: "wait this long for the sensor to listen (default 10)")

    static let scan = make("scan", "ID", "Touch the simulated reader with the finger called ID.") { .scan(Array($0.utf8)) }
    static let retry = make("retry", "N", "Make the reader ask for another touch (0 general, 1 too short, 2 centre, 3 remove).") {
        Int($0).map(SimCommand.retry)
    }
    static let error = make("error", "N", "Make the reader fail with device error N.") { Int($0).map(SimCommand.error) }
    static let unplug = make("unplug", nil, "Unplug the simulated reader.") { _ in .unplug }
    static let sleep = make("sleep", "MS", "Delay the next command by MS milliseconds.") { Int($0).map { SimCommand.sleep(milliseconds: $0) } }

    static func make(_ word: String, _ argument: String?, _ abstract: String, _ build: @escaping (String) -> SimCommand?) -> CommandSpec {
        CommandSpec(
            path: ["sim", word], positionals: argument.map { [($0, false)] } ?? [], options: [waitOption],
            abstract: abstract,
            discussion: "Sends one virtual_device command to the sensor listening on --sim-socket (or sim_socket in the config).",
            writes: false,
            run: { invocation in
                let context = try Context(invocation)
                guard let path = context.options.simSocket else {
                    throw UsageError("no simulated sensor socket: pass --sim-socket PATH or set sim_socket in the config", command: invocation.spec)
                }
                let text = invocation.positionals.first ?? ""
                guard let command = build(text), SimCommand(bytes: command.bytes) == command else {
                    throw UsageError("'\(sanitizedForLog(text))' is not a valid \(argument ?? "argument") for sim \(word)", command: invocation.spec)
                }
                var seconds = 10
                if let w = invocation.value("--wait") {
                    guard let n = Int(w), (0...600).contains(n) else { throw UsageError("--wait takes 0-600 seconds", command: invocation.spec) }
                    seconds = n
                }
                switch SimulatedFinger.send(command, to: path, waitMilliseconds: seconds * 1000) {
                case .success: return 0
                case .failure(let why): throw CommandFailure("\(why)")
                }
            })
    }
}
