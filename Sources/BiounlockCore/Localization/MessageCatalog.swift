import BiounlockSystem

/// Checks compiled gettext catalogs (`.mo` files) before glibc may read one.
///
/// Why: glibc's gettext trusts the file it loads. Checked on Debian 12 (glibc 2.36): a
/// biounlock.mo truncated inside its tables makes dgettext crash the process (SIGSEGV), one
/// truncated among its strings returns empty translations, a hash table without an empty slot
/// (or of a size that is not prime) makes a lookup loop forever, and a `Plural-Forms` expression
/// that divides by zero raises SIGFPE. Inside sudo or login any of them is a crash or a hang of
/// the host. So the module asks glibc for a translation only once every catalog glibc could load
/// for the domain has passed these checks; otherwise it speaks English (docs/DESIGN.md, "Messages").
///
/// The checks follow glibc's reader (intl/loadmsgcat.c, dcigettext.c, plural-eval.c): every
/// offset inside the file, every string NUL-terminated inside it, a usable hash table, a header
/// that says UTF-8, and a plural rule that cannot divide by zero. They are stricter than glibc
/// (a catalog glibc would read may be refused), never looser.
public enum MessageCatalog {
    /// Larger catalogs are refused (biounlock's are about 20 KiB).
    public static let maximumSize = 1 << 20
    static let maximumStrings: UInt64 = 100_000
    static let maximumPluralExpression = 512

    /// Why `bytes` must not be handed to glibc's gettext, or nil when it may.
    public static func problem(_ bytes: [UInt8]) -> String? {
        problem(in: bytes)
    }

    static func problem(in file: [UInt8]) -> String? {
        let size = UInt64(file.count)
        guard file.count <= maximumSize else { return "larger than \(maximumSize) bytes" }
        guard size >= 28 else { return "shorter than a catalog header" }

        // The magic number says the byte order; glibc reads both.
        let swapped: Bool
        switch word(file, 0, swapped: false) {
        case 0x9504_12de?: swapped = false
        case 0xde12_0495?: swapped = true
        default: return "not a gettext catalog (bad magic number)"
        }
        func u32(_ offset: UInt64) -> UInt64? { word(file, offset, swapped: swapped).map(UInt64.init) }

        guard let revision = u32(4), let count = u32(8), let originals = u32(12), let translations = u32(16),
              let hashSize = u32(20), let hashOffset = u32(24) else { return "truncated header" }
        guard revision >> 16 == 0 else { return "unsupported revision \(revision >> 16)" }
        if revision & 0xffff != 0 {
            // Minor revision 1 adds system-dependent strings (<inttypes.h> macros), which msgfmt
            // writes only for C formats: biounlock has none, so a catalog with any is refused.
            guard let segments = u32(28), let sysdepStrings = u32(36) else { return "truncated header" }
            guard segments == 0 && sysdepStrings == 0 else { return "system-dependent strings" }
        }
        guard count >= 1, count <= maximumStrings else { return "\(count) strings" }
        guard originals % 4 == 0, translations % 4 == 0, hashOffset % 4 == 0 else { return "misaligned table" }
        guard originals + 8 * count <= size, translations + 8 * count <= size else { return "string table outside the file" }

        // Every string: inside the file and NUL-terminated there.
        func string(_ table: UInt64, _ index: UInt64) -> (start: Int, length: Int)? {
            guard let length = u32(table + 8 * index), let offset = u32(table + 8 * index + 4),
                  offset + length < size, file[Int(offset + length)] == 0 else { return nil }
            return (Int(offset), Int(length))
        }
        var header: (start: Int, length: Int)?
        for index in 0..<count {
            guard let original = string(originals, index), let translation = string(translations, index) else {
                return "string \(index) outside the file or not terminated"
            }
            if original.length == 0 { header = translation }
        }

        // The hash table: glibc probes it with double hashing until it meets an empty slot. That
        // ends only if a slot is empty and the size is prime (every step size then reaches every
        // slot); below 3 slots glibc does not use it.
        if hashSize != 0 {
            guard hashSize > 2, hashSize <= 4 * maximumStrings, isPrime(hashSize) else { return "hash table of size \(hashSize)" }
            guard hashOffset + 4 * hashSize <= size else { return "hash table outside the file" }
            var empty = false
            for slot in 0..<hashSize {
                guard let entry = u32(hashOffset + 4 * slot) else { return "hash table outside the file" }
                if entry == 0 { empty = true } else if entry > count { return "hash entry \(entry) past the \(count) strings" }
            }
            if !empty { return "hash table without an empty slot" }
        }

        // The header entry (the translation of ""): UTF-8, and a plural rule that cannot trap.
        guard let header else { return "no header entry" }
        let text = String(decoding: file[header.start..<(header.start + header.length)], as: UTF8.self)
        return headerProblem(text)
    }

