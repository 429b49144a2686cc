/// Pattern ("gesture") passcodes on a 3x3 grid numbered like a phone keypad:
///
///     1 2 3
///     4 5 6
///     7 8 9
///
/// A pattern is typed as the digits of the points it passes through. Rules (the gesture lock
/// of docs/DESIGN.md): at least 4 points, no point twice, and a straight line that jumps over a point not yet
/// used picks that point up (1->3 passes 2, 1->9 passes 5, 2->8 passes 5, 3->7 passes 5). The
/// canonical path, with picked-up points written out, is what gets hashed: `1369` and `12369`
/// are the same pattern.
public enum Pattern {
    public static let minimumPoints = 4

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case notAPoint
        case pointUsedTwice(Int)
        case tooShort(Int)

        public var description: String {
            switch self {
            case .notAPoint: return L("a pattern is typed with the digits 1-9 only")
            case .pointUsedTwice(let p): return L("point {point} is used twice", ["point": String(p)])
            case .tooShort(let n):
                return L("a pattern needs at least {minimum} points (this one has {count})", ["minimum": String(minimumPoints), "count": String(n)])
            }
        }
    }

    /// The canonical path of the typed digits, or the rule it breaks.
    public static func canonical(_ typed: [UInt8]) -> Result<[Int], Problem> {
        var path: [Int] = []
        var used = [Bool](repeating: false, count: 10)
        for byte in typed {
            guard byte >= UInt8(ascii: "1"), byte <= UInt8(ascii: "9") else { return .failure(.notAPoint) }
            let point = Int(byte - UInt8(ascii: "0"))
            if used[point] { return .failure(.pointUsedTwice(point)) }
            if let last = path.last, let middle = midpoint(last, point), !used[middle] {
                used[middle] = true
                path.append(middle)
            }
            used[point] = true
            path.append(point)
        }
        guard path.count >= minimumPoints else { return .failure(.tooShort(path.count)) }
        return .success(path)
    }

    /// The point a straight line from `a` to `b` jumps over, if any.
    public static func midpoint(_ a: Int, _ b: Int) -> Int? {
        let (ra, ca) = ((a - 1) / 3, (a - 1) % 3)
        let (rb, cb) = ((b - 1) / 3, (b - 1) % 3)
        guard (ra + rb) % 2 == 0, (ca + cb) % 2 == 0 else { return nil }
        let middle = (ra + rb) / 2 * 3 + (ca + cb) / 2 + 1
        return middle == a || middle == b ? nil : middle
    }

    /// The canonical form of a typed secret, as a new secret (for hashing and verifying).
    public static func canonicalSecret(_ typed: Secret) -> Result<Secret, Problem> {
        let path = typed.withBytes { canonical(Array($0)) }
        switch path {
        case .failure(let problem): return .failure(problem)
        case .success(let points):
            var bytes = points.map { UInt8(ascii: "0") + UInt8($0) }
            defer { wipe(&bytes) }
            guard let secret = Secret(bytes: bytes) else { return .failure(.tooShort(0)) }
            return .success(secret)
        }
    }
}
