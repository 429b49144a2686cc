import CSystem
import Glibc

/// What a privileged program (biounlock-check) or a helper (biounlock-fprint) does to its own
/// process before it trusts anything: thin wrappers, each naming its call; the choices are the
/// callers' (Sources/biounlock-check/Hardening.swift says why each is made). Never called in the
/// PAM module, which leaves its host's process state as it found it.
public enum ProcessState {
    /// clearenv(3).
    public static func clearEnvironment() {
        _ = clearenv()
    }

    /// sigprocmask(SIG_SETMASK, empty): every signal unblocked; then signal(SIG_DFL) for every
    /// signal 1-64 but SIGKILL and SIGSTOP.
    public static func resetSignals() {
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        for signo in 1..<Int32(65) where signo != SIGKILL && signo != SIGSTOP {
            signal(signo, SIG_DFL)
        }
    }

    /// signal(SIGPIPE, SIG_IGN): a write to a closed socket is EPIPE, not the end of the process.
    public static func ignoreBrokenPipe() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// closefrom(3): closes every descriptor numbered `first` or above.
    public static func closeDescriptors(from first: Int32) {
        closefrom(first)
    }

    /// Descriptors 0, 1 and 2 become /dev/null (open O_RDWR|O_NOCTTY, dup2), whatever they were
    /// and even if they were closed; when /dev/null cannot be opened they are closed.
    public static func standardDescriptorsToNull() {
        let null = Glibc.open("/dev/null", O_RDWR | O_NOCTTY)
        for fd in Int32(0)...2 where null != fd {
            if null >= 0 { dup2(null, fd) } else { Glibc.close(fd) }
        }
        if null > 2 { Glibc.close(null) }
    }

    /// setrlimit(RLIMIT_CORE, 0): no core dumps.
    public static func disableCoreDumps() {
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
    }

    /// setrlimit(RLIM_INFINITY) for the file size, CPU time, address space and data limits a
    /// caller may have lowered, and RLIMIT_NOFILE raised to at least `minimumFiles`. Returns the
    /// limits it could not raise (with why): a caller's hard limit stays when the process lacks
    /// CAP_SYS_RESOURCE (a bounding set without it, a user namespace). The choice of what to do
    /// then is the caller's (biounlock-check refuses to check: Hardening.swift).
    @discardableResult
    public static func raiseLimits(minimumFiles: UInt64) -> [LimitProblem] {
        var problems: [LimitProblem] = []
        for resource in ResourceLimit.raised {
            var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)   // RLIM_INFINITY
            if case .failure(let error) = system(.setrlimit, { setrlimit(resource.code, &unlimited) }) {
                problems.append(LimitProblem(limit: resource, error: error, current: ResourceLimit.soft(resource)))
            }
        }
        var files = rlimit()
        if case .success = system(.getrlimit, { getrlimit(ResourceLimit.files.code, &files) }), files.rlim_cur < minimumFiles {
            files.rlim_cur = rlim_t(truncatingIfNeeded: minimumFiles)
            files.rlim_max = max(files.rlim_max, rlim_t(truncatingIfNeeded: minimumFiles))
            if case .failure(let error) = system(.setrlimit, { setrlimit(ResourceLimit.files.code, &files) }) {
                problems.append(LimitProblem(limit: .files, error: error, current: ResourceLimit.soft(.files)))
            }
        }
        return problems
    }

    /// prctl(PR_SET_DUMPABLE, 0).
    public static func setNotDumpable() {
        _ = biounlock_set_nondumpable()
    }

    /// prctl(PR_GET_NO_NEW_PRIVS): whether no_new_privs is set (the setuid bit was then ignored).
    public static var noNewPrivileges: Bool { biounlock_no_new_privs() != 0 }

    /// prctl(PR_SET_PDEATHSIG, SIGKILL): this process is killed when its parent (`parent`, the
    /// pid it was started by) dies. False when that could not be armed or the parent is gone already.
    public static func dieWithParent(_ parent: Int32) -> Bool {
        biounlock_die_with_parent(parent) == 0
    }

    /// getppid(2).
    public static var parentProcessID: Int32 { getppid() }

    /// Whether this process adopts its descendants' orphans (prctl PR_GET_CHILD_SUBREAPER); true
    /// when that cannot be read. A PAM module whose host is one must not leave a detached helper
    /// (`detach`) behind: it would become the host's child.
    public static var isChildSubreaper: Bool { biounlock_is_child_subreaper() != 0 }

    /// fork(2), and the parent ends at once (_exit(0)): the child goes on as an orphan, adopted
    /// by init (or the nearest subreaper), never left to the process that spawned this one. True
    /// in the child; false when fork failed (this process goes on, not detached). Only for a
    /// single-threaded helper with nothing buffered (the parent runs no exit handler).
    public static func detach() -> Bool {
        let pid = Glibc.fork()
        if pid > 0 { Glibc._exit(0) }
        return pid == 0
    }

    /// setgroups(0, NULL): no supplementary groups.
    public static func dropSupplementaryGroups() {
        _ = setgroups(0, nil)
    }

    /// setregid(2).
    public static func setGroups(real: UInt32, effective: UInt32) {
        _ = setregid(real, effective)
    }

    /// The exit status of the watchdog (EX_TEMPFAIL).
    public static let watchdogExitStatus = Int32(BIOUNLOCK_WATCHDOG_STATUS)

    /// signal(SIGALRM, _exit) and alarm(seconds): the process ends `seconds` from now (status
    /// `watchdogExitStatus`), whatever it waits for.
    public static func installWatchdog(seconds: Int) {
        biounlock_watchdog(UInt32(clamping: seconds))
    }

    /// exit(3).
    public static func exit(_ status: Int32) -> Never {
        Glibc.exit(status)
    }

    /// _exit(2): ends the process now, without exit handlers or stdio flushing (a helper whose
    /// spawner waits for its end, with nothing left to flush).
    public static func exitNow(_ status: Int32) -> Never {
        Glibc._exit(status)
    }
}

