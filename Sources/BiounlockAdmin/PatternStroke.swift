import BiounlockCore

/// A pattern being drawn on the settings app's 3x3 grid (issue 31, seed 004): where the points
/// sit in the drawing area, which point the pointer is over, and the path so far with the
/// gesture lock's rules (Pattern): a point already used is not taken again, and a straight line
/// over an unused point picks it up. Kept out of the GTK view so that it is unit-tested
/// (PatternStrokeTests); the view only feeds it pointer positions and keys 1-9.
public struct PatternStroke: Equatable {
    /// The points reached, in order, picked-up points included (always canonical).
    public private(set) var points: [Int] = []

    public init() {}

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

    public mutating func clear() { points.removeAll() }

    /// The digits the pattern is typed as (what the service and the module take).
    public var digits: String { points.map(String.init).joined() }

    /// Why the path is not a pattern yet (too short), or nil when it is one.
    public var problem: Pattern.Problem? {
        if case .failure(let p) = Pattern.canonical(Array(digits.utf8)) { return p }
        return nil
    }
}
