import BiounlockCore
import BiounlockGtk

/// The enrolment dialog's fingerprint (issue 31: "a fingerprint image filling in with each
/// touch"): ridges drawn with cairo around a core, open at the bottom as a fingertip's are,
/// filled in from the core outwards as the touches are taken; grey where no touch has been yet.
/// Assistive technologies read its name and, as its description, the same words as the label
/// under it ("Touch 2 of 5 taken.").
final class FingerprintImage {
    let area = DrawingArea(width: 120, height: 132, focusable: false)
    /// How much of the print is taken, 0...1.
    private(set) var fraction: Double = 0
    static let ridges = 9

    init() {
        area.accessibleName(L("Fingerprint image"))
        area.onDraw { [weak self] cr, w, h in self?.draw(cr, w, h) }
    }

    /// `done` of `total` touches taken, and the words that say so.
    func show(done: UInt32, total: UInt32, saying words: String) {
        fraction = total == 0 ? 0 : Double(min(done, total)) / Double(total)
        area.accessibleDescription(words)
        area.redraw()
    }

    /// The ridges filled in for `fraction` of the print: the inner ones first, all at 1.
    static func filledRidges(_ fraction: Double) -> Int {
        guard fraction.isFinite, fraction > 0 else { return 0 }
        return min(ridges, Int((fraction * Double(ridges)).rounded(.up)))
    }

    private func draw(_ cr: Cairo, _ w: Double, _ h: Double) {
        let filled = FingerprintImage.filledRidges(fraction)
        let cx = w / 2, cy = h * 0.52
        let outer = max(8, min(w, h) / 2 - 4)
        cr.lineWidth(3)
        for i in 0..<FingerprintImage.ridges {
            let r = 5 + (outer - 5) * Double(i) / Double(FingerprintImage.ridges - 1)
            // The gap at the bottom (pi/2 in cairo's angles, y down) widens towards the outside,
            // and each ridge turns a little: a whorl, not a target.
            let gap = 0.5 + 0.06 * Double(i), turn = 0.08 * Double(i % 3)
            if i < filled { cr.colour(0.21, 0.52, 0.89) } else { cr.colour(0.5, 0.5, 0.5, 0.4) }
            cr.arc(cx, cy, r, from: Double.pi / 2 + gap / 2 + turn, to: Double.pi / 2 + 2 * Double.pi - gap / 2 + turn)
            cr.stroke()
        }
    }
}
