import BiounlockCore
import BiounlockAdmin
import BiounlockSensors

/// `biounlock sensors [--json]`: the readers present (driver, id, name, enrol stages, features).
enum SensorsCommand {
    static let spec = CommandSpec(
        path: ["sensors"], positionals: [], options: [],
        abstract: L("List fingerprint readers."),
        discussion: L("For sensor libfprint, asks the helper (fprint_helper) to enumerate the readers without opening them."),
        writes: false, reportsJSON: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        let sensor = context.options.sensor
        let readers: [ReaderInfo]
        switch Sensors(logger: StderrLogger(), helperDiagnostics: .stderr).list(context.options) {
        case .success(let r): readers = r
        case .failure(let why): throw CommandFailure(L("cannot list readers: {reason}", ["reason": "\(why)"]))
        }
        if invocation.globals.json {
            Output.line(SensorsReport.json(sensor: sensor, readers: readers).serialized())
        } else {
            Output.line(SensorsReport.text(sensor: sensor, readers: readers))
        }
        return 0
    }
}
