import BiounlockSystem

/// The service files of a pam.d directory, as `biounlock doctor` and `biounlock sensors` list
/// them: BiounlockSystem's Directory (entry names read in place, as the module reads its
/// directories), names starting with '.' skipped, at most `maximumFiles`, in order.
public enum PamDirectory {
    public static let maximumFiles = 1000
    /// Larger service files are not read.
    public static let maximumFileSize = 64 * 1024

    public static func serviceNames(_ directory: String) -> [String] {
        Directory.names(directory, limit: maximumFiles).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Who else but root could change how services authenticate: the directory, or one of its
    /// service files (`names`), not owned by root or writable by group or others -- libpam reads
    /// them all the same. Symbolic links are followed, as libpam follows them (a link in pam.d
    /// is unusual, not unsafe: what counts is who can write what it points to). `file` is nil
    /// for the directory itself. Files that vanished meanwhile are skipped.
    public static func trustProblems(_ directory: String, names: [String]) -> [(file: String?, problem: FileTrustProblem)] {
        var problems: [(file: String?, problem: FileTrustProblem)] = []
        if let st = try? FileStatus.of(directory, followingSymbolicLinks: true), let problem = TrustedFiles.checkOwnership(directory, st) {
            problems.append((nil, problem))
        }
        for name in names {
            let path = directory + "/" + name
            guard let st = try? FileStatus.of(path, followingSymbolicLinks: true),
                  let problem = TrustedFiles.checkOwnership(path, st) else { continue }
            problems.append((name, problem))
        }
        return problems
    }
}
