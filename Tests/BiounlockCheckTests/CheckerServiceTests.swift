import BiounlockSystem
import XCTest
import Foundation
import TestSupport
import Glibc
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockCheckProtocol
@testable import BiounlockCheck

final class ScriptedConversation: Conversation {
    var replies: [ConversationReply]
    var transcript: [String] = []
    var handedOver: [String] = []
    init(_ replies: [ConversationReply] = []) { self.replies = replies }
    func info(_ text: String) { transcript.append("INFO: \(text)") }
    func error(_ text: String) { transcript.append("ERROR: \(text)") }
    func handOverPassword(_ secret: Secret) -> Bool {
        handedOver.append(secret.withBytes { String(decoding: $0, as: UTF8.self) })
        return true
    }
    func promptSecret(_ prompt: String) -> ConversationReply {
        transcript.append("PROMPT: \(prompt)")
        return replies.isEmpty ? .failed : replies.removeFirst()
    }
}

final class MemoryLogger: Logger, @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func log(_ level: LogLevel, _ message: String) { lock.lock(); lines.append(message); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return lines.joined(separator: "\n") }
}

func answer(_ text: String) -> ConversationReply {
    text.isEmpty ? .empty : .answer(Secret(bytes: Array(text.utf8))!)
}

/// biounlock-check's service in-process: its end of a socketpair served on a thread, the module's
/// end driven by the module's own relay loop (CheckerClient.relay) with a scripted conversation.
/// The store is real (SQLite in a root-only temp dir); the sensor is the simulated one.
final class CheckerServiceTests: XCTestCase {
    var dir = ""
    var store: Store!
    let caller = Account(name: "daemon", uid: 1)
    let pin = "2468"
    var storePath: String { dir + "/db/biounlock.db" }
    var socket: String { dir + "/sim" }

    override func setUpWithError() throws {
        var template = Array("/tmp/bu-chk.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        store = try Store.open(path: storePath, mode: .administer)
        try store.saveTemplate(Template(finger: .rightIndex, sensor: .simulated, data: Array("daemon-right-index".utf8), created: 1), user: "daemon")
        let hash = try Passcode.hash(try XCTUnwrap(Secret(bytes: Array(pin.utf8))), opsLimit: 1, memLimit: 8192)
        try store.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: "daemon", at: 1)
        try store.setEnabled(true, user: "daemon", service: nil, at: 1)
    }

