import BiounlockSystem
import BiounlockCore
import BiounlockFprintProtocol
import BiounlockService
import BiounlockServiceProtocol
import BiounlockBus

// biounlockd: a user's own biometric unlock, without root (biounlockd(8), docs/DESIGN.md).
//
//   biounlockd [--db PATH] [--config PATH] [--sensor KIND] [--sim-socket PATH]
//              [--idle-timeout SECONDS] [--pam-confdir DIR] [--log-stderr] [--version]
//   biounlockd --reauth-worker|--enrol-worker --parent PID     (started by biounlockd itself)
//
// Started by D-Bus activation (systemd's biounlockd.service, Type=dbus) as root; leaves after
// a minute without work. The options are root's (the unit, the activation file, tests): a user
// who runs the program gets a process of their own, which can neither own the bus name (the
// bus policy) nor read the store. Exit codes: 0 left when idle or told to, 1 could not serve,
// 64 usage, 77 not root.

final class ServiceLogger: Logger, @unchecked Sendable {
    let toStderr: Bool
    init(toStderr: Bool) {
        self.toStderr = toStderr
        SystemLog.open(identifier: "biounlockd")
    }
    func log(_ level: LogLevel, _ message: String) {
        let priority: SystemLog.Priority
        switch level {
        case .error: priority = .error
        case .warning: priority = .warning
        case .notice: priority = .notice
        case .info: priority = .info
        case .debug: priority = .debug
        }
        SystemLog.write(priority, message)
        if toStderr { try? FileDescriptor.standardError.writeAll(Array("biounlockd: \(level): \(message)\n".utf8)) }
    }
}

func usage(_ problem: String) -> Never {
    try? FileDescriptor.standardError.writeAll(Array("biounlockd: \(problem)\nUsage: biounlockd [--db PATH] [--config PATH] [--sensor KIND] [--sim-socket PATH] [--idle-timeout SECONDS] [--log-stderr]\n".utf8))
    ProcessState.exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())

// ---- the workers: the same program, started by the service with a clean environment ----
if let mode = arguments.first, mode == "--reauth-worker" || mode == "--enrol-worker" {
    guard arguments.count == 3, arguments[1] == "--parent", let parent = Int32(arguments[2]) else { usage("a worker needs --parent PID") }
    // Dies with the service (a kill -9 mid-enrolment leaves no worker on the reader); a worker
    // whose service is gone already has no one to answer.
    guard ProcessState.dieWithParent(parent) else { ProcessState.exit(1) }
    _ = FileSystem.setUmask(0o077)
    let logger = ServiceLogger(toStderr: true) // /dev/null unless the service logs to stderr
    let channel = FrameChannel(fd: FprintProtocol.helperDescriptor, limit: 8 << 20, sensitive: mode == "--reauth-worker")
    let status = mode == "--reauth-worker" ? ReauthWorker.run(channel: channel) : EnrolWorker.run(channel: channel, logger: logger)
    channel.close()
    ProcessState.exit(status)
}

// ---- the service ----
var words: [String] = []
var idleSeconds: Int64 = 60
var pamConfdir: String?
var logToStderr = false
var index = 0
let flags = ["--db": "db", "--config": "config", "--sensor": "sensor", "--sim-socket": "sim_socket"]
while index < arguments.count {
    let arg = arguments[index]
    func value() -> String {
        index += 1
        guard index < arguments.count else { usage("\(arg) needs a value") }
        return arguments[index]
    }
    if let key = flags[arg] {
        words.append("\(key)=\(value())")
    } else if arg == "--idle-timeout" {
        guard let n = boundedInteger(value(), in: 1...86_400) else { usage("--idle-timeout takes 1-86400 seconds") }
        idleSeconds = Int64(n)
    } else if arg == "--pam-confdir" {
        pamConfdir = value()
    } else if arg == "--log-stderr" {
        logToStderr = true
    } else if arg == "--version" {
        print("biounlockd \(ServiceVersion.current)")
        ProcessState.exit(0)
    } else {
        usage("unknown argument '\(sanitizedForLog(arg))'")
    }
    index += 1
}

let logger = ServiceLogger(toStderr: logToStderr)
guard ProcessIdentity.effectiveUserID == 0 else {
    logger.log(.error, "biounlockd must run as root (it is started by D-Bus activation)")
    ProcessState.exit(77)
}
_ = FileSystem.setUmask(0o077)
try? FileSystem.changeDirectory("/")
ProcessState.ignoreBrokenPipe()

let options: Options
switch Configuration.load(arguments: words) {
case .failure(let failure):
    logger.log(.error, "\(failure)")
    ProcessState.exit(1)
case .success(let loaded):
    loaded.report(to: logger)
    options = loaded.options
}

// The workers are this program again: its own absolute path (the unit's ExecStart, the
// activation file's Exec), else where the package installs it.
let selfPath = CommandLine.arguments.first.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/usr/libexec/biounlock/biounlockd"
let launch = WorkerLaunch(path: selfPath, optionWords: words, pamConfdir: pamConfdir, shareStandardError: logToStderr)

let connection: BusConnection
switch BusConnection.system() {
case .failure(let e):
    logger.log(.error, "cannot connect to the system bus: \(e)")
    ProcessState.exit(1)
case .success(let c):
    connection = c
}
connection.exitOnClose(true)

var server: Server?
let environment = ServiceEnvironment(
    authority: PolkitAuthority(connection: connection),
    reauthenticator: WorkerReauthenticator(launch: launch),
    enrolments: WorkerEnrolmentRunner(launch: launch),
    logger: logger,
    emit: { signal in server?.emit(signal) })
let manager = Manager(options: options, environment: environment)
server = Server(connection: connection, manager: manager, idleMilliseconds: idleSeconds * 1000, logger: logger)
guard let server, server.start() else { ProcessState.exit(1) }
logger.log(.info, "serving \(ManagerAPI.busName) (store \(options.storePath), sensor \(options.sensor.rawValue))")
server.run()
ProcessState.exit(0)
