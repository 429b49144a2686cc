import BiounlockSystem
import XCTest
import Foundation
@testable import BiounlockCore

/// The check a program must pass before biounlock runs it as root (the libfprint helper).
final class TrustedExecutableTests: XCTestCase {
    func testSystemProgramsPass() {
        XCTAssertNil(TrustedFiles.checkExecutable("/usr/bin/env"))
    }

    func testPathsThatAreNotCanonicalAreRefused() {
        for path in ["", "/", "bin/env", "/usr//bin/env", "/usr/bin/./env", "/usr/lib/../bin/env", "/usr/bin/"] {
            XCTAssertEqual(TrustedFiles.checkExecutable(path), .notCanonical(path), path)
        }
    }

    func testWritableAncestorsModesAndSymlinksAreRefused() throws {
        var template = Array("/tmp/bu-exe.XXXXXX".utf8CString)
        let dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let program = dir + "/p"
        _ = FileManager.default.createFile(atPath: program, contents: Data("#!/bin/sh\n".utf8))
        chmod(program, 0o755)
        // /tmp itself is world-writable (sticky or not): anyone could have swapped the directory.
        XCTAssertEqual(TrustedFiles.checkExecutable(program), .writableByOthers("/tmp", mode: try mode("/tmp")))
        XCTAssertEqual(TrustedFiles.checkExecutable("/usr/bin/no-such-program"), .missing("/usr/bin/no-such-program"))
        XCTAssertEqual(TrustedFiles.checkExecutable("/etc/passwd"), .notExecutable("/etc/passwd"))
        XCTAssertEqual(TrustedFiles.checkExecutable("/usr/bin"), .notRegularFile("/usr/bin"))
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/bin"), !target.isEmpty {
            XCTAssertEqual(TrustedFiles.checkExecutable("/bin/sh"), .symlink("/bin"), "merged /usr: /bin is a link")
        }
    }

    func mode(_ path: String) throws -> UInt32 {
        var st = stat()
        XCTAssertEqual(lstat(path, &st), 0)
        return st.st_mode
    }
}
