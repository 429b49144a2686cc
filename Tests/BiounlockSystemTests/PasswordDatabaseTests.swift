import XCTest
import Glibc
@testable import BiounlockSystem

/// PasswordDatabase: "no such account" told apart from a lookup NSS could not make, and a
/// buffer that grows for an entry that does not fit.
final class PasswordDatabaseTests: XCTestCase {
    func testRealLookups() throws {
        let root = try XCTUnwrap(PasswordDatabase.find(named: "root").get())
        XCTAssertEqual(root, PasswordDatabase.Entry(name: "root", uid: 0))
        XCTAssertEqual(try PasswordDatabase.find(uid: 0).get(), root)
        XCTAssertNil(try PasswordDatabase.find(named: "biounlock-no-such-user").get())
        XCTAssertNil(PasswordDatabase.entry(named: "biounlock-no-such-user"))
    }

    /// A fake getpwnam_r: returns `answer(size)` for a buffer of `size` bytes, filling in an
    /// entry named "alice" (uid 1000) when the answer is 0 and `found`.
    private func lookup(found: Bool = true, _ answer: @escaping (Int) -> Int32) -> (Result<PasswordDatabase.Entry?, Errno>, sizes: [Int]) {
        var sizes: [Int] = []
        let result = PasswordDatabase.lookup(.getpwnamR) { pwd, buffer, size, result in
            sizes.append(size)
            let rc = answer(size)
            guard rc == 0, found else { return rc }
            for (i, byte) in "alice".utf8.enumerated() { buffer[i] = CChar(bitPattern: byte) }
            buffer[5] = 0
            buffer.withUnsafeMutableBufferPointer { pwd.pw_name = $0.baseAddress }
            pwd.pw_uid = 1000
            result = UnsafeMutablePointer<passwd>(bitPattern: 0x1000) // only tested against nil
            return 0
        }
        return (result, sizes)
    }

    func testNotFoundIsNoAccountAndOtherErrorsAreFailures() {
        XCTAssertNil(try lookup(found: false) { _ in 0 }.0.get(), "0 with no result: no such account")
        for code in [ENOENT, ESRCH, EBADF, EPERM] {
            XCTAssertNil(try lookup { _ in code }.0.get(), "errno \(code) is 'not found' (getpwnam_r(3))")
        }
        for code in [EIO, EMFILE, ENFILE, ENOMEM] {
            guard case .failure(let e) = lookup({ _ in code }).0 else { return XCTFail("errno \(code) taken for an answer") }
            XCTAssertEqual(e.code, Errno.Code(rawValue: code))
            XCTAssertEqual(e.call, "getpwnam_r")
        }
        XCTAssertEqual(lookup { _ in EIO }.sizes, [16 * 1024], "one call: a real error is not retried")
    }

    func testAnEntryThatDoesNotFitGetsABiggerBuffer() throws {
        let (found, sizes) = lookup { $0 < 100_000 ? ERANGE : 0 }
        XCTAssertEqual(try found.get(), PasswordDatabase.Entry(name: "alice", uid: 1000))
        XCTAssertEqual(sizes, [16_384, 32_768, 65_536, 131_072])
        let (never, tried) = lookup { _ in ERANGE }
        guard case .failure(let e) = never else { return XCTFail("an entry that never fits is no answer") }
        XCTAssertEqual(e.code, .resultTooLarge)
        XCTAssertEqual(tried.last, PasswordDatabase.maximumBufferSize, "grown up to the bound, no further")
    }
}
