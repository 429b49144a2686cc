import XCTest
import Foundation

/// The built module is safe to load into sudo and login: only the PAM entry points exported,
/// no Swift runtime from the toolchain, no unresolved symbols.
final class LinkageTests: XCTestCase {
    func testOnlyThePamEntryPointsAreExported() throws {
        let r = try runProcess("/usr/bin/nm", ["-D", "--defined-only", modulePath])
        XCTAssertEqual(r.status, 0, r.stderr)
        let symbols = r.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }.sorted()
        XCTAssertEqual(symbols, ["pam_sm_authenticate", "pam_sm_setcred"])
    }

    func testNoSwiftLibraryIsNeeded() throws {
        let r = try runProcess("/usr/bin/ldd", [modulePath])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stdout.contains("swift"), r.stdout)
        XCTAssertFalse(r.stdout.contains("not found"), r.stdout)
        XCTAssertFalse(r.stdout.contains("Foundation"), r.stdout)
        let readelf = try runProcess("/usr/bin/readelf", ["-d", modulePath])
        XCTAssertFalse(readelf.stdout.contains("/opt/swift"), readelf.stdout)
    }

    func testNoFoundationInsideTheModule() throws {
        let r = try runProcess("/usr/bin/nm", [modulePath])
        XCTAssertFalse(r.stdout.contains("10Foundation"), "Foundation symbols linked into the module")
    }
}
