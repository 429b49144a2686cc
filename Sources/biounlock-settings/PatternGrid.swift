import BiounlockCore
import BiounlockAdmin
import BiounlockGtk
import BiounlockSystem

/// The 3x3 pattern grid of the passcode dialog (seed 004): a GtkDrawingArea drawn with cairo,
/// dragged with the pointer or a finger (GtkGestureDrag), or typed with the keys 1-9 (Backspace
/// starts again). The path's rules live in PatternStroke (BiounlockAdmin, unit-tested); this is
/// only the view. The pattern is drawn twice: the first time is kept (as a Secret), the second
/// must be the same; `onChange` says where it stands, in words, for the label under the grid.
/// The digits are never in a String: the path's points are zeroed when it starts again
/// (PatternStroke.clear), the drawings are Secrets (zeroed when freed), and `forget` drops them
/// all when the dialog answers, as the PIN's entry is cleared.
final class PatternGrid {
    let area = DrawingArea(width: 240, height: 240)
    private(set) var stroke = PatternStroke()
    private var pointer: (Double, Double)?
    private var geometry = PatternStroke.Geometry(width: 240, height: 240)
    /// The first drawing's digits, once it was a pattern; nil before.
    private var first: Secret?
    /// The confirmed pattern's digits, once drawn twice the same.
    private(set) var confirmed: Secret?
    var onChange: (String) -> Void = { _ in }
    /// When the shake after a mismatch began (monotonic ms), while it runs.
    private var shakeStart: Int64?
    private var shaking: RepeatingTimer?

    init() {
        area.accessibleName(L("Pattern grid"))
        area.accessibleDescription(L("Drag over the points, or type their numbers 1 to 9 (1 is top left), then Enter. Backspace starts again."))
        area.onDraw { [weak self] cr, w, h in self?.draw(cr, w, h) }
        area.onDrag(begin: { [weak self] x, y in
            guard let self else { return }
            self.area.grabFocus()
            self.stroke.clear()
            self.confirmed = nil
            self.move(x, y)
        }, update: { [weak self] x, y in self?.move(x, y) },
        end: { [weak self] in
            self?.pointer = nil
            self?.finish()
        })
        area.onKey { [weak self] unicode in
            guard let self else { return false }
            switch unicode {
            case 8: self.stroke.clear(); self.confirmed = nil; self.area.redraw(); return true   // Backspace
            case 13: self.finish(); return true                                               // Enter
            default:
                guard let scalar = Unicode.Scalar(unicode), self.stroke.type(Character(scalar)) else { return false }
                self.confirmed = nil
                self.area.redraw()
                return true
            }
        }
    }

    private func move(_ x: Double, _ y: Double) {
        pointer = (x, y)
        if let p = geometry.point(atX: x, y: y) { stroke.reach(p) }
        area.redraw()
    }

    /// Drops the drawings and zeroes the path (the dialog answered).
    func forget() {
        stroke.clear()
        first = nil
        confirmed = nil
        pointer = nil
    }

    /// The end of one drawing: the first one is kept, the second compared with it.
    private func finish() {
        guard let digits = stroke.secret() else { return }
        if let problem = stroke.problem {
            onChange(L("Not a pattern: {problem}. Draw again.", ["problem": problem.description]))
        } else if let first {
            if first.constantTimeEquals(digits) {
                confirmed = digits
                onChange(L("Pattern confirmed: {count} points.", ["count": String(stroke.points.count)]))
                area.redraw()
                return
            }
            self.first = nil
            onChange(L("The two patterns are not the same. Draw a new pattern."))
            shake()
        } else {
            first = digits
            onChange(L("Draw the same pattern again to confirm."))
        }
        stroke.clear()
        area.redraw()
    }

    /// The grid shakes sideways for a moment (drawn moved; the widget stays where it is, so the
    /// points stay under the pointer for the next drawing).
    private func shake() {
        shakeStart = monotonicMilliseconds()
        shaking = RepeatingTimer(milliseconds: 16) { [weak self] in
            guard let self, let start = self.shakeStart else { return false }
            if monotonicMilliseconds() - start >= PatternStroke.shakeMilliseconds { self.shakeStart = nil }
            self.area.redraw()
            return self.shakeStart != nil
        }
    }

    private func draw(_ cr: Cairo, _ w: Double, _ h: Double) {
        geometry = PatternStroke.Geometry(width: w, height: h)
        if let start = shakeStart {
            cr.translate(PatternStroke.shakeOffset(elapsedMilliseconds: monotonicMilliseconds() - start, amplitude: w * 0.04), 0)
        }
        // Blue as GNOME's accent; green once confirmed; grey dots not yet used.
        let accent: (Double, Double, Double) = confirmed == nil ? (0.21, 0.52, 0.89) : (0.15, 0.64, 0.41)
        if let start = stroke.points.first, let c = geometry.centre(of: start) {
            cr.colour(accent.0, accent.1, accent.2, 0.8)
            cr.lineWidth(geometry.dotRadius * 0.8)
            cr.move(c.x, c.y)
            for p in stroke.points.dropFirst() { if let c = geometry.centre(of: p) { cr.line(c.x, c.y) } }
            if let pointer { cr.line(pointer.0, pointer.1) }   // the line follows the pointer
            cr.stroke()
        }
        for p in 1...9 {
            guard let c = geometry.centre(of: p) else { continue }
            if stroke.points.contains(p) {
                cr.colour(accent.0, accent.1, accent.2)
                cr.circle(c.x, c.y, geometry.dotRadius * 1.4)
            } else {
                cr.colour(0.55, 0.55, 0.55)
                cr.circle(c.x, c.y, geometry.dotRadius)
            }
            cr.fill()
        }
    }
}
