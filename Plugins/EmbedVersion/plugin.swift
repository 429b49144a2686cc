import Foundation
import PackagePlugin

/// Embeds ./VERSION into the CLI: a build command that writes `Version.swift` (one constant,
/// `biounlockVersion`) from the file, so that `biounlock --version` says what the package says
/// (scripts/package reads the same file). SwiftPM runs it again whenever VERSION changes
/// (inputFiles) and never otherwise; the output depends on the file alone. /bin/sh does the
/// work: no tool to build first. A VERSION that is not a Debian version (what scripts/package
/// accepts) fails the build rather than end up in a Swift string.
@main
struct EmbedVersion: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let version = context.package.directoryURL.appendingPathComponent("VERSION")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("Version.swift")
        let script = #"""
            v=$(tr -d ' \n' <"$1") || exit 1
            case "$v" in
                [0-9]*) ;;
                *) echo "VERSION '$v' is not a Debian version" >&2; exit 1 ;;
            esac
            case "$v" in
                *[!A-Za-z0-9.+~-]*) echo "VERSION '$v' is not a Debian version" >&2; exit 1 ;;
            esac
            printf '// Generated from VERSION by Plugins/EmbedVersion: do not edit.\n/// The package version (./VERSION).\nlet biounlockVersion = "%s"\n' "$v" >"$2"
            """#
        return [.buildCommand(displayName: "Embedding VERSION in \(target.name)",
                              executable: URL(fileURLWithPath: "/bin/sh"),
                              arguments: ["-c", script, "embed-version", version.path, output.path],
                              inputFiles: [version], outputFiles: [output])]
    }
}
