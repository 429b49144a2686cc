#if BIOUNLOCK_FAULTS
import Glibc
import Synchronization

// Fault injection, in the spirit of swift-system's mocking: in test and fuzz builds (compiled
// with -D BIOUNLOCK_FAULTS; Package.swift defines it for debug builds, scripts/fuzz for the fuzz
// targets) the syscall funnel asks the installed schedule, before each C call, whether to fail
// it or shorten it. Release builds -- what ships, and what the module tests load through libpam --
// contain none of this: the funnel's hook is compiled out.
//
// A schedule is deterministic: rules name a call (SystemCall) and say which of its calls, counted
// from the moment the schedule was installed, get which fault. A fuzz harness turns its input
// into a schedule with `FaultSchedule(fuzzInput:)` and runs one input under it with
// `Faults.run(_:_:)`; the same bytes give the same faults on every run.

/// What a scheduled call does instead of its normal course.
public enum Fault: Equatable, Hashable, Sendable {
    /// The call is not made and fails with this errno. EINTR is retried by the funnel, as a real
    /// one is: it shows that the retry is transparent.
    case fail(Errno.Code)
    /// A transfer (read, write, send, recv) moves at most this many bytes (at least 1); other
    /// calls are made as usual.
    case short(Int)
}

/// One rule: of the calls to `call`, let `skip` through, then give the next `count` the fault.
public struct FaultRule: Equatable, Hashable, Sendable {
    public var call: SystemCall
    public var fault: Fault
    public var skip: Int
    public var count: Int

    public init(_ call: SystemCall, _ fault: Fault, skip: Int = 0, count: Int = 1) {
        self.call = call
        self.fault = fault
        self.skip = max(0, skip)
        self.count = max(0, count)
    }

    func applies(toCallNumber n: Int) -> Bool {
        n >= skip && n - skip < count
    }
}

/// The rules in force; the first rule that applies to a call decides it.
public struct FaultSchedule: Equatable, Hashable, Sendable {
    public var rules: [FaultRule]

    public init(_ rules: [FaultRule] = []) { self.rules = rules }

    /// The faults a fuzz input chooses from: the errnos the layer's callers must survive, and
    /// short transfers.
    public static let fuzzFaults: [Fault] = [
        .fail(.interrupted), .fail(.wouldBlock), .fail(.noSpace), .fail(.ioError), .fail(.tooManyOpenFiles),
        .fail(.noMemory), .short(1), .short(7),
    ]
    /// Most rules read from one fuzz input.
    public static let maximumFuzzRules = 64

    /// A schedule read from fuzz input, 4 bytes per rule -- call, fault, skip, count -- each
    /// byte taken modulo what it chooses from (so every input is a valid schedule and small
    /// changes make small differences). Counts stay below 16: an EINTR rule cannot keep one call
    /// retrying for long. Never traps, whatever the bytes.
    public init(fuzzInput bytes: some Sequence<UInt8>) {
        let calls = SystemCall.allCases
        var rules: [FaultRule] = []
        var group: [UInt8] = []
        for byte in bytes {
            group.append(byte)
            guard group.count == 4 else { continue }
            rules.append(FaultRule(calls[Int(group[0]) % calls.count],
                                   FaultSchedule.fuzzFaults[Int(group[1]) % FaultSchedule.fuzzFaults.count],
                                   skip: Int(group[2] % 32), count: Int(group[3] % 16)))
            group.removeAll(keepingCapacity: true)
            if rules.count == FaultSchedule.maximumFuzzRules { break }
        }
        self.rules = rules
    }
}

public enum Faults {
    /// One fault as it was injected.
    public struct Injection: Equatable, Hashable, Sendable, CustomStringConvertible {
        public let call: SystemCall
        /// Which call to `call` it was, counting from 0 since the schedule was installed.
        public let number: Int
        public let fault: Fault
        public var description: String { "\(call.rawValue)#\(number): \(fault)" }
    }

    struct State {
        var schedule: FaultSchedule
        var calls: [SystemCall: Int] = [:]
        var injected: [Injection] = []
        /// Only this thread's calls are scheduled (nil: every thread's).
        var thread: pthread_t?
    }

    static let state = Mutex<State?>(nil)

    /// Installs `schedule` (replacing any other). With `allThreads` false, only calls made by the
    /// installing thread are counted and faulted, so that a test's helper threads (a peer at the
    /// other end of a socket) run undisturbed and the schedule stays deterministic.
    public static func install(_ schedule: FaultSchedule, allThreads: Bool = false) {
        state.withLock { $0 = State(schedule: schedule, thread: allThreads ? nil : pthread_self()) }
    }

    /// Removes the schedule; returns what it injected.
    @discardableResult
    public static func remove() -> [Injection] {
        state.withLock { s in
            defer { s = nil }
            return s?.injected ?? []
        }
    }

    /// What the installed schedule has injected so far.
    public static var injected: [Injection] { state.withLock { $0?.injected ?? [] } }

    /// How many calls to `call` the installed schedule has seen (faulted or not).
    public static func count(of call: SystemCall) -> Int { state.withLock { $0?.calls[call] ?? 0 } }

    /// Runs `body` under `schedule` and removes it afterwards, also when `body` throws.
    public static func run<R, E: Error>(_ schedule: FaultSchedule, allThreads: Bool = false,
                                        _ body: () throws(E) -> R) throws(E) -> (result: R, injected: [Injection]) {
        install(schedule, allThreads: allThreads)
        do {
            let result = try body()
            return (result, remove())
        } catch {
            remove()
            throw error
        }
    }

    /// The funnel's question before each call: the fault for this call, if any (and counts it).
    static func next(_ call: SystemCall) -> Fault? {
        state.withLock { s -> Fault? in
            // Mutated in place (optional chaining on the inout state): no copy per call.
            s?.decide(call) ?? nil
        }
    }
}

extension Faults.State {
    mutating func decide(_ call: SystemCall) -> Fault? {
        if let thread, pthread_equal(thread, pthread_self()) == 0 { return nil }
        let number = calls[call, default: 0]
        calls[call] = number &+ 1
        guard let fault = schedule.rules.first(where: { $0.call == call && $0.applies(toCallNumber: number) })?.fault else { return nil }
        injected.append(Faults.Injection(call: call, number: number, fault: fault))
        return fault
    }
}
#endif
