import Foundation
import XCTest
@testable import BiounlockSystem

/// The trust checks, as the module, the checker and doctor use them. These tests run as root
/// (the files they make are root's), like the rest of the suite.
final class FileTrustTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        try XCTSkipIf(getuid() != 0, "the trust checks want root-owned files")
        // Under /run (root's, 0755), not /tmp: checkExecutable refuses a world-writable ancestor.
        dir = "/run/biounlock-trust-\(UUID().uuidString)"
        XCTAssertEqual(mkdir(dir, 0o755), 0)
        XCTAssertEqual(chmod(dir, 0o755), 0)
    }

    override func tearDownWithError() throws { if !dir.isEmpty { try? FileManager.default.removeItem(atPath: dir) } }

    func make(_ name: String, _ text: String = "x", mode: mode_t = 0o644) -> String {
        let path = dir + "/" + name
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        XCTAssertEqual(chmod(path, mode), 0)
        return path
    }

    func testATrustedFileAndWhatIsWrongWithOthers() throws {
        let good = make("good")
        XCTAssertNil(TrustedFiles.checkFile(good))
        XCTAssertEqual(TrustedFiles.readText(good), .success("x"))

        let writable = make("writable", mode: 0o666)
        XCTAssertEqual(TrustedFiles.checkFile(writable), .writableByOthers(writable, mode: UInt32(S_IFREG) | 0o666))
        if case .failure(.writableByOthers) = TrustedFiles.readText(writable) {} else { XCTFail("readText checks the open file too") }

        let owned = make("owned")
        XCTAssertEqual(chown(owned, 1, 1), 0)
        XCTAssertEqual(TrustedFiles.checkFile(owned), .wrongOwner(owned, uid: 1))

        XCTAssertEqual(TrustedFiles.checkFile(dir + "/missing"), .missing(dir + "/missing"))
        XCTAssertEqual(TrustedFiles.readText(dir + "/missing"), .failure(.missing(dir + "/missing")))
    }

    func testASymbolicLinkIsRefusedWhereverItIs() throws {
        let good = make("good")
        XCTAssertEqual(symlink(good, dir + "/link"), 0)
        XCTAssertEqual(TrustedFiles.checkFile(dir + "/link"), .symlink(dir + "/link"))
        XCTAssertEqual(TrustedFiles.readText(dir + "/link"), .failure(.symlink(dir + "/link")), "O_NOFOLLOW's ELOOP means a link")
        XCTAssertEqual(symlink(dir, dir + "/dirlink"), 0)
        XCTAssertEqual(TrustedFiles.checkDirectory(dir + "/dirlink"), .symlink(dir + "/dirlink"))
    }

    func testTheDirectoryDecidesToo() throws {
        let good = make("good")
        XCTAssertEqual(chmod(dir, 0o777), 0)
        XCTAssertEqual(TrustedFiles.checkFile(good), .writableByOthers(dir, mode: UInt32(S_IFDIR) | 0o777))
        XCTAssertEqual(chmod(dir, 0o755), 0)
        XCTAssertEqual(TrustedFiles.checkDirectory(good), .notDirectory(good))
    }

    func testReadTextLimitsAndRefusesAFIFOWithoutBlocking() throws {
        let big = make("big", String(repeating: "a", count: 100))
        XCTAssertEqual(TrustedFiles.readText(big, limit: 99), .failure(.tooLarge(big)))
        XCTAssertEqual(TrustedFiles.readText(big, limit: 100), .success(String(repeating: "a", count: 100)))
        XCTAssertEqual(mkfifo(dir + "/fifo", 0o644), 0)
        XCTAssertEqual(TrustedFiles.readText(dir + "/fifo"), .failure(.notRegularFile(dir + "/fifo")))
    }

    func testExecutablesAreCheckedAllTheWayUp() throws {
        let tool = make("tool", mode: 0o755)
        XCTAssertNil(TrustedFiles.checkExecutable(tool))
        XCTAssertEqual(TrustedFiles.checkExecutable(make("data")), .notExecutable(dir + "/data"))
        for bad in ["relative/tool", "/", dir + "/../x", dir + "//tool", dir + "/./tool", ""] {
            XCTAssertEqual(TrustedFiles.checkExecutable(bad), .notCanonical(bad), bad)
        }
        XCTAssertEqual(TrustedFiles.checkSetuidHelper(tool), .notSetuidRoot(tool))
        XCTAssertEqual(chmod(tool, 0o4755), 0)
        XCTAssertNil(TrustedFiles.checkSetuidHelper(tool))
        XCTAssertEqual(chmod(dir, 0o775), 0)
        XCTAssertEqual(TrustedFiles.checkExecutable(tool), .writableByOthers(dir, mode: UInt32(S_IFDIR) | 0o775))
    }

    func testProblemsReadAsBefore() {
        XCTAssertEqual(FileTrustProblem.unreadable("/x", Errno(.permissionDenied, call: "open")).description, "/x cannot be read: Permission denied")
        XCTAssertEqual(FileTrustProblem.writableByOthers("/x", mode: 0o100666).description, "/x is writable by group or others (mode 0666)")
        XCTAssertEqual(TrustedFiles.parentDirectory(of: "/a/b"), "/a")
        XCTAssertEqual(TrustedFiles.parentDirectory(of: "/a"), "/")
        XCTAssertEqual(TrustedFiles.parentDirectory(of: "a"), ".")
    }
}
