// swift-tools-version:6.0
//
// biounlock: biometric-or-passcode authentication for Linux PAM.
//
// Layers, bottom to top (the tree under Sources/ follows them):
//   C wrappers      CPAM, CSodium, CSQLite, CFPrint   (system libraries, pkg-config + apt), CSystem, CIntl (libc),
//                   CModuleRuntime                    (the module's stand-in for a piece of the Swift runtime)
//   system calls    BiounlockSystem                   (the only Swift target that imports Glibc: typed Errno, EINTR, poll, files)
//   core policy     BiounlockCore                     (options, policy chain, messages and their translations, secrets)
//   store           BiounlockStore                    (SQLite: settings, templates, counters, audit)
//   sensors         BiounlockSensors                  (simulated sensor; libfprint through the helper)
//   D-Bus client    BiounlockDBus                     (the message format, SASL EXTERNAL, one connection: fprintd's helper only)
//   helpers         biounlock-fprint                  (the only program that loads libfprint-2 / GLib: sensor=libfprint)
//                   biounlock-fprintd                 (fprintd's client: sensor=fprintd; libc only)
//   checker         BiounlockCheck -> biounlock-check (setuid root: the chain for callers without root)
//   module          PamBiounlock -> pam_biounlock.so  (thin translation to PAM)
//   admin           BiounlockAdmin                    (doctor's lint, status/sensors reports, enable checks, JSON: CLI only)
//   service         BiounlockServiceProtocol          (biounlockd's D-Bus API: names, values, the status shape; pure Swift)
//                   BiounlockBus                      (GDBus/GVariant for the service and its clients; CGIO)
//                   BiounlockService -> biounlockd    (the method handlers, polkit and re-authentication rules; GLib-free)
//   settings app    CGtk, BiounlockGtk -> biounlock-settings  (GTK 4 + libadwaita; biounlockd's client only)
//   CLI             biounlock                         (admin tool, thin: logic lives in the libraries; a user's own
//                                                      account through biounlockd)
import PackageDescription

let packageDir = Context.packageDirectory

/// Linker settings that make the module safe to load into sudo and login:
/// - the Swift runtime linked in statically (ldd shows nothing from the toolchain),
/// - only pam_sm_authenticate / pam_sm_setcred exported (version script),
/// - `-z defs`: an unresolved symbol fails this link instead of the user's login,
/// - `-z nodelete`: pam_end dlcloses modules; the static Swift runtime registers
///   process-wide state (metadata caches, TLS keys) that must not be unmapped under it.
/// - `-z now` (with the default relro): every symbol is bound at dlopen, so a problem shows up
///   as PAM_MODULE_UNKNOWN at load, never halfway through an authentication.
/// - the C++ runtime (which the static Swift runtime needs) linked in statically: the toolchain's
///   static-stdlib arguments say `-lstdc++`, and `link/libstdc++.so` -- a linker script found first
///   on the search path -- turns that into libstdc++.a. Loading and relocating libstdc++.so was
///   the largest part of what the module cost a fresh sudo (scripts/bench, bench/RESULTS.md);
///   `--exclude-libs ALL` (also from the toolchain) and the version script keep its symbols
///   hidden, so a C++ host's own libstdc++ is not interposed.
/// - the unwinder (libgcc_eh) linked in statically too (`-static-libgcc`): the driver otherwise
///   adds libgcc_s.so, which sudo does not load itself, and whose constructor probes the CPU
///   with cpuid -- slow under a hypervisor -- in every fresh process (scripts/bench).
/// - `-z pack-relative-relocs` (DT_RELR, glibc 2.36 = Debian 12): the ~20,000 relative
///   relocations of the static Swift metadata as a 3.7 KB bitmap instead of a 485 KiB table the
///   dynamic linker reads page by page in every fresh sudo (scripts/bench, bench/RESULTS.md).
/// - SQLite linked in from Debian's libsqlite3.a (libsqlite3-dev, the package whose headers
///   CSQLite compiles against): libsqlite3.so binds ~1,600 symbols at load (its own calls go
///   through its GOT), which was about 0.4 ms of every fresh sudo, enrolled or not; linked in,
///   its calls are direct and its symbols hidden (`--exclude-libs ALL`, the version script). The
///   price, written down in docs/SECURITY.md ("SQLite inside the module"): a SQLite fix reaches
///   the module when biounlock is rebuilt (the package says `Built-Using: sqlite3`), and
///   `biounlock doctor` says when the system's SQLite is not the module's. Every other
///   program links libsqlite3.so (`dynamicSQLite`).
let moduleLinkerFlags: [String] = [
    "-static-stdlib",
    "-use-ld=lld",
    "-Xlinker", "--version-script=\(packageDir)/Sources/PamBiounlock/exports.map",
    "-Xlinker", "-z", "-Xlinker", "defs",
    "-Xlinker", "-z", "-Xlinker", "nodelete",
    "-Xlinker", "-z", "-Xlinker", "now",
    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-L", "\(packageDir)/Sources/PamBiounlock/link",
    "-Xclang-linker", "-static-libgcc",
    "-Xlinker", "-l:libsqlite3.a",
]

