import BiounlockCore
import BiounlockSystem

// biounlock: the admin CLI. This file only dispatches; each command lives in Commands/ and the
// logic it needs lives in the libraries the module uses too.
// Exit codes: 0 success, 1 failure (including "must be root"), 64 usage error.

// The CLI is a program of its own: it takes the locale of its environment (the module never
// does: its host has). Texts for people are translated (Localization.swift); with --json
// everything it prints is English, like its exit codes and the config words.
LocaleSetting.set(.all, to: "")
Localization.use(directory: CLILocale.directory(arguments: Array(CommandLine.arguments.dropFirst())))

let commands: [CommandSpec] = [
    EnrolCommand.spec, UnenrolCommand.spec,
    PasscodeCommand.set, PasscodeCommand.clear,
    EnableCommand.enable, EnableCommand.disable,
    StatusCommand.spec, ListCommand.spec, DoctorCommand.spec, LogCommand.spec, VerifyCommand.spec, ResetCommand.spec,
    ForgetCommand.spec, ForgetPasswordCommand.spec, MigrateCommand.spec,
    SensorsCommand.spec, VersionCommand.spec,
    SimCommandLine.scan, SimCommandLine.retry, SimCommandLine.error, SimCommandLine.unplug, SimCommandLine.sleep,
]

let topHelp = """
    \(L("biounlock: biometric-or-passcode authentication for Linux PAM (admin tool)"))

    \(L("USAGE: {usage}", ["usage": "biounlock " + L("[global options] <command> [arguments]")]))

    \(L("COMMANDS:"))
    \(commandList(commands.map { ($0.shortUsage, $0.abstract) }).joined(separator: "\n"))

    \(L("GLOBAL OPTIONS:"))
    \(GlobalOptions.helpLines(reporting: commands.filter(\.reportsJSON).map { $0.path.joined(separator: " ") }).joined(separator: "\n"))

    \(L("Run '{command}' for a command's details.", ["command": "biounlock <command> --help"]))
    """

// --json anywhere on the line is the flag (the parser takes it wherever it is): English from here
// on, so that the usage errors the parser finds (an option's value out of range, say) are English too.
if CommandLine.arguments.dropFirst().contains("--json") { CLILocale.english() }

// Run by a user, the commands about their own account go through biounlockd (Client/UserMode).
if ProcessIdentity.effectiveUserID != 0, let status = UserMode.run(Array(CommandLine.arguments.dropFirst())) { ProcessState.exit(status) }

let status: Int32
do {
    switch try Parser.parse(Array(CommandLine.arguments.dropFirst()), commands: commands, topHelp: topHelp) {
    case .help(let text):
        print(text)
        status = 0
    case .run(let invocation):
        if invocation.spec.writes && ProcessIdentity.effectiveUserID != 0 {
            throw CommandFailure(L("'{command}' changes the biounlock store, which only root may do; run it as root (e.g. with sudo)",
                                   ["command": invocation.spec.path.joined(separator: " ")]))
        }
        status = try invocation.spec.run(invocation)
    }
} catch let error as UsageError {
    Output.error(error.message)
    let help = (["biounlock"] + (error.command?.path ?? []) + ["--help"]).joined(separator: " ")
    Output.errorLine(L("Usage: {usage}; see '{help}'.", ["usage": error.command?.usage ?? "biounlock <command> [arguments]", "help": help]))
    status = 64
} catch let error as CommandFailure {
    Output.error(error.message)
    status = 1
} catch {
    Output.error("\(error)")
    status = 1
}
ProcessState.exit(status)
