import BiounlockSystem
import CSodium

/// The kinds of passcode biounlock stores. The kind is stored next to the hash so that
/// prompts and the CLI can say "PIN" or "password"; the hash itself is Argon2id either way.
public enum PasscodeKind: String, CaseIterable, Sendable {
    case pin
    case password
    /// A path on the 3x3 grid, typed as digits (see Pattern).
    case pattern

    /// The form that is hashed and verified: the canonical path for patterns, else as typed.
    public func normalized(_ secret: Secret) -> Secret? {
        switch self {
        case .pin, .password: return secret
        case .pattern:
            if case .success(let canonical) = Pattern.canonicalSecret(secret) { return canonical }
            return nil
        }
    }

    /// The rules a candidate passcode can break.
    enum BrokenRule: Equatable {
        case pinTooShort, pinNotDigits, passwordTooShort, passwordControlCharacters, pattern(Pattern.Problem), tooLong
    }

    /// Whether a candidate passcode is acceptable for this kind (the module's check: no text made).
    public func accepts(_ secret: Secret) -> Bool { brokenRule(secret) == nil }

    /// Why a candidate passcode is not acceptable for this kind, or nil when it is (for the
    /// person typing it: translated).
    public func problem(with secret: Secret) -> String? {
        switch brokenRule(secret) {
        case nil: return nil
        case .pinTooShort?: return L("a PIN needs at least 4 digits")
        case .pinNotDigits?: return L("a PIN may contain digits only")
        case .passwordTooShort?: return L("a password needs at least 6 characters")
        case .passwordControlCharacters?: return L("a password may not contain control characters")
        case .pattern(let problem)?: return problem.description
        case .tooLong?: return L("a passcode may be at most {count} bytes", ["count": String(Secret.maximumLength)])
        }
    }

    func brokenRule(_ secret: Secret) -> BrokenRule? {
        switch self {
        case .pin:
            if secret.count < 4 { return .pinTooShort }
            if !secret.allBytes({ $0 >= 0x30 && $0 <= 0x39 }) { return .pinNotDigits }
        case .password:
            if secret.count < 6 { return .passwordTooShort }
            if !secret.allBytes({ $0 >= 0x20 && $0 != 0x7f }) { return .passwordControlCharacters }
        case .pattern:
            if case .failure(let problem) = secret.withBytes({ Pattern.canonical(Array($0)) }) { return .pattern(problem) }
        }
        if secret.count > Secret.maximumLength { return .tooLong }
        return nil
    }
}

/// Argon2id passcode hashing through libsodium's `crypto_pwhash_str` family.
public enum Passcode {
#if BIOUNLOCK_FUZZ
    // The fuzz build only (scripts/fuzz compiles the libraries with -D BIOUNLOCK_FUZZ; SwiftPM,
    // and so everything that ships, never does): libsodium's minimum cost (1 pass, 8 KiB) for new
    // hashes and the timing equaliser, and stored hashes refused above 2 passes or 64 KiB, so
    // that one Argon2id costs microseconds and a fuzzed row cannot ask for a second of work. The
    // code paths are the same; only these four numbers differ.
    public static let opsLimit: UInt64 = 1
    public static let memLimit = 8192
    public static let maximumMemLimitKiB = 64
    public static let maximumOpsLimit = 2
#else
    /// Cost of new hashes: libsodium's INTERACTIVE limits (2 passes, 64 MiB), about 0.1 s on
    /// the reference machine. The cost is encoded in each hash, so it can be raised later.
    public static let opsLimit = UInt64(crypto_pwhash_argon2id_opslimit_interactive())
    public static let memLimit = Int(crypto_pwhash_argon2id_memlimit_interactive())

    /// Stored hashes asking for more than this are refused before verifying: a corrupt or
    /// planted row must not make the module (running inside sudo) spend unbounded time or memory.
    public static let maximumMemLimitKiB = 1 << 20 // 1 GiB
    public static let maximumOpsLimit = 16
#endif

    public enum Failure: Error, Equatable {
        case sodiumInit
        case hashFailed
        case malformedHash
        case costTooHigh
    }

    static func ensureInitialised() -> Bool { sodium_init() >= 0 }

