import BiounlockCore
import BiounlockAdmin

// Fuzz target: pattern passcodes (Pattern.canonical and every passcode kind's checks).
//
// Input: the typed bytes. Nothing may trap; an accepted pattern is 4-9 distinct points of the
// grid, its canonical form is canonical again, and it can be drawn.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPattern(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let typed = Array(UnsafeBufferPointer(start: data, count: size))
    switch Pattern.canonical(typed) {
    case .success(let path):
        precondition((Pattern.minimumPoints...9).contains(path.count), "a pattern has 4-9 points")
        precondition(Set(path).count == path.count && path.allSatisfy { (1...9).contains($0) }, "points are distinct grid points")
        let digits = path.map { UInt8(ascii: "0") + UInt8($0) }
        precondition(Pattern.canonical(digits) == .success(path), "the canonical path is canonical")
        _ = Pattern.draw(path)
    case .failure(let problem):
        _ = problem.description
    }
    if let secret = Secret(bytes: typed) {
        for kind in PasscodeKind.allCases {
            _ = kind.problem(with: secret)
            if let normal = kind.normalized(secret), kind == .pattern {
                precondition(kind.normalized(normal)?.constantTimeEquals(normal) == true, "normalizing twice changes nothing")
            }
        }
    }
    return 0
}