    override func tearDown() {
        store = nil
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// The checker's settings, as its root-owned config file would give them.
    var fileOptions: Options {
        var o = Options()
        o.storePath = storePath
        o.sensor = .simulated
        o.simSocket = socket
        o.timeoutSeconds = 3
        o.requirePasscode = .none
        o.lidPath = dir + "/lid"
        o.logindPath = dir + "/sessions"
        return o
    }

    static func openStore(_ o: Options) -> Result<AuthStore, StoreFailure> {
        do { return .success(try Store.open(path: o.storePath, mode: .authenticate)) } catch { return .failure(error) }
    }

    struct Exchange {
        let decision: Decision
        let relayed: Result<Decision, CheckerClient.Failure>
        let conversation: ScriptedConversation
        let log: String
        /// What the service asked the executable to switch to (CheckerService.useLanguage).
        let languages: [String]
    }

    func check(user: String = "daemon", words: [String] = ["touch_first=0"], replies: [ConversationReply], touch: String? = nil,
               raw: [UInt8]? = nil, locale: String = "", language: String = "",
               caller: Account? = nil, lookupAccount: PolicyChain.AccountLookup? = nil, limitProblems: [String] = []) throws -> Exchange {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds), 0)
        let checkerEnd = FrameChannel(fd: fds[0], limit: CheckProtocol.maximumFrameLength, sensitive: true)
        let moduleEnd = FrameChannel(fd: fds[1], limit: CheckProtocol.maximumFrameLength, sensitive: true)
        let logger = MemoryLogger()
        let options = fileOptions
        var service = CheckerService(caller: caller ?? self.caller, logger: ServiceLogger(logger), sensors: Sensors(logger: logger, helperDiagnostics: .stderr),
                                     openStore: CheckerServiceTests.openStore,
                                     end: monotonicMilliseconds() + 60_000)
        if let lookupAccount { service.lookupAccount = lookupAccount }
        service.limitProblems = limitProblems
        service.loadOptions = { .success(Configuration.Loaded(options: options, diagnostics: [], notes: [])) }
        var languages: [String] = []
        service.useLanguage = { locale, language in languages.append(locale + "|" + language); return false }
        let served = DispatchSemaphore(value: 0)
        let decided = Locked(Decision(.unavailable, .checkerUnavailable))
        let serving = HandedOver((service, checkerEnd))
        Thread.detachNewThread {
            let (service, checkerEnd) = serving.value
            let decision = service.serve(checkerEnd)
            decided.mutate { $0 = decision }
            checkerEnd.close()
            served.signal()
        }
        if let touch {
            Thread.detachNewThread { _ = SimulatedFinger.send(.scan(Array(touch.utf8)), to: self.socket, waitMilliseconds: 5000) }
        }
        let conversation = ScriptedConversation(replies)
        let relayed: Result<Decision, CheckerClient.Failure>
        if let raw {
            _ = moduleEnd.send(raw, until: monotonicMilliseconds() + 2000)
            relayed = CheckerClient.relay(CheckRequest(user: user, service: "i3lock"), on: moduleEnd, conversation: conversation,
                                          logger: logger, silenceMilliseconds: 10_000, sendRequest: false)
        } else {
            relayed = CheckerClient.relay(CheckRequest(user: user, service: "i3lock", words: words, locale: locale, language: language),
                                          on: moduleEnd, conversation: conversation, logger: logger, silenceMilliseconds: 10_000)
        }
        moduleEnd.close()
        XCTAssertEqual(served.wait(timeout: .now() + 30), .success)
        return Exchange(decision: decided.value, relayed: relayed, conversation: conversation, log: logger.text, languages: languages)
    }

    func testThePINUnlocksAndTheAuditRowIsARootCallersRow() throws {
        let e = try check(replies: [answer(pin)])
        XCTAssertEqual(e.decision, Decision(.success(.passcode), .passcodeAccepted, method: .passcode))
        XCTAssertEqual(try e.relayed.get(), e.decision, "the module gets exactly the checker's decision")
        XCTAssertEqual(e.conversation.transcript, ["PROMPT: PIN or password for unlocking the screen, or touch the reader, then press Enter: "])
        XCTAssertEqual(e.conversation.handedOver, [], "the verified PIN never comes back")
        let row = try XCTUnwrap(store.recentEvents(user: "daemon").first)
        XCTAssertEqual([row.service, row.method.rawValue, row.outcome, row.reason], ["i3lock", "passcode", "success", "passcode-accepted"])
        XCTAssertTrue(e.log.contains("pam_biounlock(i3lock:auth): user=daemon service=i3lock method=passcode outcome=success reason=passcode-accepted"), e.log)
    }

    func testATouchUnlocks() throws {
        let e = try check(replies: [.empty], touch: "daemon-right-index")
        XCTAssertEqual(e.decision, Decision(.success(.fingerprint), .matched, method: .fingerprint))
        XCTAssertEqual(try e.relayed.get(), e.decision)
    }

    func testAWrongPINIsCountedAndHandedOnAsTheAnswerItWas() throws {
        let e = try check(replies: [answer("1357")])
        XCTAssertEqual(e.decision, Decision(.unavailable, .wrongPasscode, method: .passcode))
        XCTAssertEqual(e.conversation.handedOver, ["1357"], "the module sets PAM_AUTHTOK from its own copy")
        XCTAssertEqual(try store.loadUser("daemon")?.passcodeFailures, 1)
    }

    func testTheUnixPasswordIsHandedOnAndNotCounted() throws {
        let e = try check(replies: [answer("unix-Password-9")])
        XCTAssertEqual(e.decision.reason, .passwordHandedOver)
        XCTAssertEqual(e.conversation.handedOver, ["unix-Password-9"])
        XCTAssertEqual(try store.loadUser("daemon")?.passcodeFailures, 0)
    }

    func testAnotherUserIsRefusedAndLoggedBeforeAnythingIsAsked() throws {
        for other in ["bin", "root", "daemon ", "Daemon", ""] {
            let before = try store.recentEvents().count
            let e = try check(user: other, replies: [answer(pin)])
            XCTAssertEqual(e.decision, Decision(.unavailable, .otherUserRefused), other)
            XCTAssertEqual(e.conversation.transcript, [], "nothing asked for \(other)")
            XCTAssertTrue(e.log.contains("uid 1 (daemon) asked to authenticate \(sanitizedForLog(other)): refused"), e.log)
            XCTAssertEqual(try store.recentEvents().count, before, "no row")
        }
    }

    /// Finding 28.2: names that are canonically equivalent (Swift's `==`) but not the same bytes
    /// are two accounts. Before the fix, uid 2004 `jose\u{301}` passed the identity check with a
    /// request for uid 2003 `jos\u{e9}`, and the chain checked, counted and reset 2003's PIN.
    func testACanonicallyEquivalentNameOfAnotherAccountIsRefused() throws {
        let pairs: [(caller: String, victim: String)] = [
            ("jose\u{301}", "jos\u{e9}"),      // e + combining acute vs precomposed é
            ("\u{212A}elvin", "Kelvin"),         // KELVIN SIGN vs K
            ("\u{212B}sa", "\u{C5}sa"),           // ANGSTROM SIGN vs Å
        ]
        for (i, pair) in pairs.enumerated() {
            XCTAssertEqual(pair.caller, pair.victim, "Swift's == takes them for one name (the premise of the finding)")
            XCTAssertFalse(pair.caller.utf8.elementsEqual(pair.victim.utf8))
            let callerAccount = Account(name: pair.caller, uid: UInt32(3000 + 2 * i))
            let victim = Account(name: pair.victim, uid: UInt32(3001 + 2 * i))
            let lookup: PolicyChain.AccountLookup = { name in
                .success([callerAccount, victim].first { $0.name.utf8.elementsEqual(name.utf8) })
            }
            let victimStore = try Store.open(path: storePath, mode: .administer, lookupAccount: { name in try? lookup(name).get() ?? nil })
            let hash = try Passcode.hash(try XCTUnwrap(Secret(bytes: Array(pin.utf8))), opsLimit: 1, memLimit: 8192)
            try victimStore.setPasscode(StoredPasscode(hash: hash, kind: .pin), user: pair.victim, at: 1)
            try victimStore.setEnabled(true, user: pair.victim, service: nil, at: 1)
            XCTAssertEqual(try victimStore.loadUser(pair.victim)?.uid, victim.uid)
            let before = try store.recentEvents().count
            for guess in [pin, "1357"] {
                let e = try check(user: pair.victim, replies: [answer(guess)], caller: callerAccount, lookupAccount: lookup)
                XCTAssertEqual(e.decision, Decision(.unavailable, .otherUserRefused), "\(pair.victim.debugDescription) asked by \(pair.caller.debugDescription)")
                XCTAssertEqual(e.conversation.transcript, [], "nothing asked")
            }
            XCTAssertEqual(try victimStore.loadUser(pair.victim)?.passcodeFailures, 0, "nothing counted for the other account")
            XCTAssertEqual(try store.recentEvents().count, before, "no audit row")
            // The caller's own name, byte for byte, is the caller's (no row: not enabled, nothing asked).
            let own = try check(user: pair.caller, replies: [answer(pin)], caller: callerAccount, lookupAccount: lookup)
            XCTAssertEqual(own.decision, Decision(.ignore, .notEnabled))
        }
    }

    /// Finding 28.4: a resource limit the executable could not raise means nothing is checked or
    /// counted; the module gets "unavailable" (the password) and the log says why.
    func testLimitsThatCouldNotBeRaisedCheckNothing() throws {
        let e = try check(replies: [answer(pin)], limitProblems: ["cannot raise RLIMIT_DATA (now 65536): Operation not permitted"])
        XCTAssertEqual(e.decision, Decision(.unavailable, .resourceLimit))
        XCTAssertEqual(e.conversation.transcript, [], "nothing asked")
        XCTAssertEqual(try store.loadUser("daemon")?.passcodeFailures, 0)
        XCTAssertTrue(e.log.contains("uid 1: cannot raise RLIMIT_DATA (now 65536): Operation not permitted; nothing checked, falling back to the password"), e.log)
    }

    func testTheCallersPathsCountsAndRulesAreIgnored() throws {
        let hostile = ["db=/tmp/evil.db", "sim_socket=/tmp/mine", "passcode_lockout=1000", "require_passcode=none", "touch_first=0"]
        for i in 1...6 {
            let e = try check(words: hostile, replies: [answer("000\(i)")])
            XCTAssertTrue(e.log.contains("not taken from the caller: db, sim_socket, passcode_lockout, require_passcode"), e.log)
            XCTAssertEqual(e.decision.reason, i <= 5 ? .wrongPasscode : .passcodeLocked, "the file's passcode_lockout=5 holds (\(i))")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/evil.db"))
    }

    /// The caller's language reaches the executable only as plain names; anything else is English
    /// (and the PIN works the same in every case).
    func testTheCallersLanguageIsTakenOnlyAsPlainNames() throws {
        let cases: [(String, String, [String])] = [
            ("zh_CN.UTF-8", "zh_CN:zh", ["zh_CN.UTF-8|zh_CN:zh"]),
            ("de_DE.UTF-8", "", ["de_DE.UTF-8|"]),
            ("sr_RS@latin", "sr:en::", ["sr_RS@latin|sr:en::"]),
            ("", "zh_CN", []),                                   // an English locker: LANGUAGE alone is nothing (as gettext in C)
            ("../../../tmp/zh_CN", "", []),
            ("/usr/share/locale/zh_CN", "", []),
            (".zh_CN", "", []),
            ("zh_CN.UTF-8", "zh_CN:../../tmp", []),
            ("zh_CN.UTF-8", "/tmp/x", []),
            ("zh_CN UTF-8", "", []),
            ("zh_CN.UTF-8\n", "", []),
            (String(repeating: "a", count: 65), "", []),
        ]
        for (locale, language, expected) in cases {
            let e = try check(replies: [answer(pin)], locale: locale, language: language)
            XCTAssertEqual(e.decision, Decision(.success(.passcode), .passcodeAccepted, method: .passcode), locale)
            XCTAssertEqual(e.languages, expected, "\(locale) \(language)")
            XCTAssertEqual(e.log.contains("the caller's locale is not a plain name; English"), expected.isEmpty && !locale.isEmpty,
                           "\(locale): \(e.log)")
            XCTAssertEqual(e.conversation.transcript, ["PROMPT: PIN or password for unlocking the screen, or touch the reader, then press Enter: "],
                           "\(locale): the test executable switches nothing: English")
        }
    }

    func testAMalformedRequestChecksNothing() throws {
        let e = try check(replies: [answer(pin)], raw: [CheckProtocol.version, 1, 0xff, 0xff])
        XCTAssertEqual(e.decision, Decision(.unavailable, .checkerUnavailable))
        XCTAssertEqual(e.conversation.transcript, [])
        XCTAssertTrue(e.log.contains("malformed request"), e.log)
    }

    func testAModuleThatStopsAnsweringIsAConversationFailureAndNothingIsCounted() throws {
        let e = try check(replies: [.failed])
        XCTAssertEqual(e.decision, Decision(.conversationFailed, .conversationFailed))
        XCTAssertEqual(try store.loadUser("daemon")?.passcodeFailures, 0)
    }

    func testOneCheckAtATimePerUser() throws {
        // POSIX record locks belong to a process: the service holds exactly one, and other
        // processes (here: python's lockf on the same byte) wait for it.
        var lock: CallerLock? = try CallerLock.acquire(uid: 1, directory: dir + "/db").get()
        let tryLock = { (uid: Int) throws -> Int32 in
            try runProcess("/usr/bin/python3", ["-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]))",
                                                self.dir + "/db/checker.lock", "\(uid)"]).status
        }
        XCTAssertNotEqual(try tryLock(1), 0, "the same user's next check waits")
        XCTAssertEqual(try tryLock(2), 0, "other users are not held up")
        XCTAssertNotNil(lock)
        lock = nil
        XCTAssertEqual(try tryLock(1), 0, "released with the check")
        var st = stat()
        XCTAssertEqual(stat(dir + "/db/checker.lock", &st), 0)
        XCTAssertEqual(st.st_mode & 0o7777, 0o600)
    }

    func testOnlyTheLastAnswerIsHandedOn() throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let relay = RelayedConversation(channel: FrameChannel(fd: fds[0]), logger: MemoryLogger(), end: monotonicMilliseconds() + 5000)
        let other = FrameChannel(fd: fds[1])
        XCTAssertFalse(relay.handOverPassword(try XCTUnwrap(Secret(bytes: Array("2468".utf8)))), "nothing was answered yet")
        XCTAssertTrue(other.receive(until: monotonicMilliseconds() + 100).isFailure, "and nothing was sent")
    }
}