    /// Hashes `secret` into an encoded `$argon2id$...` string.
    public static func hash(_ secret: Secret, opsLimit: UInt64 = opsLimit, memLimit: Int = memLimit) throws(Failure) -> String {
        guard ensureInitialised() else { throw .sodiumInit }
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let rc: Int32 = secret.withCChars { chars, count in
            crypto_pwhash_str_alg(&out, chars, UInt64(count), opsLimit, memLimit, crypto_pwhash_alg_argon2id13())
        }
        guard rc == 0 else { throw .hashFailed }
        let bytes = out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The (memory KiB, passes) an encoded Argon2id hash asks for, or nil when it is not one.
    public static func cost(of encoded: String) -> (memoryKiB: Int, passes: Int)? {
        // $argon2id$v=19$m=65536,t=2,p=1$salt$hash -- split as bytes (the separators are ASCII;
        // libsodium reads the same bytes): the Character views cost more than the rest of a
        // passcode attempt's bookkeeping (scripts/bench).
        let parts = encoded.utf8.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].isEmpty, parts[1].elementsEqual("argon2id".utf8), parts[2].elementsEqual("v=19".utf8) else { return nil }
        var memory: Int?
        var passes: Int?
        for field in parts[3].split(separator: UInt8(ascii: ",")) {
            let kv = field.split(separator: UInt8(ascii: "="), maxSplits: 1)
            guard kv.count == 2, kv[0].count == 1, kv[1].count <= 10, let value = Int(Substring(kv[1])) else { return nil }
            switch kv[0].first {
            case UInt8(ascii: "m"): memory = value
            case UInt8(ascii: "t"): passes = value
            case UInt8(ascii: "p"): guard value == 1 else { return nil }
            default: return nil
            }
        }
        guard let memory, let passes else { return nil }
        return (memory, passes)
    }

    /// Throws when a stored hash cannot be used (not Argon2id, malformed, or costing more than the
    /// module will spend), without doing any Argon2id work; returns its cost.
    @discardableResult
    public static func checkUsable(_ encoded: String) throws(Failure) -> (memoryKiB: Int, passes: Int) {
        guard ensureInitialised() else { throw .sodiumInit }
        guard encoded.utf8.count < Int(crypto_pwhash_strbytes()), let cost = cost(of: encoded) else { throw .malformedHash }
        guard cost.memoryKiB <= maximumMemLimitKiB, cost.passes <= maximumOpsLimit, cost.passes >= 1 else { throw .costTooHigh }
        return cost
    }

    /// Whether this process's resource limits leave room to verify a hash of `cost`: its memory
    /// and a few MiB more under RLIMIT_AS and RLIMIT_DATA, and some seconds of CPU time under
    /// RLIMIT_CPU. Checked before an attempt is counted: a caller that lowered its limits (`ulimit
    /// -d`, then su; or a locker that starts biounlock-check with a hard limit it cannot raise)
    /// would otherwise have a right passcode counted as a wrong one when Argon2id cannot allocate,
    /// or the process killed by SIGXCPU between the count and the check (docs/SECURITY.md,
    /// finding 28.4). Without the room the passcode is not checked and not counted: the typed
    /// text goes on to the password.
    public static func limitsAllow(_ cost: (memoryKiB: Int, passes: Int)) -> Bool {
        let bytes: UInt64 = UInt64(max(0, cost.memoryKiB)) &* 1024 &+ (8 << 20)
        let seconds: UInt64 = 5 &+ UInt64(max(0, cost.passes))
        return ResourceLimit.allows(bytes: bytes, cpuSeconds: seconds)
    }

    /// Checks `secret` against an encoded hash in constant time (libsodium's verify).
    /// Returns false for a wrong secret; throws when the stored hash is unusable.
    public static func verify(_ secret: Secret, against encoded: String) throws(Failure) -> Bool {
        try checkUsable(encoded)
        var hashChars = Array(encoded.utf8CString)
        let rc: Int32 = secret.withCChars { chars, count in
            crypto_pwhash_str_verify(&hashChars, chars, UInt64(count))
        }
        return rc == 0
    }

    /// Spends the same Argon2id work as a real verification, for users who have no hash,
    /// so that "no such passcode" and "wrong passcode" cannot be told apart by time.
    public static func burnEquivalentWork() {
        let dummy = Secret(bytes: Array("biounlock-timing-equaliser".utf8))
        if let dummy { _ = try? hash(dummy) }
    }
}