/// setlocale(3), for a program's own process (biounlock-check speaking its caller's language);
/// the PAM module never calls it.
public enum LocaleSetting {
    public enum Category: Sendable {
        case all, characterType, messages
        var value: Int32 {
            switch self {
            case .all: return LC_ALL
            case .characterType: return LC_CTYPE
            case .messages: return LC_MESSAGES
            }
        }
    }

    /// setlocale(category, name): false when the system has no such locale. An empty name takes
    /// the locale from the environment (LC_ALL, LC_*, LANG).
    @discardableResult
    public static func set(_ category: Category, to name: String) -> Bool {
        setlocale(category.value, name) != nil
    }
}

/// The C library's standard output stream, which print() writes to.
public enum StandardOutput {
    /// fflush(stdout).
    public static func flush() { biounlock_flush_standard_output() }
}

/// The process environment.
public enum Environment {
    /// getenv(3): the value's bytes, nil when unset. With `maximumLength`, at most
    /// `maximumLength + 1` bytes are read (more than `maximumLength` tells the caller the value is
    /// too long); without, all of them.
    public static func value(_ name: String, maximumLength: Int? = nil) -> [UInt8]? {
        guard let value = getenv(name) else { return nil }
        guard let maximumLength, maximumLength < Int.max else { return CString.bytes(value, maximumLength: Int.max) }
        return CString.bytes(value, maximumLength: maximumLength + 1)
    }

    /// setenv(name, value, 1).
    @discardableResult
    public static func set(_ name: String, to value: String) -> Bool {
        setenv(name, value, 1) == 0
    }
}

/// Reading C strings a C API hands over (libpam's items and answers, gettext's translations,
/// NSS entries): bounded, never past `maximumLength` bytes whatever the terminator.
public enum CString {
    /// The bytes before the terminator, at most `maximumLength` of them (strnlen).
    public static func bytes(_ pointer: UnsafePointer<CChar>, maximumLength: Int) -> [UInt8] {
        let length = strnlen(pointer, max(0, maximumLength))
        // One copy of the buffer (a byte-by-byte map cost a fresh sudo measurably: scripts/bench).
        return [UInt8](UnsafeRawBufferPointer(start: UnsafeRawPointer(pointer), count: length))
    }

    /// The text before the terminator, when it is at most `maximumLength` bytes of valid UTF-8;
    /// else nil. The bounded read of a string a C API hands over (libpam's items, gettext's
    /// translations): no copy of the bytes, and the decoder of `text(validating:)`.
    public static func text(_ pointer: UnsafePointer<CChar>, maximumLength: Int) -> String? {
        guard length(pointer, maximumLength: min(maximumLength, Int.max - 1) + 1) <= maximumLength else { return nil }
        // strnlen found the terminator within the bound: the decoder stops there.
        return String(validatingCString: pointer)
    }

    /// `bytes` as text when they are valid UTF-8, else nil. Through the standard library's own
    /// UTF-8 validation (String(validatingCString:)), not the generic `String(validating:as:)`,
    /// whose first use in a process resolves its encoding at run time (scripts/bench).
    public static func text(validating bytes: [UInt8]) -> String? {
        // A NUL would end the C string early: such text goes the generic way (same answer).
        if bytes.contains(0) { return String(validating: bytes, as: UTF8.self) }
        var terminated = bytes
        terminated.append(0)
        return terminated.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.flatMap { base in
                UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: buffer.count) { String(validatingCString: $0) }
            }
        }
    }

    /// The length before the terminator, at most `maximumLength` (strnlen).
    public static func length(_ pointer: UnsafePointer<CChar>, maximumLength: Int) -> Int {
        strnlen(pointer, max(0, maximumLength))
    }
}

/// Zeroing memory that held a secret: explicit_bzero, which the compiler may not remove. (The
/// secrets themselves live in Core's zeroing `Secret`; this is for the byte arrays that carried
/// them on their way: frames, terminal input.)
public enum Memory {
    public static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { explicit_bzero(base, raw.count) }
        }
    }
}

