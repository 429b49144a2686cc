import XCTest
@testable import BiounlockAdmin

/// What `biounlock doctor` reads from dpkg-query about the SQLite inside the module.
final class InstalledPackagesTests: XCTestCase {
    let biounlock = "ii |sqlite3 (= 3.40.1-2+deb12u2)\n"
    let amd64 = "ii |amd64|3.40.1-2+deb12u3\n"
    let i386 = "ii |i386|3.40.1-2+deb12u1\n"

    func testTheBuiltUsingVersionBesideTheInstalledLibrary() {
        XCTAssertEqual(InstalledPackages.sqlite(biounlock: biounlock, libsqlite: amd64, architecture: "amd64"),
                       .init(built: "3.40.1-2+deb12u2", installed: "3.40.1-2+deb12u3"))
        XCTAssertEqual(InstalledPackages.sqlite(biounlock: biounlock, libsqlite: i386 + amd64, architecture: "amd64")?.installed,
                       "3.40.1-2+deb12u3", "the module's architecture when several are installed")
        XCTAssertNil(InstalledPackages.sqlite(biounlock: biounlock, libsqlite: i386 + amd64, architecture: "arm64"),
                     "several, none of this architecture: nothing to compare")
        XCTAssertEqual(InstalledPackages.sqlite(biounlock: biounlock, libsqlite: i386, architecture: nil)?.installed, "3.40.1-2+deb12u1")
        XCTAssertEqual(InstalledPackages.sqlite(biounlock: "ii |asm (= 9.0-1), sqlite3 (= 3.40.1-2)\n", libsqlite: amd64, architecture: "amd64")?.built,
                       "3.40.1-2")
    }

    func testNothingToCompareWithoutThePackageOrItsField() {
        XCTAssertNil(InstalledPackages.sqlite(biounlock: "", libsqlite: amd64, architecture: "amd64"), "a source install")
        XCTAssertNil(InstalledPackages.sqlite(biounlock: "rc |sqlite3 (= 3.40.1-2+deb12u2)\n", libsqlite: amd64, architecture: "amd64"),
                     "removed, its config files kept")
        XCTAssertNil(InstalledPackages.sqlite(biounlock: "ii |\n", libsqlite: amd64, architecture: "amd64"), "a package from before SQLite was linked in")
        XCTAssertNil(InstalledPackages.sqlite(biounlock: biounlock, libsqlite: "rc |amd64|3.40.1-2\n", architecture: "amd64"), "no libsqlite3-0 installed")
        XCTAssertNil(InstalledPackages.sqlite3Version(inBuiltUsing: "sqlite3-extra (= 1)"))
        XCTAssertNil(InstalledPackages.sqlite3Version(inBuiltUsing: "sqlite3 (>= 1)"))
    }

    /// The queries are the ones dpkg-query answers as the parser expects (run when dpkg-query
    /// is here: on Debian; libsqlite3-0 is installed wherever biounlock builds).
    func testDpkgQueryAnswersInTheExpectedShape() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-query"))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/dpkg-query")
        p.arguments = InstalledPackages.queries.libsqlite
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(text.split(separator: "\n").contains { $0.hasPrefix("ii |") && $0.split(separator: "|").count == 3 }, text)
    }
}
