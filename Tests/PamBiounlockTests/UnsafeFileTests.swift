import XCTest
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// Unsafe files (docs/SECURITY.md, item 4): the store, its directory, its -wal, -shm and
/// -journal files, and the config file (and its directory) as a symlink, a FIFO, owned by another
/// user, or writable by group or others. Each is refused -- PAM_AUTHINFO_UNAVAIL, nothing asked --
/// with a syslog line naming the file and the problem; none of them blocks (a FIFO is never
/// opened for reading without O_NONBLOCK). And every file the module opens is opened with
/// O_CLOEXEC, the store, its side files and the config with O_NOFOLLOW (strace).
final class UnsafeFileTests: XCTestCase {
    enum Problem: CaseIterable {
        case symlink, fifo, otherOwner, groupWritable, worldWritable

        /// The words the module's syslog line must contain.
        var logs: String {
            switch self {
            case .symlink: return "is a symbolic link"
            case .fifo: return "is not a"
            case .otherOwner: return "is owned by uid 65534, not root"
            case .groupWritable: return "is writable by group or others (mode 0"
            case .worldWritable: return "is writable by group or others (mode 0"
            }
        }
    }

    /// Makes `path` (an existing file or directory) unsafe in the given way, keeping its content
    /// reachable where that makes sense (a symlink points to a safe copy).
    func make(_ path: String, _ problem: Problem, directory: Bool) throws {
        let fm = FileManager.default
        switch problem {
        case .symlink:
            if fm.fileExists(atPath: path) { try fm.moveItem(atPath: path, toPath: path + ".real") }
            else if directory { try fm.createDirectory(atPath: path + ".real", withIntermediateDirectories: false) }
            else { _ = fm.createFile(atPath: path + ".real", contents: nil, attributes: [.posixPermissions: 0o600]) }
            XCTAssertEqual(symlink(path + ".real", path), 0)
        case .fifo:
            if fm.fileExists(atPath: path) { try fm.moveItem(atPath: path, toPath: path + ".real") }
            XCTAssertEqual(mkfifo(path, 0o600), 0)
        case .otherOwner:
            if !fm.fileExists(atPath: path) { _ = fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) }
            XCTAssertEqual(chown(path, 65534, 65534), 0)
        case .groupWritable, .worldWritable:
            if !fm.fileExists(atPath: path) { _ = fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) }
            let base: mode_t = directory ? 0o700 : 0o600
            XCTAssertEqual(chmod(path, base | (problem == .groupWritable ? 0o020 : 0o002)), 0)
        }
    }

    func check(_ target: String, _ problem: Problem, prepare: (ModuleFixture) throws -> (path: String, directory: Bool, arguments: String)) throws {
        let fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        fixture.closeStore() // no -wal/-shm of the test's own: the module finds the store at rest
        let (path, directory, arguments) = try prepare(fixture)
        try fixture.service(arguments)
        try make(path, problem, directory: directory)
        let t = try fixture.authenticate(touches: [], extra: ["--syslog"], timeout: 20)
        let what = "\(target) \(problem)"
        XCTAssertFalse(t.raw.timedOut, "\(what): blocked")
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", what)
        XCTAssertEqual(t.messages, [], "\(what): nothing asked, nothing shown")
        XCTAssertTrue(t.syslog.contains { $0.contains(path) && $0.contains(problem.logs) },
                      "\(what): syslog should name \(path) and say '\(problem.logs)':\n\(t.syslog.joined(separator: "\n"))")
    }

    func testUnsafeStoreFiles() throws {
        for problem in Problem.allCases {
            try check("store", problem) { ($0.storePath, false, "") }
            for side in ["-wal", "-shm", "-journal", "-lock"] {
                try check("store\(side)", problem) { ($0.storePath + side, false, "") }
            }
        }
    }

    func testUnsafeStoreDirectory() throws {
        for problem in Problem.allCases {
            try check("store directory", problem) { ($0.dir + "/db", true, "") }
        }
    }

    func testUnsafeConfigFile() throws {
        for problem in Problem.allCases {
            try check("config", problem) { f in
                let conf = f.dir + "/etc/biounlock.conf"
                try FileManager.default.createDirectory(atPath: f.dir + "/etc", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
                _ = FileManager.default.createFile(atPath: conf, contents: Data("policy = biometrics\n".utf8), attributes: [.posixPermissions: 0o644])
                return (conf, false, "config=\(conf)")
            }
            try check("config directory", problem) { f in
                let dir = f.dir + "/etc"
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
                _ = FileManager.default.createFile(atPath: dir + "/biounlock.conf", contents: Data("policy = biometrics\n".utf8), attributes: [.posixPermissions: 0o644])
                return (dir, true, "config=\(dir)/biounlock.conf")
            }
        }
    }

    /// What the module opens, from strace: everything close-on-exec; the store, its side files
    /// and the config without following symlinks.
    func testEveryFileIsOpenedCloseOnExecAndWithoutFollowingSymlinks() throws {
        let fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        fixture.closeStore()
        let conf = fixture.dir + "/biounlock.conf"
        _ = FileManager.default.createFile(atPath: conf, contents: Data("max_tries = 3\n".utf8), attributes: [.posixPermissions: 0o644])
        try fixture.service("config=\(conf)")
        let trace = fixture.dir + "/strace.out"
        let t = try fixture.authenticate(touches: [ModuleFixture.scan(ModuleFixture.fingerID)],
                                         wrapper: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=open,openat,socket", "-o", trace])
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout + t.raw.stderr)
        let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)

        let ours = calls.filter { $0.contains("open") && $0.contains("\"\(fixture.dir)/") && !$0.contains("/pam.d/") && !$0.contains("ENOENT") }
        XCTAssertFalse(ours.isEmpty, calls.joined(separator: "\n"))
        for call in ours {
            XCTAssertTrue(call.contains("O_CLOEXEC"), "not close-on-exec: \(call)")
        }
        for name in ["biounlock.db\"", "biounlock.db-wal\"", "biounlock.db-shm\"", "biounlock.conf\""] {
            let opens = ours.filter { $0.contains(name) }
            XCTAssertFalse(opens.isEmpty, "\(name) was not opened")
            for call in opens { XCTAssertTrue(call.contains("O_NOFOLLOW"), "follows symlinks: \(call)") }
        }
        // /proc and /sys files and the lid and logind directories: close-on-exec too.
        for call in calls where call.contains("open") && (call.contains("\"/proc/sys/kernel/random") || call.contains("\"/proc/self/sessionid")) {
            XCTAssertTrue(call.contains("O_CLOEXEC"), call)
        }
        // Every AF_UNIX socket (the sensor's, NSS's) is close-on-exec. (libpam's own audit socket,
        // AF_NETLINK, is not the module's.)
        for call in calls where call.contains("socket(AF_UNIX") {
            XCTAssertTrue(call.contains("SOCK_CLOEXEC"), call)
        }
    }
}
