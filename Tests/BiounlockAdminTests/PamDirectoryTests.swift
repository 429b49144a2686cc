import XCTest
import Foundation
import Glibc
@testable import BiounlockAdmin
import BiounlockSystem

/// PamDirectory: the service files doctor reads, and who else but root could change them.
final class PamDirectoryTests: XCTestCase {
    private var dir = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/bu-pamdir.XXXXXX".utf8CString)
        dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        XCTAssertEqual(chmod(dir, 0o755), 0)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    private func file(_ name: String, mode: mode_t = 0o644, owner: uid_t = 0) throws {
        try "auth required pam_unix.so\n".write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(dir + "/" + name, mode), 0)
        XCTAssertEqual(chown(dir + "/" + name, owner, 0), 0)
    }

    func testServiceNamesSkipDotFilesAndAreSorted() throws {
        for name in ["sudo", ".hidden", "common-auth", "login"] { try file(name) }
        XCTAssertEqual(PamDirectory.serviceNames(dir), ["common-auth", "login", "sudo"])
    }

    func testFilesOnlyRootCanWriteHaveNoProblem() throws {
        try file("sudo")
        try file("common-auth", mode: 0o600)
        XCTAssertEqual(symlink(dir + "/common-auth", dir + "/linked"), 0)
        XCTAssertTrue(PamDirectory.trustProblems(dir, names: ["sudo", "common-auth", "linked", "vanished"]).isEmpty)
    }

    func testWhatOthersCanWriteIsAProblem() throws {
        try file("sudo", mode: 0o666)
        try file("su", mode: 0o664)
        try file("login", owner: 1000)
        try file("target", mode: 0o646)
        XCTAssertEqual(symlink(dir + "/target", dir + "/common-auth"), 0)
        XCTAssertEqual(chmod(dir, 0o777), 0)
        let problems = PamDirectory.trustProblems(dir, names: ["common-auth", "login", "su", "sudo"])
        XCTAssertEqual(problems.map(\.file), [nil, "common-auth", "login", "su", "sudo"])
        XCTAssertEqual(problems.map(\.problem), [
            .writableByOthers(dir, mode: 0o40777),
            .writableByOthers(dir + "/common-auth", mode: 0o100646),
            .wrongOwner(dir + "/login", uid: 1000),
            .writableByOthers(dir + "/su", mode: 0o100664),
            .writableByOthers(dir + "/sudo", mode: 0o100666),
        ])
    }
}
