import BiounlockCore
import BiounlockSensors

/// `biounlock sim scan|retry|error|unplug|sleep`: act as the finger on the simulated sensor.
enum SimCommandLine {
    static let waitOption = OptionSpec(name: "--wait", value: "SECONDS", help: L("wait this long for the sensor to listen (default 10)"), kind: .seconds(0...600))

    static let scan = make("scan", "ID", L("Touch the simulated reader with the finger called ID.")) { .scan(Array($0.utf8)) }
    static let retry = make("retry", "N", L("Make the reader ask for another touch (0 general, 1 too short, 2 centre, 3 remove).")) {
        number($0).map(SimCommand.retry)
    }
    static let error = make("error", "N", L("Make the reader fail with device error N.")) { number($0).map(SimCommand.error) }
    static let unplug = make("unplug", nil, L("Unplug the simulated reader.")) { _ in .unplug }
    static let sleep = make("sleep", "MS", L("Delay the next command by MS milliseconds.")) { number($0).map { SimCommand.sleep(milliseconds: $0) } }

    /// A command's number, by Core's integer rule (the sensor's own encoding then bounds it:
    /// `SimCommand(bytes:)` must give the same command back).
    static func number(_ text: String) -> Int? { boundedInteger(text, in: 0...999_999_999) }

    static func make(_ word: String, _ argument: String?, _ abstract: String, _ build: @escaping (String) -> SimCommand?) -> CommandSpec {
        CommandSpec(
            path: ["sim", word], positionals: argument.map { [($0, false)] } ?? [], options: [waitOption],
            abstract: abstract,
            discussion: L("Sends one virtual_device command to the sensor listening on --sim-socket (or sim_socket in the config)."),
            writes: false,
            run: { invocation in
                let context = try Context(invocation)
                guard let path = context.options.simSocket else {
                    throw UsageError(L("no simulated sensor socket: pass --sim-socket PATH or set sim_socket in the config"), command: invocation.spec)
                }
                let text = invocation.positionals.first ?? ""
                guard let command = build(text), SimCommand(bytes: command.bytes) == command else {
                    throw UsageError(L("'{value}' is not a valid {argument} for sim {command}",
                                       ["value": sanitizedForLog(text), "argument": argument ?? "argument", "command": word]), command: invocation.spec)
                }
                let seconds = invocation.integer("--wait") ?? 10
                switch SimulatedFinger.send(command, to: path, waitMilliseconds: seconds * 1000) {
                case .success: return 0
                case .failure(let why): throw CommandFailure("\(why)")
                }
            })
    }
}
