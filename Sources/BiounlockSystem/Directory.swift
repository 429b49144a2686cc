import Glibc

/// Directory listing (opendir, readdir, closedir).
///
/// Each entry's name is read where readdir left it, up to its NUL (strnlen inside `d_name`), and
/// only those bytes are copied -- into a zeroed buffer longer than the name -- before they become
/// a String. Copying the whole 256-byte `d_name` out, or handing String the name in place,
/// read the uninitialised bytes after the name (String checks ASCII a word at a time): valgrind
/// memcheck reported it on the module's path (the lid probe, the catalog check; HostSafetyTests).
public enum Directory {
    /// Calls `body` with the name of each entry of `path` ("." and ".." included), in readdir's
    /// order, until it returns false or the entries run out. False when the directory cannot be
    /// opened; a read error ends the listing like its end.
    @discardableResult
    public static func forEachEntry(in path: String, _ body: (String) -> Bool) -> Bool {
        guard let dir = opendirRetrying(path) else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            if !body(name(of: entry)) { break }
        }
        return true
    }

    /// Names in `path` (not "." or ".."), at most `limit`; empty when it cannot be read.
    public static func names(_ path: String, limit: Int = 1024) -> [String] {
        var out: [String] = []
        forEachEntry(in: path) { name in
            guard out.count < limit else { return false }
            if name != "." && name != ".." { out.append(name) }
            return out.count < limit
        }
        return out
    }

    /// Whether `path` (followed if a link) is a regular file its owner may execute.
    public static func isExecutable(_ path: String) -> Bool {
        guard let st = try? FileStatus.of(path, followingSymbolicLinks: true), st.kind == .regular else { return false }
        return st.isExecutableByOwner
    }

    /// opendir(3) through the funnel (EINTR retried; faults in test builds).
    static func opendirRetrying(_ path: String) -> OpaquePointer? {
        var dir: OpaquePointer?
        let opened = system(.opendir, failed: { (ok: Bool) in !ok }) { _ -> Bool in
            dir = opendir(path)
            return dir != nil
        }
        guard case .success = opened else { return nil }
        return dir
    }

    /// The entry's name, read in place (see above).
    static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        let capacity = MemoryLayout.size(ofValue: entry.pointee.d_name)
        return withUnsafeMutablePointer(to: &entry.pointee.d_name) { field -> String in
            field.withMemoryRebound(to: CChar.self, capacity: capacity) { name -> String in
                let length = strnlen(name, capacity)
                var bytes = [UInt8](repeating: 0, count: length + 8)
                for i in 0..<length { bytes[i] = UInt8(bitPattern: name[i]) }
                return String(decoding: bytes[0..<length], as: UTF8.self)
            }
        }
    }
}
