import Foundation
import XCTest
@testable import BiounlockSystem

final class DirectoryTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("biounlock-system-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    func testNamesAreReadWhole_fromOneByteTo255() throws {
        // The longest name a Linux file system takes (255 bytes) fills d_name but for its NUL;
        // a one-byte name leaves 254 bytes after it that readdir never wrote.
        let names = ["a", "bb", String(repeating: "n", count: 255), "zwölf", "中文", ".hidden", "with space"]
        for name in names { XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + name, contents: nil)) }
        XCTAssertEqual(Set(Directory.names(dir)), Set(names), "every name, exactly, and not '.' or '..'")
    }

    func testForEachEntryStopsWhenAskedAndIncludesDotEntries() throws {
        for i in 0..<10 { XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/f\(i)", contents: nil)) }
        var seen: [String] = []
        XCTAssertTrue(Directory.forEachEntry(in: dir) { seen.append($0); return seen.count < 3 })
        XCTAssertEqual(seen.count, 3)
        var all: [String] = []
        Directory.forEachEntry(in: dir) { all.append($0); return true }
        XCTAssertTrue(all.contains(".") && all.contains(".."))
        XCTAssertEqual(all.count, 12)
        XCTAssertEqual(Directory.names(dir, limit: 4).count, 4)
    }

    func testAMissingDirectoryIsNoEntriesNotAFailureThatTraps() {
        XCTAssertFalse(Directory.forEachEntry(in: dir + "/missing") { _ in XCTFail("no entries"); return true })
        XCTAssertEqual(Directory.names(dir + "/missing"), [])
        XCTAssertEqual(Directory.names(dir + "/\u{0}nul"), [], "a path with a NUL opens nothing")
    }

    func testIsExecutableFollowsLinksAndWantsARegularFile() throws {
        let tool = dir + "/tool"
        XCTAssertTrue(FileManager.default.createFile(atPath: tool, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
        try FileManager.default.createSymbolicLink(atPath: dir + "/link", withDestinationPath: tool)
        XCTAssertTrue(Directory.isExecutable(tool))
        XCTAssertTrue(Directory.isExecutable(dir + "/link"))
        XCTAssertFalse(Directory.isExecutable(dir), "a directory")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: tool)
        XCTAssertFalse(Directory.isExecutable(tool))
    }

    func testReadRegularFileRefusesWhatIsNotOneOrTooLarge() throws {
        let file = dir + "/f"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data(repeating: 1, count: 100)))
        XCTAssertEqual(FileSystem.readRegularFile(file, limit: 100)?.count, 100)
        XCTAssertNil(FileSystem.readRegularFile(file, limit: 99))
        XCTAssertNil(FileSystem.readRegularFile(dir, limit: 1000))
        XCTAssertNil(FileSystem.readRegularFile(dir + "/missing", limit: 1000))
        XCTAssertEqual(mkfifo(dir + "/fifo", 0o600), 0)
        XCTAssertNil(FileSystem.readRegularFile(dir + "/fifo", limit: 1000), "a FIFO neither blocks nor counts")
    }
}
