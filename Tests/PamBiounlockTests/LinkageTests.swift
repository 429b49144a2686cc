import XCTest
import TestSupport
import Foundation

/// The built module is safe to load into sudo and login: only the PAM entry points exported,
/// no Swift runtime from the toolchain, no unresolved symbols.
final class LinkageTests: XCTestCase {
    func testOnlyThePamEntryPointsAreExported() throws {
        let r = try runProcess("/usr/bin/nm", ["-D", "--defined-only", modulePath])
        XCTAssertEqual(r.status, 0, r.stderr)
        let symbols = r.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }.sorted()
        XCTAssertEqual(symbols, ["pam_sm_acct_mgmt", "pam_sm_authenticate", "pam_sm_setcred"])
    }

    func testNoSwiftLibraryIsNeeded() throws {
        let r = try runProcess("/usr/bin/ldd", [modulePath])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stdout.contains("swift"), r.stdout)
        XCTAssertFalse(r.stdout.contains("not found"), r.stdout)
        XCTAssertFalse(r.stdout.contains("Foundation"), r.stdout)
        let readelf = try runProcess("/usr/bin/readelf", ["-d", modulePath])
        XCTAssertFalse(readelf.stdout.contains("/opt/swift"), readelf.stdout)
        XCTAssertFalse(readelf.stdout.contains("RUNPATH") || readelf.stdout.contains("RPATH"), readelf.stdout)
        XCTAssertTrue(readelf.stdout.contains("NODELETE"), "stays mapped across pam_end: \(readelf.stdout)")
        XCTAssertTrue(readelf.stdout.contains("BIND_NOW"), "every symbol bound at dlopen: \(readelf.stdout)")
        XCTAssertTrue(readelf.stdout.contains("(RELR)"), "relative relocations packed (Package.swift): \(readelf.stdout)")
    }

    /// The C++ runtime the static Swift runtime needs is linked in too (Package.swift): a host
    /// such as sudo would otherwise load and relocate libstdc++.so for every run (scripts/bench:
    /// the largest part of what loading the module cost a fresh process). Its symbols stay hidden,
    /// so a C++ host's own libstdc++ is untouched.
    func testTheCxxRuntimeIsLinkedInAndHidden() throws {
        try assertLinkedIn("libstdc++", noSymbolsMarked: ["GLIBCXX", "CXXABI"], "C++ runtime symbols taken from a libstdc++.so")
    }

    /// The unwinder the C++ and Swift runtimes use is linked in as well (`-static-libgcc`):
    /// no libgcc_s.so to load, relocate and initialise (its constructor runs cpuid) in a fresh
    /// host process, and its symbols stay hidden.
    func testTheUnwinderIsLinkedInAndHidden() throws {
        try assertLinkedIn("libgcc_s", noSymbolsMarked: ["_Unwind_", "@GCC_"], "unwinder symbols taken from libgcc_s")
    }

    /// SQLite is linked in from libsqlite3.a (Package.swift): libsqlite3.so binds its ~1,600
    /// symbols at every fresh load, about 0.4 ms of each sudo (scripts/bench). Its symbols stay
    /// hidden, so a host's own SQLite (and its open databases) never meets the module's.
    func testSQLiteIsLinkedInAndHidden() throws {
        try assertLinkedIn("libsqlite3", noSymbolsMarked: ["sqlite3_"], "SQLite symbols taken from libsqlite3.so")
        let defined = try runProcess("/usr/bin/nm", ["-D", "--defined-only", modulePath])
        XCTAssertFalse(defined.stdout.contains("sqlite3"), defined.stdout)
    }

    /// `library` is not in the module's dynamic section, and no undefined symbol of the module
    /// contains any of `markers` (its symbols, or their version tags, would name it).
    func assertLinkedIn(_ library: String, noSymbolsMarked markers: [String], _ what: String,
                        file: StaticString = #filePath, line: UInt = #line) throws {
        let readelf = try runProcess("/usr/bin/readelf", ["-d", modulePath])
        XCTAssertFalse(readelf.stdout.contains(library), readelf.stdout, file: file, line: line)
        let undefined = try runProcess("/usr/bin/nm", ["-D", "--undefined-only", modulePath])
        for marker in markers {
            XCTAssertFalse(undefined.stdout.contains(marker), "\(what) (\(marker)): \(undefined.stdout)", file: file, line: line)
        }
    }

    /// The static Swift runtime's argv grabber -- a constructor in libswiftCore.a's
    /// CommandLine.cpp.o that reads /proc/self/maps when the module is loaded -- is not in the
    /// module: CModuleRuntime defines the two functions that object provides (argv.c), so the
    /// linker never takes it. A process that loads the module and authenticates reads neither
    /// its maps nor its command line for it.
    func testTheSwiftRuntimeDoesNotLookForTheHostsArguments() throws {
        let symbols = try runProcess("/usr/bin/nm", [modulePath])
        XCTAssertEqual(symbols.status, 0, symbols.stderr)
        XCTAssertFalse(symbols.stdout.contains("argvGrabber"), "libswiftCore.a's CommandLine.cpp.o was linked in")
        for name in ["_swift_stdlib_getUnsafeArgvArgc", "_swift_stdlib_overrideUnsafeArgvArgc"] {
            XCTAssertTrue(symbols.stdout.contains(" t \(name)\n"), "\(name): CModuleRuntime's, hidden")
        }
        let fixture = try ModuleFixture()
        try fixture.enrolDefaultUser()
        try fixture.service("")
        let trace = fixture.dir + "/strace.out"
        let t = try fixture.authenticate(ModuleFixture.otherUser, wrapper: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=open,openat", "-o", trace])
        XCTAssertEqual(t.code, "PAM_TRY_AGAIN", "not enabled: PAM_IGNORE, then the stack's pam_debug: \(t.raw.stdout)\(t.raw.stderr)")
        // From the module's load on (the harness, a SwiftPM program, has a Swift runtime of its own).
        let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        let load = try XCTUnwrap(calls.firstIndex { $0.contains("pam_biounlock.so") }, "the module was loaded")
        XCTAssertEqual(calls[load...].filter { $0.contains("/proc/self/maps") || $0.contains("/proc/self/cmdline") }, [])
    }

    /// The module's targets do not import _StringProcessing (Package.swift, moduleSwiftSettings),
    /// so neither it nor _RegexParser is linked in: 1.2 MB of code a fresh sudo would map and
    /// relocate, none of which the module uses.
    func testTheRegexEngineStaysOutOfTheModule() throws {
        let symbols = try runProcess("/usr/bin/nm", [modulePath])
        XCTAssertEqual(symbols.status, 0, symbols.stderr)
        for module in ["17_StringProcessing", "12_RegexParser"] {
            let count = symbols.stdout.split(separator: "\n").filter { $0.contains(" $s\(module)") }.count
            XCTAssertEqual(count, 0, "symbols of \(module) in the module")
        }
    }

    /// libfprint and the fprintd D-Bus client run in the helper processes only: the module maps
    /// neither libfprint, GLib, D-Bus nor systemd (sd-bus), so it can never iterate (or be
    /// confused by) the host's GLib main context or open a bus connection inside sudo.
    func testLibfprintGLibAndDBusStayOutOfTheModule() throws {
        let r = try runProcess("/usr/bin/ldd", [modulePath])
        for library in ["libfprint", "libglib", "libgio", "libgobject", "libgusb", "libdbus", "libsystemd", "libelogind"] {
            XCTAssertFalse(r.stdout.contains(library), "\(library) in the module: \(r.stdout)")
        }
        let undefined = try runProcess("/usr/bin/nm", ["-D", "--undefined-only", modulePath])
        XCTAssertFalse(undefined.stdout.contains(" fp_"), "libfprint symbols referenced by the module")
        XCTAssertFalse(undefined.stdout.contains(" g_"), "GLib symbols referenced by the module")
        XCTAssertFalse(undefined.stdout.contains(" dbus_"), "libdbus symbols referenced by the module")
        XCTAssertFalse(undefined.stdout.contains(" sd_"), "sd-bus symbols referenced by the module")
        let nm = try runProcess("/usr/bin/nm", [modulePath])
        XCTAssertFalse(nm.stdout.contains("13BiounlockDBus"), "the D-Bus client linked into the module")
        let helper = try runProcess("/usr/bin/ldd", [fprintHelperPath])
        XCTAssertTrue(helper.stdout.contains("libfprint-2.so"), "the libfprint helper is where libfprint lives: \(helper.stdout)")
        XCTAssertFalse(helper.stdout.contains("swift"), "the helper runs without the toolchain: \(helper.stdout)")
    }

    /// sensor=fprintd's helper loads nothing of libfprint (nor GLib, libdbus or sd-bus: it speaks
    /// D-Bus itself): ldd names libc and libm only, and none of the Swift, C++ or unwinder
    /// runtimes, which are linked in (Package.swift, helperLinkerFlags) like the module's.
    func testTheFprintdHelperLoadsOnlyLibc() throws {
        let r = try runProcess("/usr/bin/ldd", [fprintdHelperPath])
        XCTAssertEqual(r.status, 0, r.stderr)
        let libraries = r.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("linux-vdso") }.sorted()
        XCTAssertEqual(libraries, ["/lib64/ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6"], r.stdout)
        for library in ["libfprint", "libglib", "libgio", "libgobject", "libgusb", "libdbus", "libsystemd", "libstdc++", "libgcc_s", "swift"] {
            XCTAssertFalse(r.stdout.contains(library), "\(library): \(r.stdout)")
        }
        let readelf = try runProcess("/usr/bin/readelf", ["-d", fprintdHelperPath])
        XCTAssertTrue(readelf.stdout.contains("(RELR)"), "relative relocations packed: \(readelf.stdout)")
        XCTAssertTrue(readelf.stdout.contains("BIND_NOW"), readelf.stdout)
        XCTAssertFalse(readelf.stdout.contains("RUNPATH") || readelf.stdout.contains("RPATH"), readelf.stdout)
    }

    /// Both helpers take their arguments from glibc (CHelperRuntime), not from the static Swift
    /// runtime's reader of /proc/self/maps: libswiftCore.a's CommandLine.cpp.o is not linked in,
    /// and a helper asked for its usage reads neither its maps nor its command line.
    func testTheHelpersDoNotReadTheirMapsToFindTheirArguments() throws {
        for helper in [fprintdHelperPath, fprintHelperPath] {
            let symbols = try runProcess("/usr/bin/nm", [helper])
            XCTAssertFalse(symbols.stdout.contains("argvGrabber"), "\(helper): libswiftCore.a's CommandLine.cpp.o was linked in")
            let dir = try trustedScratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let trace = dir + "/strace.out"
            let r = try runProcess("/usr/bin/strace", ["-f", "-qq", "-e", "trace=open,openat", "-o", trace, helper, "--no-such-mode"])
            XCTAssertEqual(r.status, 64, "\(helper): its usage, from its arguments: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("not for interactive use"), r.stderr)
            let calls = try String(contentsOfFile: trace, encoding: .utf8)
            XCTAssertFalse(calls.contains("/proc/self/maps") || calls.contains("/proc/self/cmdline"), "\(helper): \(calls)")
        }
    }

    /// dlib, its BLAS and LAPACK, libjpeg/libpng and the camera code run in biounlock-face only
    /// (issue 34): the module maps none of them and references none of their symbols, so no
    /// model load, thread pool or camera ioctl ever happens inside sudo or login.
    func testDlibBLASAndTheCameraStayOutOfTheModule() throws {
        let r = try runProcess("/usr/bin/ldd", [modulePath])
        for library in ["libdlib", "libblas", "libopenblas", "liblapack", "libgfortran", "libjpeg", "libpng", "libstdc++"] {
            XCTAssertFalse(r.stdout.contains(library), "\(library) in the module: \(r.stdout)")
        }
        let undefined = try runProcess("/usr/bin/nm", ["-D", "--undefined-only", modulePath])
        for prefix in [" bu_face_", " bu_camera_", " cblas_", " dgemm", " sgemm"] {
            XCTAssertFalse(undefined.stdout.contains(prefix), "\(prefix) referenced by the module")
        }
        let defined = try runProcess("/usr/bin/nm", ["-C", "--defined-only", modulePath])
        XCTAssertFalse(defined.stdout.contains("bu_face_") || defined.stdout.contains("bu_camera_") || defined.stdout.contains("dlib::"),
                       "face engine or camera code linked into the module")
        let helper = try runProcess("/usr/bin/ldd", [buildDirectory + "/biounlock-face"])
        XCTAssertTrue(helper.stdout.contains("libdlib.so"), "the face helper is where dlib lives: \(helper.stdout)")
        XCTAssertTrue(helper.stdout.contains("libblas.so"), "and its BLAS: \(helper.stdout)")
        XCTAssertFalse(helper.stdout.contains("swift"), "the helper runs without the toolchain: \(helper.stdout)")
    }

    /// The fuzz build's seams (a scripted reader, terminal and clock, cheap Argon2id: -D
    /// BIOUNLOCK_FUZZ, scripts/fuzz only) never reach the shipped module.
    func testNoFuzzSeamsInsideTheModule() throws {
        let symbols = try runProcess("/usr/bin/nm", [modulePath])
        XCTAssertEqual(symbols.status, 0, symbols.stderr)
        for name in ["biounlock_fuzz", "FuzzWorld", "FuzzSensor", "FuzzTerminal", "FuzzClock"] {
            XCTAssertFalse(symbols.stdout.contains(name), "\(name) in the shipped module")
        }
        let strings = try runProcess("/usr/bin/strings", ["-a", modulePath])
        XCTAssertFalse(strings.stdout.contains("fuzz:"), "a fuzz build message in the shipped module")
        XCTAssertFalse(strings.stdout.contains("fuzz build"), "a fuzz build message in the shipped module")
    }

    /// What only the admin tool needs (BiounlockAdmin: doctor's pam.d lint, the status, log and
    /// sensors reports, enable's checks, JSON) is not linked into the module that runs inside sudo.
    /// Checked by module name and, in case one of them moves back into a library the module
    /// links, by each type's mangled name.
    func testNoAdminCodeInsideTheModule() throws {
        let r = try runProcess("/usr/bin/nm", [modulePath])
        XCTAssertEqual(r.status, 0, r.stderr)
        let symbols = r.stdout.split(separator: "\n")
        XCTAssertGreaterThan(symbols.count, 1000, "nm listed the module's symbols")
        let adminOnly = [
            "14BiounlockAdmin",                                     // anything of the admin target
            "12PamStackLintO", "11EnableCheckO", "12StatusReportO", // doctor's lint, enable's checks, status/list/log
            "13SensorsReportO", "13FprintdReportV", "12FprintdCheckO", // sensors, fprintd's notes
            "4JSONO",                                               // --json
            "16localizedProblem", "12sensorReason", "7PatternO4draw", // texts and drawings only the CLI shows
        ]
        for name in adminOnly {
            let found = symbols.filter { $0.contains(name) }
            XCTAssertEqual(found.count, 0, "admin-only \(name) in the module: \(found.prefix(3))")
        }
    }

    func testNoFoundationInsideTheModule() throws {
        let r = try runProcess("/usr/bin/nm", [modulePath])
        XCTAssertFalse(r.stdout.contains("10Foundation"), "Foundation symbols linked into the module")
    }
}