    /// Checks the catalog header's `Content-Type` charset and `Plural-Forms` rule.
    static func headerProblem(_ header: String) -> String? {
        // glibc reads the charset up to whitespace: "UTF-8;" would be a charset of its own.
        guard let charset = field(header, after: "charset=", stoppingAt: " \t\n"), charset.lowercased() == "utf-8" else {
            return "not a UTF-8 catalog"
        }
        guard let rule = field(header, after: "plural=", stoppingAt: ";\n") else { return nil }
        return pluralRuleProblem(rule)
    }

    /// glibc evaluates the plural rule with C's `/` and `%`, which raise SIGFPE on zero: each
    /// must divide by a non-zero number written out (`n%10`, `n%100`), which is all that real
    /// plural rules do.
    static func pluralRuleProblem(_ rule: String) -> String? {
        let bytes = Array(rule.utf8)
        guard bytes.count <= maximumPluralExpression else { return "plural rule longer than \(maximumPluralExpression) bytes" }
        var i = 0
        while i < bytes.count {
            defer { i += 1 }
            guard bytes[i] == UInt8(ascii: "/") || bytes[i] == UInt8(ascii: "%") else { continue }
            var j = i + 1
            while j < bytes.count, bytes[j] == UInt8(ascii: " ") || bytes[j] == UInt8(ascii: "\t") { j += 1 }
            var digits = 0, nonZero = false
            while j < bytes.count, bytes[j] >= UInt8(ascii: "0"), bytes[j] <= UInt8(ascii: "9") {
                nonZero = nonZero || bytes[j] != UInt8(ascii: "0")
                digits += 1; j += 1
            }
            guard digits > 0, nonZero else { return "plural rule divides by something other than a non-zero number" }
        }
        return nil
    }

    /// The text after the first `key`, up to one of `stops` or the end.
    static func field(_ text: String, after key: String, stoppingAt stops: String) -> String? {
        guard let range = Substring(text).firstRange(ofText: key) else { return nil }
        let rest = text[range.upperBound...]
        let end = rest.firstIndex { stops.contains($0) } ?? rest.endIndex
        let value = rest[..<end]
        return value.isEmpty ? nil : String(value)
    }

    static func word(_ file: [UInt8], _ offset: UInt64, swapped: Bool) -> UInt32? {
        guard offset <= UInt64(file.count), UInt64(file.count) - offset >= 4 else { return nil }
        let o = Int(offset)
        let little = UInt32(file[o]) | UInt32(file[o + 1]) << 8 | UInt32(file[o + 2]) << 16 | UInt32(file[o + 3]) << 24
        return swapped ? little.byteSwapped : little
    }

    static func isPrime(_ n: UInt64) -> Bool {
        guard n >= 2 else { return false }
        var d: UInt64 = 2
        while d * d <= n {
            if n % d == 0 { return false }
            d += 1
        }
        return true
    }
}

/// The catalogs of one locale directory (`/usr/share/locale`, or `locale_dir=`): every
/// `NAME/LC_MESSAGES/biounlock.mo` in it, which is every file glibc could load for the domain
/// whatever LANGUAGE and LC_MESSAGES say (glibc refuses names with a '/' in setuid programs,
/// and biounlock speaks English when either holds one).
public enum CatalogDirectory {
    /// Directories with more entries are not searched (and biounlock speaks English).
    public static let maximumEntries = 4096

    /// Why glibc must not read the catalogs under `directory`, or nil when every one passed.
    /// A missing directory or no catalog at all is fine: gettext then returns the English text.
    public static func problem(_ directory: String, domain: String) -> String? {
        var entries = 0
        var found: String?
        Directory.forEachEntry(in: directory) { name in
            entries += 1
            guard entries <= maximumEntries + 2 else {
                found = "\(directory) has more than \(maximumEntries) entries"
                return false
            }
            if name == "." || name == ".." { return true }
            let path = directory + "/" + name + "/LC_MESSAGES/" + domain + ".mo"
            if let problem = fileProblem(path) {
                found = "\(path): \(problem)"
                return false
            }
            return true
        }
        return found
    }

    /// Why the catalog at `path` must not be read, or nil (also when there is none).
    static func fileProblem(_ path: String) -> String? {
        // O_NONBLOCK: a FIFO put there must not block us (glibc's own open would: refused below).
        // Nothing there (or nothing glibc could open either) is no problem.
        guard let file = try? FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .noControllingTerminal]) else {
            return nil
        }
        guard let st = try? file.descriptor.status() else { return "cannot be examined" }
        guard st.kind == .regular else { return "not a regular file" }
        // Prompts inside sudo come from it: only root may have written it (like the config file).
        guard TrustedFiles.checkOwnership(path, st) == nil else {
            return "not root-owned, or writable by group or others"
        }
        guard st.size >= 0, st.size <= MessageCatalog.maximumSize else { return "larger than \(MessageCatalog.maximumSize) bytes" }
        guard let bytes = try? file.descriptor.readAll(upTo: MessageCatalog.maximumSize) else { return "cannot be read" }
        guard bytes.count >= st.size else { return "shorter than its size" }
        return MessageCatalog.problem(bytes)
    }
}
