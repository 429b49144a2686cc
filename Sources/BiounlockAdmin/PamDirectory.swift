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
}
