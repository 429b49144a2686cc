import BiounlockCore

/// A pattern being drawn on the settings app's 3x3 grid (issue 31, seed 004): where the points
/// sit in the drawing area, which point the pointer is over, and the path so far with the
/// gesture lock's rules (Pattern): a point already used is not taken again, and a straight line
/// over an unused point picks it up. Kept out of the GTK view so that it is unit-tested
/// (PatternStrokeTests); the view only feeds it pointer positions and keys 1-9.
public struct PatternStroke: Equatable {
    /// The points reached, in order, picked-up points included (always canonical). The path is
    /// the passcode: its buffer is reserved for all nine points at once, so that appending never
    /// moves it (leaving a copy behind in freed memory), and `clear` zeroes it.
    public private(set) var points: [Int] = []

    public init() { points.reserveCapacity(9) }

    /// The area the grid is drawn in: a centred square of the smaller side.
    public struct Geometry: Equatable {
        public let width: Double
        public let height: Double
        public init(width: Double, height: Double) { self.width = max(0, width); self.height = max(0, height) }
        var side: Double { min(width, height) }
        var cell: Double { side / 3 }
        /// The radius around a point's centre that picks it up under the pointer.
        public var hitRadius: Double { cell * 0.35 }
        /// The radius a point is drawn with.
        public var dotRadius: Double { cell * 0.12 }

        /// The centre of point 1-9 (keypad order), or nil for anything else.
        public func centre(of point: Int) -> (x: Double, y: Double)? {
            guard (1...9).contains(point) else { return nil }
            let row = Double((point - 1) / 3), column = Double((point - 1) % 3)
            return ((width - side) / 2 + (column + 0.5) * cell, (height - side) / 2 + (row + 0.5) * cell)
        }

        /// The point whose circle (hitRadius) holds (x, y), if any.
        public func point(atX x: Double, y: Double) -> Int? {
            guard x.isFinite, y.isFinite, cell > 0 else { return nil }
            for p in 1...9 {
                guard let c = centre(of: p) else { continue }
                let dx = x - c.x, dy = y - c.y
                if dx * dx + dy * dy <= hitRadius * hitRadius { return p }
            }
            return nil
        }
    }

    /// The pointer (or the key `point`) reached `point`: taken unless out of range or already
    /// used; a line from the last point over an unused point takes that one first. True when
    /// the path changed.
    @discardableResult
    public mutating func reach(_ point: Int) -> Bool {
        guard (1...9).contains(point), !points.contains(point) else { return false }
        if let last = points.last, let middle = Pattern.midpoint(last, point), !points.contains(middle) {
            points.append(middle)
        }
        points.append(point)
        return true
    }

    /// The key typed on the grid: '1'...'9' reach that point. True when the path changed.
    @discardableResult
    public mutating func type(_ character: Character) -> Bool {
        guard let digit = character.wholeNumberValue, character.isASCII else { return false }
        return reach(digit)
    }

    /// Starts again: the points are zeroed, then removed (the buffer is kept for the next path).
    public mutating func clear() {
        points.withUnsafeMutableBytes { wipe($0) }
        points.removeAll(keepingCapacity: true)
    }

    /// The digits the pattern is typed as (what the service and the module take), as a Secret:
    /// written into a byte buffer that is zeroed at once, never into a String (whose storage
    /// Swift may copy and never wipes). Nil only when there is no point.
    public func secret() -> Secret? {
        guard !points.isEmpty else { return nil }
        var bytes = [UInt8](repeating: 0, count: points.count)
        defer { wipe(&bytes) }
        for (i, p) in points.enumerated() { bytes[i] = UInt8(truncatingIfNeeded: 0x30 &+ p) }
        return Secret(bytes: bytes)
    }

    /// Why the path is not a pattern yet (too short), or nil when it is one. The path is already
    /// canonical (no point twice, picked-up points in it): only its length can be wrong.
    public var problem: Pattern.Problem? {
        points.count < Pattern.minimumPoints ? .tooShort(points.count) : nil
    }

    /// How long the grid shakes after a mismatch (seed 004: a wrong pattern shakes).
    public static let shakeMilliseconds: Int64 = 480

    /// The grid's sideways offset `elapsed` ms into the shake: three swings of `amplitude`,
    /// dying away, as a triangle wave (no libm); 0 before the start and from the end on.
    public static func shakeOffset(elapsedMilliseconds elapsed: Int64, amplitude: Double) -> Double {
        guard elapsed > 0, elapsed < shakeMilliseconds, amplitude.isFinite else { return 0 }
        let x = Double(elapsed) / Double(shakeMilliseconds)       // 0..<1
        let phase = (x * 3).truncatingRemainder(dividingBy: 1)    // three swings
        // 0 -> 1 -> -1 -> 0 over one swing.
        let wave = phase < 0.25 ? phase * 4 : phase < 0.75 ? 2 - phase * 4 : phase * 4 - 4
        return amplitude * (1 - x) * wave
    }
}
