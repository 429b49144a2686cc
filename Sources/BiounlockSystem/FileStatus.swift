import Glibc

/// What stat(2), lstat(2) and fstat(2) say about a file: the parts biounlock decides on.
public struct FileStatus: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case regular, directory, symbolicLink, socket, fifo, characterDevice, blockDevice, unknown
    }

    public let kind: Kind
    /// st_mode: the file type and permission bits.
    public let mode: UInt32
    /// st_uid.
    public let owner: UInt32
    /// st_size.
    public let size: Int64
    /// st_dev and st_ino: which file this is.
    public let device: UInt64
    public let inode: UInt64

    init(_ st: stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .unknown
        }
        mode = UInt32(st.st_mode)
        owner = UInt32(st.st_uid)
        size = Int64(st.st_size)
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    /// The permission bits (mode & 0o7777).
    public var permissions: UInt32 { mode & 0o7777 }
    public var isWritableByGroupOrOthers: Bool { mode & UInt32(S_IWGRP | S_IWOTH) != 0 }
    public var isExecutableByOwner: Bool { mode & UInt32(S_IXUSR) != 0 }
    public var isExecutableByOthers: Bool { mode & UInt32(S_IXOTH) != 0 }
    public var isSetUserID: Bool { mode & UInt32(S_ISUID) != 0 }

    /// stat(2) (`followingSymbolicLinks`) or lstat(2) of `path`.
    public static func of(_ path: String, followingSymbolicLinks: Bool) throws(Errno) -> FileStatus {
        var st = stat()
        if followingSymbolicLinks {
            _ = try system(.stat) { fstatat(AT_FDCWD, path, &st, 0) }.get()   // stat(2): Glibc.stat names the struct
        } else {
            _ = try system(.lstat) { lstat(path, &st) }.get()
        }
        return FileStatus(st)
    }
}

/// Operations on paths.
public enum FileSystem {
    /// mkdir(2).
    public static func makeDirectory(_ path: String, permissions: UInt32) throws(Errno) {
        _ = try system(.mkdir) { mkdir(path, mode_t(permissions)) }.get()
    }

    /// chmod(2).
    public static func changePermissions(_ path: String, _ permissions: UInt32) throws(Errno) {
        _ = try system(.chmod) { chmod(path, mode_t(permissions)) }.get()
    }

    /// rename(2).
    public static func rename(_ from: String, to: String) throws(Errno) {
        _ = try system(.rename) { Glibc.rename(from, to) }.get()
    }

    /// unlink(2).
    public static func unlink(_ path: String) throws(Errno) {
        _ = try system(.unlink) { Glibc.unlink(path) }.get()
    }

    /// access(path, F_OK): whether anything is there (a dangling link is not).
    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The bytes of a regular file (a symbolic link followed), at most `limit`: nil when it is
    /// missing, not a regular file, larger, or unreadable. Opened O_NONBLOCK (a FIFO cannot
    /// block us) and checked on the open descriptor. No trust checks: for files that decide
    /// nothing (doctor's view of pam.d, /proc).
    public static func readRegularFile(_ path: String, limit: Int) -> [UInt8]? {
        guard let file = try? FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .noControllingTerminal]),
              let st = try? file.descriptor.status(), st.kind == .regular, st.size <= limit,
              let bytes = try? file.descriptor.readAll(upTo: limit), bytes.count <= limit else { return nil }
        return bytes
    }

    /// chdir(2).
    public static func changeDirectory(_ path: String) throws(Errno) {
        _ = try system(.chdir) { chdir(path) }.get()
    }

    /// umask(2): sets the file mode creation mask, returns the old one.
    @discardableResult
    public static func setUmask(_ mask: UInt32) -> UInt32 {
        UInt32(umask(mode_t(mask)))
    }
}
