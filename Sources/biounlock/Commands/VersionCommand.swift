import BiounlockCore
import BiounlockAdmin

/// `biounlock version` (and `biounlock --version`): the package version, from ./VERSION at build
/// time (Plugins/EmbedVersion writes `biounlockVersion`).
enum VersionCommand {
    static let spec = CommandSpec(
        path: ["version"], positionals: [], options: [],
        abstract: L("Show biounlock's version."), discussion: "",
        writes: false, reportsJSON: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        if invocation.globals.json {
            Output.line(JSON.object([("version", .string(biounlockVersion))]).serialized())
        } else {
            Output.line("biounlock \(biounlockVersion)")
        }
        return 0
    }
}