/// Linker settings of the helpers the module spawns in a transaction that waits for a finger
/// (biounlock-fprintd, biounlock-fprint): what makes the module cheap to load makes them cheap to
/// start -- the Swift runtime, the C++ runtime (`link/libstdc++.so` names libstdc++.a) and the
/// unwinder linked in, packed relative relocations, every symbol bound at start with full RELRO
/// -- and CHelperRuntime takes the program's arguments from glibc instead of the static
/// runtime's /proc/self/maps reader (scripts/bench, bench/RESULTS.md: what the start costs).
let helperLinkerFlags: [String] = [
    "-static-stdlib",
    "-use-ld=lld",
    "-L", "\(packageDir)/Sources/PamBiounlock/link",
    "-Xclang-linker", "-static-libgcc",
    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "-z", "-Xlinker", "now",
    "-Xlinker", "-z", "-Xlinker", "relro",
]

/// SQLite as a shared library, for every product but the module (CSQLite names no library).
let dynamicSQLite: LinkerSetting = .linkedLibrary("sqlite3")

/// Compiler settings of every target linked into the module. `-disable-type-layout`: copies and
/// destroys of large values (a Result or Optional of a struct with several references) are
/// emitted as code, not as calls through the type's value witnesses -- which first made the
/// runtime build that generic type's metadata from its mangled name, in every fresh sudo (0.33 ms
/// less per whole process in an interleaved `pam-loop spawn` run: bench/RESULTS.md). Swift's own
/// lowering before type layouts; the module's tests and fuzzing run the code it produces.
/// `-disable-implicit-string-processing-module-import`: these targets do not import
/// _StringProcessing (the regex engine) as every Swift file does by default, so it and
/// _RegexParser are not linked into the module: 1.2 MB less code and 0.14 MB less data to map
/// and relocate in every fresh sudo (`size`), 45 to 68 us of wall time in three of four
/// interleaved `pam-loop spawn` runs of 400 against the module before (265 us in the fourth, on a
/// busier machine). What they used of it, `firstRange(of:)` on text, is
/// `Substring.firstRange(ofText:)` (Messages.swift); LinkageTests checks that it stays out.
let moduleSwiftSettings: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-type-layout",
                                                          "-Xfrontend", "-disable-implicit-string-processing-module-import"])]

/// Tests drive threads and processes directly; Swift 5 mode spares them Sendable ceremony.
let testSettings: [SwiftSetting] = [.swiftLanguageMode(.v5)]

