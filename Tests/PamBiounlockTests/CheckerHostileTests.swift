import BiounlockSystem
import XCTest
import TestSupport
import Foundation
import Glibc
import BiounlockCore
import BiounlockStore
import BiounlockFprintProtocol
import BiounlockCheckProtocol
import BiounlockCheck

/// biounlock-check run by hand by a hostile user (docs/SECURITY.md, "biounlock-check"): setuid
/// root, started as `daemon` with the environment, arguments and descriptors that user chooses,
/// talking the protocol from the test's end of its socket. It grants nothing it should not, uses
/// nothing the caller names, and never dies of a signal.
final class CheckerHostileTests: XCTestCase {
    var world: CheckerWorld!
    var evil = ""
    var evilStore: String { evil + "/evil.db" }
    var marker: String { evil + "/preloaded" }

    override func setUpWithError() throws {
        world = try CheckerWorld()
        // The user's own directory, with a store of the user's making (its PIN 9999, its finger
        // "evil"), a socket path of the user's choosing and a library to preload.
        evil = world.fixture.dir + "/evil"
        try FileManager.default.createDirectory(atPath: evil, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        do { // closed at the end of this block: no -wal or -shm left behind
            let store = try Store.open(path: evilStore, mode: .administer)
            try store.saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array("evil".utf8), created: 1), user: "daemon")
            try store.setPasscode(StoredPasscode(hash: try Passcode.hash(try XCTUnwrap(Secret(bytes: Array("9999".utf8))), opsLimit: 1, memLimit: 8192),
                                                 kind: .pin), user: "daemon", at: 1)
            try store.setEnabled(true, user: "daemon", service: nil, at: 1)
        }
        let source = evil + "/evil.c"
        try "#include <stdio.h>\n__attribute__((constructor)) static void evil(void) { FILE *f = fopen(\"\(marker)\", \"w\"); if (f) fclose(f); }\n"
            .write(toFile: source, atomically: false, encoding: .utf8)
        let cc = try runProcess("/opt/swift/usr/bin/clang", ["-shared", "-fPIC", "-o", evil + "/evil.so", source])
        XCTAssertEqual(cc.status, 0, cc.stderr)
        // The bait is live: in an ordinary program it runs.
        _ = try runProcess("/usr/bin/env", ["LD_PRELOAD=\(evil)/evil.so", "/bin/true"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker), "the preload library works")
        try FileManager.default.removeItem(atPath: marker)
        _ = try runProcess("/bin/chown", ["-R", "1:1", evil])
        evilFiles = try FileManager.default.contentsOfDirectory(atPath: evil).sorted()
    }
    /// What the user's directory holds after the set-up (the store and its lock file, the library).
    var evilFiles: [String] = []

    override func tearDown() { world = nil }

    var hostileEnvironment: [String] {
        ["LD_PRELOAD=\(evil)/evil.so", "LD_LIBRARY_PATH=\(evil)", "BIOUNLOCK_DB=\(evilStore)", "BIOUNLOCK_CONFIG=\(evil)/x.conf",
         "FP_VIRTUAL_DEVICE=\(evil)/vd", "FP_DRIVERS_WHITELIST=virtual_device", "G_MESSAGES_DEBUG=all",
         "SWIFT_BACKTRACE=enable=yes,swift-backtrace=\(evil)/bt", "SWIFT_ROOT=\(evil)", "SWIFT_DEBUG_FAILED_TYPE_LOOKUP=1",
         "GLIBC_TUNABLES=glibc.malloc.check=3", "MALLOC_CHECK_=3", "LANG=tr_TR.UTF-8", "LC_ALL=tr_TR.UTF-8", "TZ=\(evil)/tz",
         "LANGUAGE=\(evil)/zh_CN:zh_CN", "LOCPATH=\(evil)", "NLSPATH=\(evil)/%N", "TEXTDOMAINDIR=\(evil)",
         "HOME=\(evil)", "TMPDIR=\(evil)", "SQLITE_TMPDIR=\(evil)", "HOSTALIASES=\(evil)/h", "LOCALDOMAIN=evil", "PATH=\(evil)"]
    }

    var oddArguments: [String] {
        ["--db=\(evilStore)", "db=\(evilStore)", "sim_socket=\(evil)/mine", "config=/proc/self/environ", "--user", "root", "-h", "",
         String(repeating: "x", count: 100_000)] + Array(repeating: "x", count: 200)
    }

    struct Run {
        let status: Int32
        let decision: Result<Decision, CheckerClient.Failure>?
        let conversation: [String]
        let log: [String]
    }

    /// Starts the setuid checker as daemon: `env -i ENVIRONMENT checker ARGUMENTS`, with its
    /// socket on fd 3 unless `noSocket`, and 0-2 closed when `closeStandard`; then either the
    /// module's relay (`request`) or the raw `frames` on the test's end.
    func run(environment: [String] = [], arguments: [String] = [], closeStandard: Bool = false, noSocket: Bool = false,
             request: CheckRequest? = nil, answers: [String] = [], frames: [[UInt8]] = []) throws -> Run {
        try? FileManager.default.removeItem(atPath: world.syslogFile)
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds), 0)
        let theirs = fcntl(fds[1], F_DUPFD_CLOEXEC, Int32(10))
        close(fds[1])
        let ours = FrameChannel(fd: fds[0], limit: CheckProtocol.maximumFrameLength, sensitive: true)
        let redirect = (closeStandard ? "<&- >&- 2>&-" : "") + (noSocket ? " 3<&-" : "")
        let command = world.wrapper(asUser: true, redirect: redirect) + ["/usr/bin/env", "-i"] + environment + [world.checker] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, theirs, 3)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, world.fixture.dir + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        XCTAssertEqual(ChildLaunch.locked { posix_spawn(&pid, command[0], &actions, nil, argv, envp) }, 0)
        close(theirs)

        var decision: Result<Decision, CheckerClient.Failure>?
        let conversation = Scripted(answers)
        if let request {
            decision = CheckerClient.relay(request, on: ours, conversation: conversation, logger: Discard(), silenceMilliseconds: 20_000)
        } else {
            for f in frames { _ = ours.send(f, until: monotonicMilliseconds() + 2000) }
            // Whatever comes back, until the checker closes its end.
            while case .success = ours.receive(until: monotonicMilliseconds() + 20_000) {}
        }
        ours.close()
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        XCTAssertTrue(status & 0x7f == 0, "the namespace's shell exited normally")
        let log = ((try? String(contentsOfFile: world.syslogFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        return Run(status: (status >> 8) & 0xff, decision: decision, conversation: conversation.transcript, log: CheckerWorld.messages(log))
    }

    var evilIsUntouched: Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: evil))?.sorted() ?? []
        guard names == evilFiles else { return false }   // no -wal/-shm, no marker, no socket
        // Read-only, with the sqlite3 tool: opening it as a store would refuse the user's directory.
        let r = try? runProcess("/usr/bin/sqlite3", ["file:\(evilStore)?mode=ro&immutable=1",
                                                     "SELECT count(*) FROM events; SELECT passcode_failures, last_success IS NULL FROM users"])
        return r?.stdout == "0\n0|1\n"
    }

    func testTheEnvironmentAndArgumentsOfTheCallerChangeNothing() throws {
        let words = ["db=\(evilStore)", "sim_socket=\(evil)/mine", "config=/proc/self/environ", "passcode_lockout=1000", "touch_first=0"]
        let request = CheckRequest(user: "daemon", service: "i3lock", words: words)
        // The user's own PIN (9999, in the user's store) is a wrong PIN for the real store.
        let r = try run(environment: hostileEnvironment, arguments: oddArguments, request: request, answers: ["9999"])
        XCTAssertEqual(r.status, 0, "answered and exited normally: \(r.log)")
        XCTAssertEqual(try r.decision?.get(), Decision(.unavailable, .wrongPasscode, method: .passcode))
        XCTAssertTrue(r.log.contains { $0.contains("not taken from the caller: db, sim_socket, config, passcode_lockout") }, "\(r.log)")
        XCTAssertTrue(evilIsUntouched, "nothing of the user's was used or created (\((try? FileManager.default.contentsOfDirectory(atPath: evil)) ?? []))")
        XCTAssertEqual(try world.user("daemon")?.passcodeFailures, 1, "the real store counted it")
        // And the real PIN works through all of it.
        let ok = try run(environment: hostileEnvironment, arguments: oddArguments, request: request, answers: [ModuleFixture.pin])
        XCTAssertEqual(try ok.decision?.get(), Decision(.success(.passcode), .passcodeAccepted, method: .passcode))
        XCTAssertTrue(evilIsUntouched)
    }

    /// The language the module relays chooses a catalog of the checker's own locale_dir and
    /// nothing else: a name that is a path (to a catalog of the user's own, here) is English and
    /// a log line; the caller's LANGUAGE, LOCPATH and NLSPATH are gone before anything is read.
    func testTheCallersLanguageNamesNoFile() throws {
        try world.config("locale_dir = \(buildDirectory)/locale")
        let own = world.fixture.dir + "/own-locale"
        try FileManager.default.createDirectory(atPath: own + "/zh_CN/LC_MESSAGES", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: buildDirectory + "/locale/zh_CN/LC_MESSAGES/biounlock.mo",
                                         toPath: own + "/zh_CN/LC_MESSAGES/biounlock.mo")
        _ = try runProcess("/bin/chown", ["-R", "1:1", own])
        let english = ["PROMPT: PIN or password for unlocking the screen, or touch the reader, then press Enter: "]
        for (locale, language) in [(own + "/zh_CN", ""), ("../../../.." + own + "/zh_CN", ""), ("C.UTF-8", own + "/zh_CN"),
                                   ("zh_CN.UTF-8", "zh_CN:" + own)] {
            let request = CheckRequest(user: "daemon", service: "i3lock", words: ["touch_first=0"], locale: locale, language: language)
            let r = try run(environment: hostileEnvironment + ["LOCPATH=\(own)"], request: request, answers: [ModuleFixture.pin])
            XCTAssertEqual(try r.decision?.get(), Decision(.success(.passcode), .passcodeAccepted, method: .passcode), locale)
            XCTAssertEqual(r.conversation, english, "\(locale) \(language)")
            XCTAssertTrue(r.log.contains { $0.contains("the caller's locale is not a plain name; English") }, "\(r.log)")
        }
        // A plain name, with the same hostile environment: the checker's own catalog.
        let request = CheckRequest(user: "daemon", service: "i3lock", words: ["touch_first=0"], locale: "zh_CN.UTF-8")
        let r = try run(environment: hostileEnvironment, request: request, answers: [ModuleFixture.pin])
        XCTAssertEqual(r.conversation, ["PROMPT: PIN 码或密码（解锁屏幕），或触摸指纹读取器后按回车键："])
        XCTAssertTrue(evilIsUntouched)
    }

    func testClosedDescriptorsChangeNothing() throws {
        let r = try run(closeStandard: true, request: CheckRequest(user: "daemon", service: "i3lock", words: ["touch_first=0"]),
                        answers: [ModuleFixture.pin])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(try r.decision?.get(), Decision(.success(.passcode), .passcodeAccepted, method: .passcode))
        let store = try Store.open(path: world.fixture.storePath, mode: .administer)
        XCTAssertEqual(try store.recentEvents().first?.reason, "passcode-accepted", "the store was written as a store, not as stderr")
        let check = try runProcess("/usr/bin/sqlite3", [world.fixture.storePath, "PRAGMA integrity_check"])
        XCTAssertEqual(check.stdout, "ok\n")
    }

    func testWithoutItsSocketItSaysHowItIsUsedAndChecksNothing() throws {
        let r = try run(environment: hostileEnvironment, arguments: oddArguments, noSocket: true)
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(try String(contentsOfFile: world.fixture.dir + "/stderr", encoding: .utf8).contains("takes no arguments"))
        XCTAssertTrue(evilIsUntouched)
    }

    func testMalformedFramesEndTheExchangeWithoutASignal() throws {
        let frames: [[[UInt8]]] = [
            [[0xde, 0xad, 0xbe, 0xef]],                                          // not even a frame's worth
            [[0x7f, 0xff, 0xff, 0xff]],                                          // a 2 GiB frame announced
            [FrameBuffer.frame([CheckProtocol.version &+ 1, 1])],                // another version
            [FrameBuffer.frame(ModuleMessage.authenticate(CheckRequest(user: "daemon", service: "i3lock", words: ["touch_first=0"])).payload),
             FrameBuffer.frame([CheckProtocol.version, 1, 0, 0])],               // a second request where an answer belongs
            [FrameBuffer.frame(ModuleMessage.authenticate(CheckRequest(user: "daemon", service: "a/b")).payload)],
            [FrameBuffer.frame(ModuleMessage.authenticate(CheckRequest(user: "daemon", service: "i3lock", words: ["touch_first=0"])).payload),
             FrameBuffer.frame([CheckProtocol.version, 2, 1, 0, 0, 0x10, 0])],   // an answer longer than announced
        ]
        for (i, f) in frames.enumerated() {
            let r = try run(frames: f.map { $0 })
            XCTAssertEqual(r.status, 0, "input \(i): \(r.log)")
        }
        XCTAssertEqual(try world.user("daemon")?.passcodeFailures, 0, "nothing counted, nothing checked")
        XCTAssertNil(try world.user("daemon")?.lastSuccess)
    }
}

private final class Scripted: Conversation {
    var answers: [String]
    var transcript: [String] = []
    init(_ answers: [String]) { self.answers = answers }
    func info(_ text: String) { transcript.append("INFO: \(text)") }
    func error(_ text: String) { transcript.append("ERROR: \(text)") }
    func handOverPassword(_ secret: Secret) -> Bool { true }
    func promptSecret(_ prompt: String) -> ConversationReply {
        transcript.append("PROMPT: \(prompt)")
        guard !answers.isEmpty else { return .failed }
        let a = answers.removeFirst()
        return a.isEmpty ? .empty : .answer(Secret(bytes: Array(a.utf8))!)
    }
}

private final class Discard: Logger { func log(_ level: LogLevel, _ message: String) {} }