/// The name of this host (gethostname).
public enum Host {
    public static func name() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard case .success = system(.gethostname, { gethostname(&buffer, buffer.count - 1) }) else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// syslog(3) to authpriv, for a program of biounlock's own (biounlock-check). The PAM module
/// logs through pam_syslog instead; `Priority` gives both the header's values.
public enum SystemLog {
    public struct Priority: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let error = Priority(rawValue: LOG_ERR)
        public static let warning = Priority(rawValue: LOG_WARNING)
        public static let notice = Priority(rawValue: LOG_NOTICE)
        public static let info = Priority(rawValue: LOG_INFO)
        public static let debug = Priority(rawValue: LOG_DEBUG)
    }

    /// openlog(identifier, LOG_PID | LOG_NDELAY, LOG_AUTHPRIV).
    public static func open(identifier: StaticString) {
        // A literal: NUL-terminated and valid for the life of the process, as openlog keeps it.
        guard identifier.hasPointerRepresentation else { return }
        biounlock_openlog_authpriv(UnsafeRawPointer(identifier.utf8Start).assumingMemoryBound(to: CChar.self))
    }

    /// syslog(priority, "%s", message).
    public static func write(_ priority: Priority, _ message: String) {
        biounlock_syslog(priority.rawValue, message)
    }
}

/// The resource limits biounlock reads or raises (getrlimit(2), setrlimit(2)).
public enum ResourceLimit: String, Sendable, CaseIterable {
    case fileSize = "RLIMIT_FSIZE", cpu = "RLIMIT_CPU", addressSpace = "RLIMIT_AS", data = "RLIMIT_DATA", files = "RLIMIT_NOFILE"

    /// The limits raiseLimits sets to unlimited.
    static let raised: [ResourceLimit] = [.fileSize, .cpu, .addressSpace, .data]

    var code: __rlimit_resource_t {
        switch self {
        case .fileSize: return __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        case .cpu: return __rlimit_resource_t(RLIMIT_CPU.rawValue)
        case .addressSpace: return __rlimit_resource_t(RLIMIT_AS.rawValue)
        case .data: return __rlimit_resource_t(RLIMIT_DATA.rawValue)
        case .files: return __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        }
    }

    /// getrlimit(2): the soft limit, nil when unlimited (or when it cannot be read: then nothing
    /// is known to be in the way).
    public static func soft(_ limit: ResourceLimit) -> UInt64? {
        var value = rlimit()
        guard case .success = system(.getrlimit, { getrlimit(limit.code, &value) }), value.rlim_cur != rlim_t.max else { return nil }
        return UInt64(value.rlim_cur)
    }

    /// Whether this process can still map `bytes` more and spend `cpuSeconds` more of CPU time
    /// under its soft limits (RLIMIT_AS, RLIMIT_DATA, RLIMIT_CPU), counting what it has mapped and
    /// spent already. Three getrlimit calls when nothing is limited -- the usual case --, and
    /// /proc/self/statm and getrusage(2) only when something is. When what the process uses
    /// cannot be read under a finite limit, the answer is no.
    public static func allows(bytes: UInt64, cpuSeconds: UInt64) -> Bool {
        let space = soft(.addressSpace), data = soft(.data), cpu = soft(.cpu)
        if space != nil || data != nil {
            guard let (size, dataSize) = mappedBytes() else { return false }
            func fits(_ used: UInt64, under limit: UInt64?) -> Bool {
                guard let limit else { return true }
                let (total, overflow) = used.addingReportingOverflow(bytes)
                return !overflow && total <= limit
            }
            guard fits(size, under: space), fits(dataSize, under: data) else { return false }
        }
        if let cpu {
            var usage = rusage()
            guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return false }
            let spent = UInt64(clamping: usage.ru_utime.tv_sec) &+ UInt64(clamping: usage.ru_stime.tv_sec) &+ 1
            if spent >= cpu || cpu - spent < cpuSeconds { return false }
        }
        return true
    }

    /// The process's mapped size and data size in bytes (/proc/self/statm: "size resident shared
    /// text lib data dt", in pages).
    static func mappedBytes() -> (size: UInt64, data: UInt64)? {
        guard let file = try? FileDescriptor.open("/proc/self/statm", .readOnly, options: [.nonBlocking]) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 128)
        guard let n = try? file.descriptor.read(into: &buffer), n > 0 else { return nil }
        let fields = buffer.prefix(n).split(whereSeparator: { $0 == 0x20 || $0 == 0x0a })
        guard fields.count >= 6, let pages = UInt64(String(decoding: fields[0], as: UTF8.self)),
              let dataPages = UInt64(String(decoding: fields[5], as: UTF8.self)) else { return nil }
        let page = UInt64(max(1, sysconf(Int32(_SC_PAGESIZE))))
        guard pages <= UInt64.max / page, dataPages <= UInt64.max / page else { return nil }
        return (pages * page, dataPages * page)
    }
}

/// A limit raiseLimits could not raise.
public struct LimitProblem: Sendable, Equatable, CustomStringConvertible {
    public let limit: ResourceLimit
    public let error: Errno
    /// The soft limit left in place (nil: unlimited, or unreadable).
    public let current: UInt64?
    public var description: String {
        "cannot raise \(limit.rawValue) (now \(current.map(String.init) ?? "unlimited")): \(error.message)"
    }
}
