import Foundation
import BiounlockSensors

/// The real fprintd (Debian's package) on a private D-Bus system bus, with libfprint's
/// virtual_device behind it and polkit mocked by python3-dbusmock's polkitd template (every
/// action allowed). Nothing of the host's bus, polkit or /var/lib/fprint is used.
///
/// One per test class (starting the bus and polkit takes about a second); fprintd itself can be
/// stopped and started again (`restart`) with other readers, its prints kept in `state`.
public final class FprintdDaemon {
    public enum Readers {
        /// virtual_device only (the usual laptop).
        case one
        /// virtual_device and virtual_device_storage: fprintd's default is the storage one.
        case two
        /// fprintd with no reader at all.
        case none
    }

    public let dir: String
    public var bus: String { dir + "/bus" }
    public var address: String { "unix:path=\(bus)" }
    /// libfprint's virtual_device socket (exists while fprintd has the device open).
    public var virtualDevice: String { dir + "/vd" }
    public var virtualStorage: String { dir + "/vds" }
    public var state: String { dir + "/state" }
    public var log: String { dir + "/fprintd.log" }
    public private(set) var readers: Readers = .one

    private var busProcess: Process?
    private var polkit: Process?
    /// python3-dbusmock's logind template, when asked for: fprintd then takes its sleep inhibitor
    /// and suspends and resumes its readers on PrepareForSleep (`prepareForSleep`).
    private var logind: Process?
    private var fprintd: Process?
    /// Another fprintd client (fprintd-verify) holding the device.
    private var otherClient: Process?
    private let spoofing = Locked(false)
    private let spoofCount = Locked(0)
    private var spoofer: Thread?

    /// The environment for fprintd's own clients (fprintd-enroll, fprintd-list, gdbus).
    public var clientEnvironment: [String: String] { ["PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": address] }

    public enum Polkit {
        /// python3-dbusmock's polkitd template, every action allowed.
        case mock
        /// Debian's real polkitd (it drops to the user polkitd), with the host's actions
        /// (fprintd's net.reactivated.fprint.*) and rules: it resolves each caller's bus name
        /// to the process and user the bus recorded for that connection, as on a desktop.
        case real
    }

    public let polkitKind: Polkit
    public var polkitLog: String { dir + "/polkit.log" }

