import XCTest
import Glibc
@testable import BiounlockSystem

/// ChildProcess.output and SharedObject.loadsInChildProcess (what doctor runs): the output of a
/// program that ends well, nothing otherwise, and a bound on the wait -- a program that does not
/// end is killed and collected, never waited for.
final class ProcessTests: XCTestCase {
    private func output(_ script: String, limit: Int = 1 << 20, within milliseconds: Int64 = 10_000) -> String? {
        ChildProcess.output(of: "/bin/sh", arguments: ["-c", script], environment: [], limit: limit, within: milliseconds)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    private var scratch = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/bu-child.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw XCTSkip("mkdtemp failed") }
        scratch = String(cString: made)
    }

    override func tearDown() {
        unlink(scratch + "/pid")
        rmdir(scratch)
    }

    /// The pid a script wrote to `pid` in the scratch directory.
    private func writtenPID() throws -> Int32 {
        let text = try String(contentsOfFile: scratch + "/pid", encoding: .utf8)
        return try XCTUnwrap(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    private func assertGone(_ pid: Int32, _ what: String) {
        XCTAssertEqual(kill(pid, 0), -1, "\(what): the program is still there")
        XCTAssertEqual(errno, ESRCH, "\(what): killed and collected, not left a zombie")
    }

    func testTheOutputOfAProgramThatEndsWell() {
        XCTAssertEqual(output("printf 'one\\ntwo'"), "one\ntwo")
        XCTAssertEqual(output("true"), "", "no output is an empty answer, not a failure")
        XCTAssertEqual(output("/usr/bin/head -c 100000 /dev/zero | /usr/bin/tr '\\0' a")?.count, 100_000,
                       "more than one read's worth")
    }

    func testAFailedOrMissingProgramGivesNothing() {
        XCTAssertNil(output("echo partial; exit 3"))
        XCTAssertNil(output("kill -9 $$"))
        XCTAssertNil(ChildProcess.output(of: "/nonexistent/program", arguments: [], environment: []))
    }

    func testMoreThanTheLimitGivesNothingAndEndsTheProgram() {
        XCTAssertEqual(output("printf 12345", limit: 5), "12345", "exactly the limit is fine")
        XCTAssertNil(output("printf 123456", limit: 5))
        // It would write for ever: killed once the limit is passed, not waited for.
        XCTAssertNil(output("exec /usr/bin/yes", limit: 1000))
    }

    func testAProgramThatDoesNotEndIsKilledAtTheBound() throws {
        XCTAssertNil(output("echo $$ > \(scratch)/pid; echo started; exec /bin/sleep 600", within: 300))
        assertGone(try writtenPID(), "silent and never ending")
        // Its output closed, the program lingers: the end of the output is not the end of it.
        XCTAssertNil(output("echo $$ > \(scratch)/pid; echo done; exec >&-; exec /bin/sleep 600", within: 300))
        assertGone(try writtenPID(), "output closed, still running")
    }

    func testWaitForExitReturnsTheStatusOrKills() throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        func start(_ script: String) throws -> Int32 {
            var pid: Int32 = 0
            let argv = CStringArray(["/bin/sh", "-c", script])
            XCTAssertTrue(argv.complete)
            XCTAssertEqual(posix_spawn(&pid, "/bin/sh", nil, &attributes, argv.pointers, [nil]), 0)
            return pid
        }
        let ends = try start("exit 7")
        let status = try XCTUnwrap(ChildProcess.waitForExit(ends, until: .after(milliseconds: 10_000)))
        XCTAssertEqual((status >> 8) & 0xff, 7, "the exit status, as waitpid gives it")
        let hangs = try start("exec /bin/sleep 600")
        XCTAssertNil(ChildProcess.waitForExit(hangs, until: .after(milliseconds: 200)))
        assertGone(hangs, "past the deadline")
    }

    func testASharedObjectLoadsOnlyWithItsSymbols() throws {
        let libc = "/lib/x86_64-linux-gnu/libc.so.6"
        guard access(libc, R_OK) == 0 else { throw XCTSkip("\(libc) is not here (not Debian on x86-64)") }
        XCTAssertTrue(SharedObject.loadsInChildProcess(libc, exporting: ["printf", "malloc"]))
        XCTAssertFalse(SharedObject.loadsInChildProcess(libc, exporting: ["printf", "biounlock_no_such_symbol"]))
        XCTAssertFalse(SharedObject.loadsInChildProcess("/nonexistent/module.so", exporting: []))
    }

    private func spawnShell(_ script: String) throws -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var pid: Int32 = 0
        let argv = CStringArray(["/bin/sh", "-c", script])
        XCTAssertTrue(argv.complete)
        XCTAssertEqual(posix_spawn(&pid, "/bin/sh", nil, &attributes, argv.pointers, [nil]), 0)
        return pid
    }

    /// A child's end is an event (a pidfd): the wait ends when the child does, with its status,
    /// and never outlasts the deadline while it runs.
    func testAChildsEndIsWaitedForAsAnEvent() throws {
        let watch = ChildWatch(try spawnShell("read -t 5 x </dev/null; exit 3"))
        XCTAssertTrue(watch.watchesEnd, "pidfd_open worked (Linux 5.3 and later): the wait is on the end itself")
        guard case .exited(let status) = watch.collect(until: .after(milliseconds: 10_000)) else { return XCTFail("not collected") }
        XCTAssertEqual((status >> 8) & 0xff, 3, "the exit status, as waitpid gives it")
        XCTAssertFalse(watch.watchesEnd, "the pidfd is closed once the child is collected")
        XCTAssertEqual(watch.collect(until: .after(milliseconds: 0)), .gone, "collected once: ECHILD after")

        let running = try spawnShell("exec /bin/sleep 600")
        let slow = ChildWatch(running)
        XCTAssertEqual(slow.collect(until: .after(milliseconds: 0)), .running, "a passed deadline: one look")
        XCTAssertEqual(slow.collect(until: .after(milliseconds: 100)), .running, "still running at the deadline")
        kill(running, SIGKILL)
        guard case .exited(let killed) = slow.collect(until: .after(milliseconds: 10_000)) else { return XCTFail("not collected") }
        XCTAssertEqual(killed & 0x7f, SIGKILL, "ended by the signal")
    }

    /// A child someone else collected (the host's SIGCHLD handler) is gone, never waited for --
    /// and a pid reused meanwhile is never watched: the pidfd is kept only for a child of ours.
    func testAChildCollectedElsewhereIsGone() throws {
        let pid = try spawnShell("exit 0")
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        let watch = ChildWatch(pid)
        XCTAssertFalse(watch.watchesEnd, "no process, or not ours: no descriptor")
        XCTAssertEqual(watch.collect(until: .after(milliseconds: 5_000)), .gone)
        let notOurs = ChildWatch(1)
        XCTAssertFalse(notOurs.watchesEnd, "init is not our child")
        XCTAssertEqual(notOurs.collect(until: .after(milliseconds: 5_000)), .gone)
    }
}
