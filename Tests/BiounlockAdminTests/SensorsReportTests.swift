import XCTest
import Foundation
@testable import BiounlockAdmin
import BiounlockCore

/// Whether fprintd and pam_fprintd are set up too (FprintdCheck, FprintdReport; `biounlock status` shows it).
final class SensorsReportTests: XCTestCase {
    func testPamFprintdIsFoundOnlyOnLinesThatAreNotComments() throws {
        var template = Array("/tmp/bu-pamd.XXXXXX".utf8CString)
        let dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "auth [success=2 default=ignore] pam_fprintd.so max-tries=1\n@include common-auth\n".write(toFile: dir + "/common-auth", atomically: true, encoding: .utf8)
        try "#auth sufficient pam_fprintd.so\nauth required pam_unix.so\n".write(toFile: dir + "/sudo", atomically: true, encoding: .utf8)
        try "auth sufficient pam_unix.so # not pam_fprintd.so\n".write(toFile: dir + "/login", atomically: true, encoding: .utf8)
        let report = FprintdCheck.scan(pamDirectory: dir, daemonPaths: ["/usr/bin/env", "/nowhere"])
        XCTAssertEqual(report.pamFiles, [dir + "/common-auth"])
        XCTAssertEqual(report.daemon, "/usr/bin/env")
        XCTAssertEqual(report.notes.count, 1)
        XCTAssertTrue(report.notes[0].contains("pam_fprintd is also configured (\(dir)/common-auth)"), report.notes[0])
        XCTAssertEqual(report.json, .object([("installed", .bool(true)), ("pam_fprintd", .array([.string(dir + "/common-auth")])),
                                             ("in_use", .bool(false)), ("error", .null)]))
        var shared = report
        shared.sensor = .fprintd
        XCTAssertTrue(shared.notes[0].hasPrefix("note: biounlock uses fprintd (sensor fprintd)"), shared.notes[0])
        XCTAssertTrue(shared.notes[1].contains("the finger is asked for twice"), shared.notes[1])

        let nothing = FprintdCheck.scan(pamDirectory: dir + "/missing", daemonPaths: ["/nowhere"])
        XCTAssertEqual(nothing, FprintdReport(daemon: nil, pamFiles: []))
        XCTAssertEqual(nothing.notes, [])
    }
}