/// The module's relay loop against a checker that misbehaves: never a success it did not send.
final class RelayTests: XCTestCase {
    func fakeChecker(_ frames: [[UInt8]], closeAfter: Bool = true, readAnswers: Bool = false) -> FrameChannel {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds), 0)
        let handed = HandedOver(FrameChannel(fd: fds[0]))
        Thread.detachNewThread {
            let checker = handed.value
            _ = checker.receive(until: monotonicMilliseconds() + 2000)   // the request
            for f in frames {
                _ = checker.send(f, until: monotonicMilliseconds() + 2000)
                if readAnswers, CheckerMessage(payload: f).map({ if case .prompt = $0 { return true } else { return false } }) == true {
                    _ = checker.receive(until: monotonicMilliseconds() + 2000)
                }
            }
            if closeAfter { checker.close() } else { _ = checker.receive(until: monotonicMilliseconds() + 3000) }
        }
        return FrameChannel(fd: fds[1], limit: CheckProtocol.maximumFrameLength, sensitive: true)
    }

    func relay(_ channel: FrameChannel, _ conversation: ScriptedConversation = ScriptedConversation(), silence: Int64 = 2000) -> Result<Decision, CheckerClient.Failure> {
        CheckerClient.relay(CheckRequest(user: "daemon", service: "i3lock"), on: channel, conversation: conversation,
                            logger: MemoryLogger(), silenceMilliseconds: silence)
    }

    func testAMalformedOrMissingDecisionIsAFailure() {
        XCTAssertTrue(relay(fakeChecker([[CheckProtocol.version, 14, 1]])).isFailure, "a truncated result")
        XCTAssertTrue(relay(fakeChecker([[0xff, 14]])).isFailure, "another version")
        XCTAssertTrue(relay(fakeChecker([CheckerMessage.info("hello").payload])).isFailure, "ended without a decision")
        XCTAssertTrue(relay(fakeChecker([], closeAfter: false), silence: 300).isFailure, "silence")
        XCTAssertTrue(relay(fakeChecker((0..<300).map { _ in CheckerMessage.info("spam").payload })).isFailure, "too many messages")
    }

    func testHandOnBeforeAnyAnswerHandsOnNothing() throws {
        let conversation = ScriptedConversation([.empty])
        let frames = [CheckerMessage.handOn.payload, CheckerMessage.prompt("PIN: ").payload, CheckerMessage.handOn.payload,
                      CheckerMessage.result(Decision(.unavailable, .passcodeDeclined)).payload]
        XCTAssertEqual(try relay(fakeChecker(frames, readAnswers: true), conversation).get(), Decision(.unavailable, .passcodeDeclined))
        XCTAssertEqual(conversation.handedOver, [], "Enter alone is not text to hand on")
    }

    func testMessagesAndPromptsGoThroughTheCallersConversation() throws {
        let conversation = ScriptedConversation([answer("hunter2")])
        let frames = [CheckerMessage.info("Touch").payload, CheckerMessage.error("PIN locked").payload,
                      CheckerMessage.prompt("Password for unlocking the screen: ").payload, CheckerMessage.handOn.payload,
                      CheckerMessage.result(Decision(.unavailable, .passcodeLocked, method: .passcode)).payload]
        XCTAssertEqual(try relay(fakeChecker(frames, readAnswers: true), conversation).get().reason, .passcodeLocked)
        XCTAssertEqual(conversation.transcript, ["INFO: Touch", "ERROR: PIN locked", "PROMPT: Password for unlocking the screen: "])
        XCTAssertEqual(conversation.handedOver, ["hunter2"])
    }
}

extension Result {
    var isFailure: Bool { if case .failure = self { return true } else { return false } }
}
