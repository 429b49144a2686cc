import BiounlockCore

/// `biounlock passcode set --kind pattern` shows the pattern it is confirming on the terminal.
extension Pattern {
    /// The grid with each point's place in the path:
    ///
    ///     ┌───┬───┬───┐
    ///     │ 1 │ 2 │ 3 │
    ///     ├───┼───┼───┤
    ///     │   │   │ 4 │
    ///     ...
    public static func draw(_ path: [Int]) -> String {
        var order = [Int](repeating: 0, count: 10)
        for (index, point) in path.enumerated() where (1...9).contains(point) { order[point] = index + 1 }
        func cell(_ p: Int) -> String {
            let n = order[p]
            return n == 0 ? "   " : (n < 10 ? " \(n) " : "\(n) ")
        }
        var lines = ["┌───┬───┬───┐"]
        for row in 0..<3 {
            lines.append("│" + (1...3).map { cell(row * 3 + $0) }.joined(separator: "│") + "│")
            lines.append(row < 2 ? "├───┼───┼───┤" : "└───┴───┴───┘")
        }
        lines.append("path: " + path.map(String.init).joined(separator: " → "))
        return lines.joined(separator: "\n")
    }
}
