import Glibc
import BiounlockCore

// biounlock: the admin CLI. This file only dispatches; each command lives in Commands/ and the
// logic it needs lives in the libraries the module uses too.
// Exit codes: 0 success, 1 failure (including "must be root"), 64 usage error.

setlocale(LC_ALL, "")
let commands: [CommandSpec] = [
    EnrolCommand.spec, UnenrolCommand.spec,
    PasscodeCommand.set, PasscodeCommand.clear,
    EnableCommand.enable, EnableCommand.disable,
    StatusCommand.spec, ListCommand.spec, DoctorCommand.spec, LogCommand.spec, VerifyCommand.spec, ResetCommand.spec,
    ForgetCommand.spec,
    SensorsCommand.spec,
    SimCommandLine.scan, SimCommandLine.retry, SimCommandLine.error, SimCommandLine.unplug, SimCommandLine.sleep,
]

let topHelp = """
    biounlock: biometric-or-passcode authentication for Linux PAM (admin tool)

    USAGE: biounlock [global options] <command> [arguments]

    COMMANDS:
    \(commands.map { "  " + $0.usage.dropFirst("biounlock ".count).description.padding(to: 44) + $0.abstract }.joined(separator: "\n"))

    GLOBAL OPTIONS:
    \(GlobalOptions.helpLines.joined(separator: "\n"))

    Run 'biounlock <command> --help' for a command's details.
    """

let status: Int32
do {
    switch try Parser.parse(Array(CommandLine.arguments.dropFirst()), commands: commands, topHelp: topHelp) {
    case .help(let text):
        print(text)
        status = 0
    case .run(let invocation):
        if invocation.spec.writes && geteuid() != 0 {
            throw CommandFailure("'\(invocation.spec.path.joined(separator: " "))' changes the biounlock store, which only root may do; run it as root (e.g. with sudo)")
        }
        status = try invocation.spec.run(invocation)
    }
} catch let error as UsageError {
    Output.error(error.message)
    let help = (["biounlock"] + (error.command?.path ?? []) + ["--help"]).joined(separator: " ")
    Output.errorLine("Usage: \(error.command?.usage ?? "biounlock <command> [arguments]"); see '\(help)'.")
    status = 64
} catch let error as CommandFailure {
    Output.error(error.message)
    status = 1
} catch {
    Output.error("\(error)")
    status = 1
}
exit(status)