    public init(readers: Readers = .one, polkit: Polkit = .mock, logind: Bool = false) throws {
        polkitKind = polkit
        // Short: libfprint silently truncates socket paths of 108 bytes or more.
        var template = Array("/tmp/bu-fpd.XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        dir = String(cString: p)
        // The real polkitd runs as the user polkitd: it must reach the bus socket in `dir`.
        if polkit == .real { chmod(dir, 0o711) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        do {
            try startBus()
            try startPolkit()
            if logind { try startLogind() }
            try start(readers)
        } catch {
            stopAll()
            throw error
        }
    }

    deinit { stopAll() }

    struct Failure: Error, CustomStringConvertible { let description: String }

    private func spawn(_ path: String, _ arguments: [String], environment: [String: String], output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        if !FileManager.default.fileExists(atPath: output) { _ = FileManager.default.createFile(atPath: output, contents: nil) }
        try launch(process) { p in
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            handle.seekToEndOfFile()
            p.standardOutput = handle
            p.standardError = handle
            p.standardInput = FileHandle.nullDevice
        }
        return process
    }

    private func startBus() throws {
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(bus)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_type="method_call"/><allow send_type="signal"/>
                <allow send_type="method_return"/><allow send_type="error"/>
                <allow receive_type="method_call"/><allow receive_type="signal"/>
                <allow receive_type="method_return"/><allow receive_type="error"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)
        busProcess = try spawn("/usr/bin/dbus-daemon", ["--config-file=\(dir)/bus.conf", "--nofork", "--nopidfile"],
                               environment: ["PATH": "/usr/bin:/bin"], output: dir + "/bus.log")
        try waitFor("the private bus") { access(self.bus, F_OK) == 0 }
    }

    private func startPolkit() throws {
        if polkitKind == .real {
            polkit = try spawn("/usr/lib/polkit-1/polkitd", ["--no-debug"], environment: clientEnvironment, output: polkitLog)
            try waitFor("polkitd on the bus", seconds: 20) {
                (try? self.gdbus(["call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                  "--method", "org.freedesktop.DBus.GetNameOwner", "org.freedesktop.PolicyKit1"]))?.status == 0
            }
            return
        }
        // Debian's python3: the module is a Debian package (python3-dbusmock).
        polkit = try spawn("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "polkitd"],
                           environment: clientEnvironment, output: dir + "/polkit.log")
        try waitFor("polkit (dbusmock)", seconds: 20) {
            (try? self.gdbus(["call", "--system", "--dest", "org.freedesktop.PolicyKit1", "--object-path",
                              "/org/freedesktop/PolicyKit1/Authority", "--method", "org.freedesktop.DBus.Mock.AllowUnknown", "true"]))?.status == 0
        }
    }

    private func startLogind() throws {
        logind = try spawn("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
                           environment: clientEnvironment, output: dir + "/logind.log")
        try waitFor("logind (dbusmock)", seconds: 20) {
            (try? self.gdbus(["call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                              "--method", "org.freedesktop.DBus.GetNameOwner", "org.freedesktop.login1"]))?.status == 0
        }
    }

    /// logind's PrepareForSleep(`sleeping`), broadcast as logind sends it before a suspend (true)
    /// and after the resume (false). fprintd suspends its readers on the first -- a verification
    /// running then ends with verify-unknown-error -- and resumes them on the second.
    public func prepareForSleep(_ sleeping: Bool) throws {
        let r = try gdbus(["call", "--system", "--dest", "org.freedesktop.login1", "--object-path", "/org/freedesktop/login1",
                           "--method", "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager", "PrepareForSleep",
                           "b", "[<\(sleeping)>]"])
        if r.status != 0 { throw Failure(description: "PrepareForSleep(\(sleeping)): \(r.stderr)") }
    }

    /// Starts fprintd with `readers` (it must not be running).
    public func start(_ readers: Readers) throws {
        self.readers = readers
        var environment = clientEnvironment
        environment["STATE_DIRECTORY"] = state
        // fprintd and libfprint log everything to `log` (a few thousand lines a class): a test that
        // fails shows what the daemon did meanwhile (`log(since:)`), on CI too.
        environment["G_MESSAGES_DEBUG"] = "all"
        switch readers {
        case .one:
            environment["FP_VIRTUAL_DEVICE"] = virtualDevice
            environment["FP_DRIVERS_WHITELIST"] = "virtual_device"
        case .two:
            environment["FP_VIRTUAL_DEVICE"] = virtualDevice
            environment["FP_VIRTUAL_DEVICE_STORAGE"] = virtualStorage
            environment["FP_DRIVERS_WHITELIST"] = "virtual_device:virtual_device_storage"
        case .none:
            environment["FP_DRIVERS_WHITELIST"] = "none_such_driver"
        }
        unlink(virtualDevice)
        unlink(virtualStorage)
        fprintd = try spawn("/usr/libexec/fprintd", ["-t"], environment: environment, output: log)
        try waitFor("fprintd on the bus") { self.running }
    }

    /// Whether fprintd owns its name on the bus.
    public var running: Bool {
        (try? gdbus(["call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                     "--method", "org.freedesktop.DBus.GetNameOwner", "net.reactivated.Fprint"]))?.status == 0
    }

    /// Kills fprintd (SIGKILL unless told otherwise) and waits until it is gone from the bus.
    /// Another client started by `startOtherClient` goes too.
    public func stop(signal: Int32 = SIGKILL) {
        if let otherClient, otherClient.isRunning {
            kill(otherClient.processIdentifier, SIGKILL)
            otherClient.waitUntilExit()
        }
        otherClient = nil
        guard let fprintd else { return }
        kill(fprintd.processIdentifier, signal)
        fprintd.waitUntilExit()
        self.fprintd = nil
        try? waitFor("fprintd to leave the bus") { !self.running }
    }

    /// Where `log` ends now: `log(since:)` shows what fprintd logged after it.
    public func logMark() -> UInt64 {
        var st = stat()
        return stat(log, &st) == 0 ? UInt64(st.st_size) : 0
    }

    /// The method calls fprintd began to authorize after `mark` and never allowed or refused: its
    /// "Requesting authorization from SENDER to call method 'M'" without a later "Authorization
    /// granted to SENDER ..." or "Authorization denied to SENDER ..." for the same call. fprintd
    /// authorizes each call on a worker thread (polkit's CheckAuthorization, and for Claim and
    /// ListEnrolledFingers the bus's GetConnectionUnixUser) before the method runs; read after a
    /// transaction, a call still there is one that fprintd, the bus or the polkit mock stalled on
    /// for the whole transaction -- the client's request never reached the method.
    /// Only the running daemon's lines count (a daemon killed mid-call never answers). A call
    /// still open is looked at again for up to `grace` seconds: one made as the transaction ended
    /// (a Release, say) may be answered a moment later; a stall has lasted the transaction.
    public func unansweredAuthorizations(since mark: UInt64, grace: Double = 3) -> [String] {
        let end = Date().addingTimeInterval(grace)
        var open = openAuthorizations(since: mark)
        while !open.isEmpty && Date() < end {
            usleep(100_000)
            open = openAuthorizations(since: mark)
        }
        return open
    }

    private func openAuthorizations(since mark: UInt64) -> [String] {
        guard let pid, fprintd?.isRunning == true else { return [] }
        let mine = "(fprintd:\(pid)): "
        var open: [String: Int] = [:]
        for line in log(since: mark, lines: Int.max).split(separator: "\n") where line.hasPrefix(mine) {
            for (marker, step) in [("Requesting authorization from ", 1), ("Authorization granted to ", -1), ("Authorization denied to ", -1)] {
                guard let r = line.range(of: marker) else { continue }
                let rest = line[r.upperBound...]
                guard let end = rest.range(of: "' for device") else { continue }
                let call = String(rest[..<end.lowerBound]) + "'"
                open[call, default: 0] += step
            }
        }
        return open.filter { $0.value > 0 }.keys.sorted()
    }

    /// fprintd's log from `mark` on (its last `lines` lines), for a failing test's message.
    public func log(since mark: UInt64, lines: Int = 80) -> String {
        guard let handle = FileHandle(forReadingAtPath: log) else { return "(no fprintd log at \(log))" }
        defer { try? handle.close() }
        try? handle.seek(toOffset: mark)
        let text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
        let all = text.split(separator: "\n", omittingEmptySubsequences: true)
        let head = all.count > lines ? "[\(all.count - lines) earlier lines left out]\n" : ""
        return head + all.suffix(lines).joined(separator: "\n")
    }

    /// fprintd's pid, while it runs.
    public var pid: Int32? { fprintd?.processIdentifier }

    public func restart(_ readers: Readers) throws {
        stop()
        try start(readers)
    }

    /// Stops the bus, polkit, fprintd and any client of theirs, and removes `dir` (as deinit does).
    public func shutDown() { stopAll() }

    private var stopped = false

    private func stopAll() {
        guard !stopped else { return }
        stopped = true
        stopSpoofing()
        // BIOUNLOCK_TEST_FPRINTD_DEBUG=/PATH keeps the last daemon's whole log there.
        if let keep = ProcessInfo.processInfo.environment["BIOUNLOCK_TEST_FPRINTD_DEBUG"], keep.hasPrefix("/") {
            try? FileManager.default.removeItem(atPath: keep)
            try? FileManager.default.copyItem(atPath: log, toPath: keep)
        }
        for p in [otherClient, fprintd, logind, polkit, busProcess].compactMap({ $0 }) where p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        otherClient = nil; fprintd = nil; logind = nil; polkit = nil; busProcess = nil
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func waitFor(_ what: String, seconds: Double = 10, _ condition: () -> Bool) throws {
        let end = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > end { throw Failure(description: "timed out waiting for \(what); see \(dir)") }
            usleep(20_000)
        }
    }

    // MARK: fprintd's own clients

    @discardableResult
    public func gdbus(_ arguments: [String]) throws -> ProcessResult {
        try runProcess("/usr/bin/gdbus", arguments, environment: clientEnvironment, timeout: 10)
    }

    /// Runs one of fprintd's tools (fprintd-enroll, fprintd-list, fprintd-delete, fprintd-verify).
    @discardableResult
    public func tool(_ name: String, _ arguments: [String], timeout: TimeInterval = 30) throws -> ProcessResult {
        try runProcess("/usr/bin/" + name, arguments, environment: clientEnvironment, timeout: timeout)
    }

    /// Enrols `finger` for `user` with the real `fprintd-enroll` (fprintd's default device), the
    /// way a user or GNOME Settings would: one `SCAN id` per enrolment stage (exactly: a stray
    /// command would be taken by the device's next action).
    public func enrol(user: String, finger: String = "right-index-finger", id: String, socket: String? = nil, stages: Int = 5) throws {
        let path = socket ?? virtualDevice
        let touches = Thread {
            for _ in 0..<stages {
                if case .failure = SimulatedFinger.send(bytes: Array("SCAN \(id)".utf8), to: path, waitMilliseconds: 3000) { break }
            }
        }
        touches.start()
        let r = try tool("fprintd-enroll", ["-f", finger, user])
        guard r.status == 0, r.stdout.contains("enroll-completed") else {
            throw Failure(description: "fprintd-enroll failed: \(r.stdout)\(r.stderr)")
        }
        while touches.isExecuting { usleep(10_000) }
    }

    /// The fingers `fprintd-list` shows for `user`.
    public func list(_ user: String) throws -> String {
        try tool("fprintd-list", [user]).stdout
    }

    /// Sends one virtual_device command (`SCAN id`, `RETRY n`, `ERROR n`, `UNPLUG`).
    public func touch(_ command: String, socket: String? = nil, waitMilliseconds: Int = 5000) {
        _ = SimulatedFinger.send(bytes: Array(command.utf8), to: socket ?? virtualDevice, waitMilliseconds: waitMilliseconds)
    }

    /// Whether libfprint's virtual_device listens on its socket now (fprintd has the device open):
    /// a listening Unix socket with that path in /proc/net/unix.
    public var listening: Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/unix", encoding: .utf8) else { return false }
        return table.split(separator: "\n").contains { line in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            return f.count >= 8 && f[3] == "00010000" && f[7] == virtualDevice
        }
    }

    /// Waits (bounded) until fprintd has opened the device for a client.
    public func waitUntilListening(seconds: Double = 10) {
        try? waitFor("the virtual device to be opened", seconds: seconds) { self.listening }
    }

    /// Whether fprintd waits for a finger on `device` now (its `finger-needed` property: a
    /// verification or an enrolment runs there), and what the read said when it could not tell
    /// (for a failure's message).
    private func fingerNeeded(device: String) -> (needed: Bool, trouble: String?) {
        do {
            let r = try gdbus(["call", "--system", "--dest", "net.reactivated.Fprint", "--object-path", device, "--method",
                               "org.freedesktop.DBus.Properties.Get", "net.reactivated.Fprint.Device", "finger-needed"])
            if r.stdout.contains("true") { return (true, nil) }
            if r.status == 0 && !r.timedOut { return (false, nil) }
            return (false, "gdbus exit \(r.status)\(r.timedOut ? " (killed after 10 s)" : ""): \(r.stderr.prefix(200))")
        } catch {
            return (false, "gdbus did not run: \(error)")
        }
    }

    /// Waits (bounded) until a verification runs on `device`: as long as the scenarios' own 30 s
    /// timeout (fprintd asks polkit before the Claim and the VerifyStart, slow on a loaded machine).
    /// A verification runs once the device's `finger-needed` reads true, or -- given `mark`, where
    /// fprintd's log stood before the client began -- 200 ms after the running daemon has logged
    /// its "start verification device" for it (fprintd loads the print and answers the VerifyStart
    /// in the same step; a touch sent early is queued by virtual_device for the verification).
    /// The log is read before each `finger-needed` read and, once it has the line, no read follows:
    /// CI saw the property read false for a whole verification, and saw a whole 30 s pass in this
    /// wait while fprintd verified (each read is a gdbus process, up to 10 s on a loaded machine).
    /// Nil once it runs; else what the wait saw (for the failure's message).
    public func waitUntilVerifying(device: String = "/net/reactivated/Fprint/Device/0", since mark: UInt64? = nil, seconds: Double = 30) -> String? {
        var polls = 0, troubles = 0
        var last: String?
        var loggedAt: Date?
        let started = Date()
        let seen = (try? waitFor("a verification on \(device)", seconds: seconds) {
            if let at = loggedAt { return Date().timeIntervalSince(at) >= 0.2 }
            if let mark, verificationLogged(since: mark) { loggedAt = Date(); return false }
            polls += 1
            let r = fingerNeeded(device: device)
            if let t = r.trouble { troubles += 1; last = t }
            return r.needed
        }) != nil
        if seen { return nil }
        return "fprintd showed no verification (finger-needed, or its log) in \(Int(Date().timeIntervalSince(started))) s: \(polls) reads, \(troubles) failed"
            + (last.map { "; the last failure: " + $0 } ?? "")
    }

    /// Waits until the running daemon has logged a line containing `text` after `mark`; whether
    /// it did within `seconds`.
    public func waitForLog(_ text: String, since mark: UInt64, seconds: Double = 10) -> Bool {
        (try? waitFor("fprintd to log \(text)", seconds: seconds) {
            guard let pid else { return false }
            let mine = "(fprintd:\(pid)): "
            return log(since: mark, lines: Int.max).split(separator: "\n").contains { $0.hasPrefix(mine) && $0.contains(text) }
        }) != nil
    }

    /// Whether the running daemon logged the start of a verification after `mark`.
    private func verificationLogged(since mark: UInt64) -> Bool {
        guard let pid else { return false }
        let mine = "(fprintd:\(pid)): "
        return log(since: mark, lines: Int.max).split(separator: "\n")
            .contains { $0.hasPrefix(mine) && $0.contains("start verification device") }
    }

    /// Starts the real `fprintd-verify USER` and waits until it verifies: it holds the device
    /// (Claim), as GNOME's lock screen or a pam_fprintd stack would.
    public func startOtherClient(user: String = "daemon") throws {
        let output = dir + "/other-client.log"
        // A fresh file: spawn appends, and an earlier client's "Verify started" must not pass for
        // this one's (this client would then claim the device after the module did).
        unlink(output)
        // Line-buffered, so that "Verify started!" reaches the file at once.
        otherClient = try spawn("/usr/bin/stdbuf", ["-oL", "/usr/bin/fprintd-verify", user], environment: clientEnvironment, output: output)
        try waitFor("fprintd-verify to start verifying") {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("Verify started")
        }
    }

    /// Overwrites a print file of fprintd's (it still lists the finger, but cannot load it).
    public func damage(_ path: String) throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        try original.write(to: URL(fileURLWithPath: path + ".saved"))
        try Data("not a print".utf8).write(to: URL(fileURLWithPath: path))
    }

    public func repair(_ path: String) throws {
        let saved = try Data(contentsOf: URL(fileURLWithPath: path + ".saved"))
        try saved.write(to: URL(fileURLWithPath: path))
        unlink(path + ".saved")
    }

    /// Another bus client that, until `stopSpoofing`, keeps emitting `VerifyStatus("verify-match",
    /// true)` on fprintd's first device: broadcast, and unicast to every connection on the bus
    /// (as any local user could). None of it comes from fprintd's bus name.
    public func startSpoofing(device: String = "/net/reactivated/Fprint/Device/0") {
        spoofing.mutate { $0 = true }
        let thread = Thread { [spoofing, spoofCount] in
            while spoofing.value {
                var targets: [String?] = [nil]
                if let names = try? self.gdbus(["call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                                 "--method", "org.freedesktop.DBus.ListNames"]) {
                    targets += names.stdout.split(whereSeparator: { $0 == "'" }).map(String.init).filter { $0.hasPrefix(":") }
                }
                for target in targets {
                    var args = ["emit", "--system", "--object-path", device, "--signal", "net.reactivated.Fprint.Device.VerifyStatus"]
                    if let target { args += ["--dest", target] }
                    if (try? self.gdbus(args + ["'verify-match'", "true"]))?.status == 0 { spoofCount.mutate { $0 += 1 } }
                }
            }
        }
        spoofer = thread
        thread.start()
        // Running before the transaction begins.
        try? waitFor("the spoofer to start") { spoofCount.value > 0 }
    }

    public func stopSpoofing() {
        spoofing.mutate { $0 = false }
        while spoofer?.isExecuting == true { usleep(10_000) }
        spoofer = nil
    }

    /// How many spoofed signals were sent.
    public var spoofed: Int { spoofCount.value }

    /// Claims `device` for `user` and releases it again in one connection, as the next client
    /// would: nil when that worked, else fprintd's error (`net.reactivated.Fprint.Error.AlreadyInUse`
    /// while someone still holds it).
    public func claimAndRelease(user: String = "daemon", device: String = "/net/reactivated/Fprint/Device/0") throws -> String? {
        let script = """
            import sys
            from gi.repository import Gio, GLib
            bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
            try:
                bus.call_sync("net.reactivated.Fprint", sys.argv[2], "net.reactivated.Fprint.Device", "Claim", GLib.Variant("(s)", (sys.argv[3],)), None, 0, 5000, None)
                bus.call_sync("net.reactivated.Fprint", sys.argv[2], "net.reactivated.Fprint.Device", "Release", None, None, 0, 5000, None)
                print("released")
            except GLib.Error as e:
                print(Gio.DBusError.get_remote_error(e) or e.message)
            """
        let r = try runProcess("/usr/bin/python3", ["-c", script, address, device, user], environment: clientEnvironment, timeout: 20)
        let out = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return out == "released" ? nil : out + r.stderr
    }

    /// The next client, already connected and waiting (`startClaimer`): each `claimAndRelease()`
    /// claims the device and releases it again at once -- no process start, no connection set-up
    /// between the moment a transaction returns and the Claim, as a pre-connected desktop client
    /// (GNOME's lock screen, a second sudo's helper racing the first's end) would.
    public final class Claimer {
        let process: Process
        let input: FileHandle
        let output: FileHandle
        var buffered: [UInt8] = []

        init(process: Process, input: FileHandle, output: FileHandle) {
            self.process = process; self.input = input; self.output = output
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        /// The claimer's next line (bounded), or nil.
        func line(seconds: Double) -> String? {
            let end = Date().addingTimeInterval(seconds)
            while true {
                if let i = buffered.firstIndex(of: 10) {
                    let text = String(decoding: buffered[..<i], as: UTF8.self)
                    buffered.removeFirst(i + 1)
                    return text
                }
                let left = Int32(max(0, end.timeIntervalSinceNow * 1000))
                var p = pollfd(fd: output.fileDescriptor, events: Int16(POLLIN), revents: 0)
                guard left > 0, poll(&p, 1, left) == 1 else { return nil }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = read(output.fileDescriptor, &chunk, chunk.count)
                guard n > 0 else { return nil }
                buffered += chunk[..<n]
            }
        }

        /// nil when the Claim succeeded (and the Release after it), else fprintd's error name.
        public func claimAndRelease() -> String? {
            input.write(Data("\n".utf8))
            let answer = line(seconds: 20) ?? "(no answer from the claimer)"
            return answer == "released" ? nil : answer
        }
    }

    /// Starts a Claimer for `user` on `device`: connected to the bus, fprintd's name resolved and
    /// the device's object known before the first claim.
    public func startClaimer(user: String = "daemon", device: String = "/net/reactivated/Fprint/Device/0") throws -> Claimer {
        let script = """
            import sys
            from gi.repository import Gio, GLib
            bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
            bus.call_sync("net.reactivated.Fprint", "/net/reactivated/Fprint/Manager", "net.reactivated.Fprint.Manager", "GetDevices", None, None, 0, 5000, None)
            print("ready", flush=True)
            for _ in sys.stdin:
                try:
                    bus.call_sync("net.reactivated.Fprint", sys.argv[2], "net.reactivated.Fprint.Device", "Claim", GLib.Variant("(s)", (sys.argv[3],)), None, 0, 5000, None)
                    bus.call_sync("net.reactivated.Fprint", sys.argv[2], "net.reactivated.Fprint.Device", "Release", None, None, 0, 5000, None)
                    print("released", flush=True)
                except GLib.Error as e:
                    print(Gio.DBusError.get_remote_error(e) or e.message, flush=True)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, address, device, user]
        process.environment = clientEnvironment
        let (input, output) = try launch(process) { p in
            let input = Pipe(), output = Pipe()
            p.standardInput = input
            p.standardOutput = output
            p.standardError = FileHandle.nullDevice
            return (input, output)
        }
        let claimer = Claimer(process: process, input: input.fileHandleForWriting, output: output.fileHandleForReading)
        guard claimer.line(seconds: 20) == "ready" else { throw Failure(description: "the claimer did not connect to \(address)") }
        return claimer
    }
}
