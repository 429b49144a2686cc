/// What dpkg says about the SQLite inside pam_biounlock.so: the sqlite3 the installed biounlock
/// package was built with (its Built-Using field, written by scripts/package) and the
/// libsqlite3-0 installed now. A Debian security update of SQLite keeps the upstream version
/// (3.40.1-2+deb12u3 is SQLite 3.40.1 still), so only the packages' versions tell that the
/// module's copy is older than the system's. `biounlock doctor` asks dpkg-query (`queries`) and
/// compares them.
public enum InstalledPackages {
    public struct SQLite: Equatable, Sendable {
        /// The sqlite3 source version biounlock's package was built against.
        public let built: String
        /// The installed libsqlite3-0's version (of `architecture` when several are installed).
        public let installed: String
    }

    /// dpkg's name of the architecture this program was built for (nil: any).
    public static var thisArchitecture: String? {
        #if arch(x86_64)
        return "amd64"
        #elseif arch(arm64)
        return "arm64"
        #elseif arch(i386)
        return "i386"
        #else
        return nil
        #endif
    }

    /// The dpkg-query arguments whose outputs `sqlite(biounlock:libsqlite:)` reads.
    public static let queries = (
        biounlock: ["-W", "-f=${db:Status-Abbrev}|${Built-Using}\n", "biounlock"],
        libsqlite: ["-W", "-f=${db:Status-Abbrev}|${Architecture}|${Version}\n", "libsqlite3-0"]
    )

    /// Both versions from dpkg-query's answers (`queries`), or nil when biounlock is not
    /// installed as a package that names its sqlite3 (a source install: scripts/install, or a
    /// package from before SQLite was linked in) or no libsqlite3-0 is installed. Only packages
    /// dpkg has installed ("ii") count.
    public static func sqlite(biounlock: String, libsqlite: String, architecture: String? = thisArchitecture) -> SQLite? {
        func installedFields(_ line: Substring) -> [Substring]? {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false)
            guard fields.count >= 2, fields[0].hasPrefix("ii") else { return nil }
            return Array(fields.dropFirst())
        }
        var built: String?
        for fields in biounlock.split(separator: "\n").compactMap(installedFields) where built == nil {
            built = sqlite3Version(inBuiltUsing: fields[0])
        }
        guard let built else { return nil }
        let installed = libsqlite.split(separator: "\n").compactMap(installedFields).filter { $0.count == 2 }
        let chosen = installed.first { fields in architecture.map { fields[0] == $0 } ?? false } ?? (installed.count == 1 ? installed.first : nil)
        return chosen.map { SQLite(built: built, installed: String($0[1])) }
    }

    /// "asm (= 9.0-1), sqlite3 (= 3.40.1-2+deb12u2)" -> "3.40.1-2+deb12u2".
    static func sqlite3Version(inBuiltUsing field: Substring) -> String? {
        for entry in field.split(separator: ",") {
            let words = entry.split(separator: " ")
            guard words.count == 3, words[0] == "sqlite3", words[1] == "(=", words[2].hasSuffix(")") else { continue }
            return String(words[2].dropLast())
        }
        return nil
    }
}
