import XCTest
import Foundation
import TestSupport

/// TestSupport's `launch`, which every child of the tests goes through: a child started while
/// another thread starts children of its own gets none of their descriptors. Foundation's Process
/// alone gives them away (see `launch`): without the lock, with 500 descriptors open, about one
/// child in 25 here held sockets of others (none with it), and CI saw a ScenarioTests transaction
/// lose its touch to it.
final class ChildLaunchTests: XCTestCase {
    func testAChildGetsNoneOfTheDescriptorsAnotherThreadMadeForItsChildren() throws {
        // Many descriptors open here make each start's list longer, and the window with it.
        let spare = (0..<500).map { _ in open("/dev/null", O_RDONLY) }
        defer { spare.forEach { close($0) } }
        let stop = Locked(false)
        let churn = (0..<2).map { _ in Thread {
            while !stop.value { _ = try? runProcess("/bin/true", [], timeout: 10) }
        } }
        churn.forEach { $0.start() }
        defer {
            stop.mutate { $0 = true }
            while churn.contains(where: { $0.isExecuting }) { usleep(1000) }
        }
        var foreign: [String] = []
        for _ in 0..<300 {
            let r = try runProcess("/bin/sh", ["-c", "ls -l /proc/$$/fd"], timeout: 10)
            // 0-2 are the pipes runProcess gave it; above them, Foundation gives each child one
            // socket of its own (the parent sees the child's exit when it closes). Any other pipe
            // or socket came from another child's start.
            let ends = r.stdout.split(separator: "\n").filter { line in
                guard let arrow = line.range(of: " -> "), let fd = Int(line[..<arrow.lowerBound].split(separator: " ").last ?? "") else { return false }
                return fd > 2 && (line.contains("pipe:") || line.contains("socket:"))
            }
            if ends.count > 1 { foreign.append(ends.joined(separator: "; ")) }
        }
        XCTAssertEqual(foreign, [], "children held descriptors made for other children")
    }
}
