// Shared by the test targets: run a built program with a time limit; share a value between threads.
import Foundation

/// Output of one command run with a time limit.
public struct ProcessResult {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    public let timedOut: Bool
}

/// Runs `path`. Without an `environment` the child gets this process's, in the C.UTF-8 locale
/// (LC_ALL set, LANGUAGE removed): tests that match English text pass whatever the language of
/// whoever runs them; a test in another language passes its own environment.
/// `onStdoutLine`, when given, sees each line of standard output as it comes (on a reader thread),
/// for tests that act on what the program says while it runs.
public func runProcess(_ path: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
                timeout: TimeInterval = 30, onStdoutLine: ((String) -> Void)? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var inherited = ProcessInfo.processInfo.environment
    inherited["LC_ALL"] = "C.UTF-8"
    inherited["LANGUAGE"] = nil
    process.environment = environment ?? inherited
    let (out, err, input) = try launch(process) { p in
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        return (out, err, input)
    }
    // A child that exits before reading its input (e.g. refused as non-root) must not take the
    // test process down with SIGPIPE: ignore the signal, and take the write error instead.
    signal(SIGPIPE, SIG_IGN)
    if let stdin { try? input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    // Plain threads, not Dispatch: libdispatch on Linux cannot see threads blocked in read(2)
    // and would starve when tests run several processes at once.
    final class Box { var data = Data() }
    let outData = Box(), errData = Box()
    let group = DispatchGroup()
    group.enter()
    Thread.detachNewThread {
        if let onStdoutLine {
            var pending = Data()
            while case let chunk = out.fileHandleForReading.availableData, !chunk.isEmpty {
                outData.data.append(chunk)
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    onStdoutLine(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
        } else {
            outData.data = out.fileHandleForReading.readDataToEndOfFile()
        }
        group.leave()
    }
    group.enter(); Thread.detachNewThread { errData.data = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    let finished = DispatchSemaphore(value: 0)
    Thread.detachNewThread { process.waitUntilExit(); finished.signal() }
    var timedOut = false
    if finished.wait(timeout: .now() + timeout) == .timedOut {
        timedOut = true
        kill(process.processIdentifier, SIGKILL)
        finished.wait()
    }
    group.wait()
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: outData.data, as: UTF8.self),
                         stderr: String(decoding: errData.data, as: UTF8.self), timedOut: timedOut)
}


/// Every child a test starts, one start at a time.
///
/// Foundation's Process (Linux) emulates close-on-exec-by-default: when `run()` begins it lists
/// the descriptors open then and closes them in the child. A descriptor another thread opens
/// between that list and the spawn -- the pipes it made for a child of its own, the socket through
/// which Foundation learns that child's exit -- goes to this child too, and the other child's
/// reader then sees no end of file (or its exit) until this child ends. CI saw it in ScenarioTests:
/// a `gdbus` read started on a closure's thread while the main thread started a PAM transaction's
/// harness lasted the whole 30 s transaction ("1 reads, 0 failed"), and the touch it was waiting
/// to send came too late. Here `prepare` (which makes the child's pipes and files and sets them on
/// `process`) and `run()` happen under one lock, so no other child's start falls inside the window.
/// Children started through `ChildLaunch.locked` (a raw posix_spawn) share the lock.
@discardableResult
public func launch<T>(_ process: Process, _ prepare: (Process) throws -> T) throws -> T {
    try ChildLaunch.locked {
        let prepared = try prepare(process)
        try process.run()
        return prepared
    }
}

/// `launch` for a child whose streams are already set (or left as this process's).
public func launch(_ process: Process) throws {
    try launch(process) { _ in () }
}

public enum ChildLaunch {
    private static let lock = NSLock()
    /// Runs `body` (a child's start, with whatever descriptors it makes for it) while no other
    /// child of this process starts.
    public static func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// A value that is not Sendable, handed to one other thread of a test which alone uses it from
/// then on (the thread that made it waits for that thread before it looks again).
public struct HandedOver<T>: @unchecked Sendable {
    public let value: T
    public init(_ value: T) { self.value = value }
}

/// A value shared between threads of a test.
public final class Locked<T>: @unchecked Sendable {
    private var _value: T
    private let lock = NSLock()
    public init(_ value: T) { _value = value }
    public var value: T { lock.lock(); defer { lock.unlock() }; return _value }
    public func mutate(_ body: (inout T) -> Void) { lock.lock(); body(&_value); lock.unlock() }
}