let package = Package(
    name: "biounlock",
    products: [
        .library(name: "pam_biounlock", type: .dynamic, targets: ["PamBiounlock"]),
        .executable(name: "biounlock", targets: ["biounlock"]),
        .executable(name: "biounlock-fprint", targets: ["biounlock-fprint"]),
        .executable(name: "biounlock-fprintd", targets: ["biounlock-fprintd"]),
        .executable(name: "biounlock-check", targets: ["biounlock-check"]),
        .executable(name: "biounlock-face", targets: ["biounlock-face"]),
        .executable(name: "pam-harness", targets: ["pam-harness"]),
        .executable(name: "biounlockd", targets: ["biounlockd"]),
        .executable(name: "biounlock-settings", targets: ["biounlock-settings"]),
    ],
    targets: [
        // C wrappers: one system-library target per C library.
        .systemLibrary(name: "CPAM", pkgConfig: "pam", providers: [.apt(["libpam0g-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // SQLite's headers (libsqlite3-dev, installed by scripts/deps). No library named here: the
        // module links libsqlite3.a (moduleLinkerFlags), the others libsqlite3.so (dynamicSQLite).
        .systemLibrary(name: "CSQLite"),
        // libc's calls that the Glibc module hides or Swift cannot make (open-file-description
        // locks, variadic prctl and syslog, the checker's C signal handler); only BiounlockSystem imports it.
        .systemLibrary(name: "CSystem"),
        // glibc's gettext (libintl is part of libc: no library to link) and the locale queries.
        .systemLibrary(name: "CIntl"),
        // What the module replaces of the static Swift runtime (the host's argv: see argv.c).
        // DWARF 4, as the Swift code's: Debian 12's valgrind cannot read clang's default DWARF 5
        // and gives up on the whole module (HostSafetyTests' and LocalizationTests' memcheck runs).
        .target(name: "CModuleRuntime", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        .systemLibrary(name: "CFPrint", pkgConfig: "libfprint-2",
                       providers: [.apt(["libfprint-2-dev", "libglib2.0-dev"])]),

        // The one system-call layer: every libc call of the Swift targets goes through it (EINTR
        // retried in one funnel, failures an Errno naming the call, descriptors owned, directory
        // names read in place, the monotonic clock, the file trust checks). Debug builds (and
        // scripts/fuzz) compile in its fault injection; release builds -- what ships -- do not.
        .target(name: "BiounlockSystem", dependencies: ["CSystem", "CIntl"],
                swiftSettings: [.define("BIOUNLOCK_FAULTS", .when(configuration: .debug))] + moduleSwiftSettings),

        // Core policy: no Foundation (it is linked into the PAM module).
        .target(name: "BiounlockCore", dependencies: ["BiounlockSystem", "CSodium"], swiftSettings: moduleSwiftSettings),
        .target(name: "BiounlockStore", dependencies: ["BiounlockCore", "BiounlockSystem", "CSQLite"], swiftSettings: moduleSwiftSettings),
        // The wire protocol between the module/CLI and the libfprint helper: pure Swift over the system layer.
        .target(name: "BiounlockFprintProtocol", dependencies: ["BiounlockSystem"], swiftSettings: moduleSwiftSettings),
        // A D-Bus client (message format, SASL EXTERNAL, one connection read in order): pure Swift
        // over the system layer, for biounlock-fprintd only -- never linked into the module.
        .target(name: "BiounlockDBus", dependencies: ["BiounlockSystem"]),
        .target(name: "BiounlockSensors", dependencies: ["BiounlockCore", "BiounlockFprintProtocol", "BiounlockFaceProtocol", "BiounlockSystem"], swiftSettings: moduleSwiftSettings),
        // The protocol between the module running as the user and biounlock-check (the helper
        // protocol's framing, its own messages): pure Swift.
        // The one assembly of the policy chain for a real transaction (module, checker, `biounlock verify`).
        .target(name: "BiounlockChain", dependencies: ["BiounlockSystem", "BiounlockCore", "BiounlockStore", "BiounlockSensors"], swiftSettings: moduleSwiftSettings),
        .target(name: "BiounlockCheckProtocol", dependencies: ["BiounlockCore", "BiounlockFprintProtocol"], swiftSettings: moduleSwiftSettings),
        // Both sides of that exchange: the checker's service (the policy chain with a relayed
        // conversation) and the module's client (start the checker, relay, map the decision).
        .target(name: "BiounlockCheck",
                dependencies: ["BiounlockSystem", "BiounlockCore", "BiounlockStore", "BiounlockSensors", "BiounlockChain", "BiounlockFprintProtocol", "BiounlockCheckProtocol"],
                swiftSettings: moduleSwiftSettings),

        // The setuid-root checker: a thin entry that hardens its process and runs BiounlockCheck.
        // Full RELRO and every symbol bound at start, like the module.
        .executableTarget(
            name: "biounlock-check",
            dependencies: ["BiounlockSystem", "BiounlockCore", "BiounlockStore", "BiounlockSensors", "BiounlockFprintProtocol",
                           "BiounlockCheckProtocol", "BiounlockCheck", "CUnixPassword"],
            // A single-threaded program: Swift 5 mode spares its top-level code actor isolation.
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: [dynamicSQLite, .unsafeFlags(["-static-stdlib", "-Xlinker", "-z", "-Xlinker", "now", "-Xlinker", "-z", "-Xlinker", "relro"])]
        ),

        // The libfprint helper: a separate process, spawned with a clean environment, so that
        // libfprint and GLib never load into sudo or login. The only target that links CFPrint.
        .executableTarget(
            name: "biounlock-fprint",
            dependencies: ["CFPrint", "BiounlockSystem", "BiounlockFprintProtocol", "CHelperRuntime"],
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: [.unsafeFlags(helperLinkerFlags)]
        ),

        // What the helpers replace of the static Swift runtime (their arguments: see argv.c).
        .target(name: "CHelperRuntime", cSettings: [.unsafeFlags(["-gdwarf-4"])]),

        // fprintd's client (sensor=fprintd): a separate process, spawned with a clean environment,
        // that speaks D-Bus itself (BiounlockDBus) and loads no library but libc and libm -- no
        // libfprint, no GLib -- so that it starts in about the time a C program does.
        .executableTarget(
            name: "biounlock-fprintd",
            dependencies: ["BiounlockSystem", "BiounlockFprintProtocol", "BiounlockDBus", "CHelperRuntime"],
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: [.unsafeFlags(helperLinkerFlags)]
        ),

        // The face (issue 34): dlib behind a C interface, the cameras (V4L2 and the simulated
        // one), the helper's protocol, and the helper -- the only program that links dlib and a
        // BLAS. The module links the protocol only (LinkageTests checks that no dlib, BLAS or
        // camera code reaches pam_biounlock.so).
        // Optimised in every configuration: dlib's network at -O0 takes seconds per descriptor.
        .target(name: "CFaceEngine", cxxSettings: [.unsafeFlags(["-O2"])], linkerSettings: [.linkedLibrary("dlib"), .linkedLibrary("blas"), .linkedLibrary("lapack")]),
        .target(name: "CCamera", cSettings: [.unsafeFlags(["-O2"])]),
        .target(name: "BiounlockFaceProtocol", dependencies: ["BiounlockFprintProtocol"], swiftSettings: moduleSwiftSettings),
        .executableTarget(
            name: "biounlock-face",
            dependencies: ["CFaceEngine", "CCamera", "BiounlockSystem", "BiounlockFprintProtocol", "BiounlockFaceProtocol"],
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: [.unsafeFlags(["-static-stdlib"])]
        ),

        // The PAM module: entry points only translate; decisions live in BiounlockCore.
        .target(
            name: "PamBiounlock",
            // CUnixPassword (libcrypt): the password kept for the boot is checked against the
            // shadow hash before it is kept and before it is handed on (issue 32, KeptPassword).
            dependencies: ["CPAM", "CModuleRuntime", "BiounlockSystem", "BiounlockCore", "BiounlockStore", "BiounlockSensors", "BiounlockChain", "BiounlockCheckProtocol", "BiounlockCheck",
                           "CUnixPassword"],
            exclude: ["exports.map", "link"],
            swiftSettings: moduleSwiftSettings,
            linkerSettings: [.linkedLibrary("pam"), .unsafeFlags(moduleLinkerFlags)]
        ),

        // What only the admin tool needs: doctor's pam.d lint, the status, log and sensors reports,
        // enable's checks, JSON. Never linked into the module (LinkageTests checks its symbols).
        .target(name: "BiounlockAdmin", dependencies: ["BiounlockCore", "BiounlockSystem"]),

        // biounlockd, the self-service D-Bus system service (docs/DESIGN.md, "biounlockd"). GIO for
        // the service and its clients (the CLI, the settings app); never linked into the module.
        .systemLibrary(name: "CGIO", pkgConfig: "gio-unix-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // What a PAM client needs in C: one re-authentication transaction whose conversation
        // answers hidden prompts with one secret (biounlockd's re-authentication worker).
        .target(name: "CPAMClient", linkerSettings: [.linkedLibrary("pam")]),
        // biounlock-check's own check of the Unix password against the shadow file (getspnam_r,
        // crypt_r of libcrypt): a password typed at a locker that runs as the user clears the
        // counts only once the checker has seen it is the password (BiounlockCheck.CheckerService).
        // Never linked into the module.
        // -gdwarf-4 as CModuleRuntime: linked into the module, whose valgrind runs (HostSafetyTests,
        // LocalizationTests) read its debug info, and Debian 12's valgrind cannot read clang's DWARF 5.
        .target(name: "CUnixPassword", cSettings: [.unsafeFlags(["-gdwarf-4"])], linkerSettings: [.linkedLibrary("crypt")]),
        // The D-Bus API as data: names, the introspection XML, BusValue, the status shape. Pure Swift.
        .target(name: "BiounlockServiceProtocol", dependencies: ["BiounlockCore"]),
        // GDBus and GVariant wrapped once, for biounlockd and its clients.
        .target(name: "BiounlockBus", dependencies: ["CGIO", "BiounlockServiceProtocol", "BiounlockSystem"]),
        // The method handlers, the authorisation and re-authentication rules and the workers:
        // no GLib, so that tests and fuzzers call them in-process.
        .target(name: "BiounlockService",
                dependencies: ["BiounlockSystem", "BiounlockCore", "BiounlockStore", "BiounlockSensors", "BiounlockFprintProtocol",
                               "BiounlockAdmin", "BiounlockServiceProtocol", "CPAMClient"]),
        // The service executable: GDBus glue over BiounlockService.
        .executableTarget(
            name: "biounlockd",
            dependencies: ["BiounlockSystem", "BiounlockCore", "BiounlockStore", "BiounlockService", "BiounlockServiceProtocol", "BiounlockBus"],
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: [dynamicSQLite, .unsafeFlags(["-static-stdlib"])]
        ),

        // The settings app (issue 31): GTK 4 + libadwaita (Debian 12: 4.8 and 1.2) through CGtk and
        // a thin layer of our own (BiounlockGtk), a client of biounlockd only (BiounlockBus): it
        // never links the store, the sensors or libfprint.
        .systemLibrary(name: "CGtk", pkgConfig: "libadwaita-1", providers: [.apt(["libgtk-4-dev", "libadwaita-1-dev"])]),
        .target(name: "BiounlockGtk", dependencies: ["CGtk"], swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(
            name: "biounlock-settings",
            // BiounlockAdmin for the audit rows in words (StatusReport.describe): no store in it.
            dependencies: ["BiounlockSystem", "BiounlockCore", "BiounlockAdmin", "BiounlockServiceProtocol", "BiounlockBus", "BiounlockGtk"],
            // GTK runs on the main thread only, and so does everything here: Swift 5 mode.
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: [.unsafeFlags(["-static-stdlib"])]
        ),

        // The admin CLI, statically linked against the Swift runtime so it runs without the toolchain.
        .executableTarget(
            name: "biounlock",
            dependencies: ["BiounlockSystem", "BiounlockCore", "BiounlockAdmin", "BiounlockStore", "BiounlockSensors", "BiounlockChain", "BiounlockFprintProtocol",
                           "BiounlockFaceProtocol", "BiounlockServiceProtocol", "BiounlockBus"],
            // A single-threaded tool: Swift 5 mode spares it Sendable ceremony for its command table.
            swiftSettings: [.swiftLanguageMode(.v5)],
            linkerSettings: [dynamicSQLite, .unsafeFlags(["-static-stdlib"])],
            // `biounlock --version`: ./VERSION, written into a generated Version.swift.
            plugins: ["EmbedVersion"]
        ),
        .plugin(name: "EmbedVersion", capability: .buildTool()),

        // Test harness: a C program that runs one real PAM transaction through libpam's
        // pam_start_confdir with scripted conversation answers (used by the module tests).
        // It defines syslog's and libsodium's Argon2id entry points itself to observe the module
        // (--syslog, --count-argon2), so they must be in its dynamic symbol table.
        .executableTarget(
            name: "pam-harness",
            path: "Tests/Harness/pam-harness",
            linkerSettings: [.linkedLibrary("pam"), .linkedLibrary("dl"), .unsafeFlags(["-Xlinker", "--export-dynamic"])]
        ),

        // Helpers the test targets share (running a built program with a time limit, ...).
        .target(name: "TestSupport", dependencies: ["BiounlockSensors"], path: "Tests/TestSupport", swiftSettings: testSettings),

        // Built with the layer's fault injection, like the layer in debug builds.
        .testTarget(name: "BiounlockSystemTests", dependencies: ["BiounlockSystem"],
                    swiftSettings: testSettings + [.define("BIOUNLOCK_FAULTS", .when(configuration: .debug))]),
        .testTarget(name: "BiounlockCoreTests", dependencies: ["BiounlockCore", "TestSupport", "BiounlockStore"], swiftSettings: testSettings, linkerSettings: [dynamicSQLite]),
        .testTarget(name: "BiounlockAdminTests", dependencies: ["BiounlockAdmin", "BiounlockCore"], swiftSettings: testSettings),
        .testTarget(name: "BiounlockStoreTests", dependencies: ["TestSupport", "BiounlockStore"], swiftSettings: testSettings, linkerSettings: [dynamicSQLite]),
        .testTarget(name: "BiounlockFprintProtocolTests", dependencies: ["BiounlockFprintProtocol", "TestSupport"], swiftSettings: testSettings),
        .testTarget(name: "BiounlockDBusTests", dependencies: ["BiounlockDBus", "BiounlockSystem"], swiftSettings: testSettings),
        .testTarget(name: "BiounlockCheckTests",
                    dependencies: ["TestSupport", "BiounlockCore", "BiounlockStore", "BiounlockFprintProtocol", "BiounlockCheckProtocol", "BiounlockCheck"],
                    swiftSettings: testSettings, linkerSettings: [dynamicSQLite]),
        .testTarget(name: "BiounlockSensorsTests", dependencies: ["BiounlockSensors", "BiounlockFprintProtocol"], swiftSettings: testSettings),
        .testTarget(name: "PamBiounlockTests", dependencies: ["CPAM", "TestSupport", "BiounlockCore", "BiounlockAdmin", "BiounlockStore", "BiounlockSensors", "BiounlockFprintProtocol", "BiounlockFaceProtocol", "BiounlockCheckProtocol", "BiounlockCheck"], swiftSettings: testSettings, linkerSettings: [dynamicSQLite]),
        .testTarget(name: "biounlockTests", dependencies: ["TestSupport", "BiounlockCore", "BiounlockStore", "BiounlockSensors"], swiftSettings: testSettings, linkerSettings: [dynamicSQLite]),
        .testTarget(name: "BiounlockServiceTests",
                    dependencies: ["TestSupport", "BiounlockSystem", "BiounlockCore", "BiounlockStore", "BiounlockService", "BiounlockServiceProtocol", "BiounlockBus"],
                    swiftSettings: testSettings, linkerSettings: [dynamicSQLite]),
    ],
    swiftLanguageModes: [.v6]
)
