import XCTest
import Foundation
import BiounlockSystem
import BiounlockCore
import BiounlockService

/// Secrets come through a descriptor, bounded in size and time: a closed, an endless, a silent,
/// a huge or the wrong kind of descriptor is an error, in bounded time, never a hang.
final class SecretDescriptorTests: XCTestCase {
    /// The endless writer's write after the reader closed its end: EPIPE, not the signal.
    override func setUp() { signal(SIGPIPE, SIG_IGN) }

    func pipePair() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        return (fds[0], fds[1])
    }

    func read(_ fd: Int32, within ms: Int64 = 300) -> Result<String, SecretDescriptor.Failure> {
        SecretDescriptor.read(FileDescriptor(rawValue: fd), within: ms).map { s in s.withBytes { String(decoding: $0, as: UTF8.self) } }
    }

    func testALineIsTheSecret() {
        let p = pipePair()
        _ = "1234\n".withCString { write(p.write, $0, 5) }
        close(p.write)
        XCTAssertEqual(try read(p.read).get(), "1234")
        close(p.read)
    }

    func testClosedEmptySilentEndlessAndHuge() {
        let closed = pipePair()
        close(closed.write)
        XCTAssertEqual(read(closed.read), .failure(.empty))
        close(closed.read)

        let silent = pipePair() // the writer keeps its end open and writes nothing
        let start = Date()
        XCTAssertEqual(read(silent.read), .failure(.timedOut))
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "bounded (a hang is what this catches)")
        close(silent.read); close(silent.write)

        let endless = pipePair() // a writer that never stops
        let stop = Locked(false)
        Thread.detachNewThread {
            var chunk = [UInt8](repeating: 0x41, count: 4096)
            while !stop.value, write(endless.write, &chunk, chunk.count) > 0 {}
            close(endless.write)
        }
        XCTAssertEqual(read(endless.read, within: 2000), .failure(.tooLong))
        stop.mutate { $0 = true }
        close(endless.read)

        let nul = pipePair()
        _ = write(nul.write, [0x31, 0x00, 0x32], 3)
        close(nul.write)
        XCTAssertEqual(read(nul.read), .failure(.invalid))
        close(nul.read)
    }

    func testOnlyPipesAndSockets() throws {
        let file = open("/etc/hostname", O_RDONLY)
        XCTAssertEqual(read(file), .failure(.notAPipe))
        close(file)
        let device = open("/dev/zero", O_RDONLY)
        XCTAssertEqual(read(device), .failure(.notAPipe))
        close(device)
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        _ = "secret".withCString { write(pair[1], $0, 6) }
        close(pair[1])
        XCTAssertEqual(try read(pair[0]).get(), "secret")
        close(pair[0])
        if case .failure(.unreadable) = read(9999) {} else { XCTFail("a descriptor that is not open") }
    }
}

import TestSupport
