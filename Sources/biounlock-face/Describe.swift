import BiounlockFaceProtocol
import BiounlockSystem

/// `biounlock-face --describe MODELS-DIR IMAGE.pgm...`: one line per image on standard output,
/// `PATH face N v1 … v128` (N faces found, the largest described), `PATH none`, or `PATH bad WHY`.
/// scripts/bench uses it for the accuracy figures: the same detector, alignment, network and
/// dark-frame rule as the camera path, on binary PGM images.
enum Describe {
    static func run(models: String, images: [String]) -> Never {
        let engine: Engine
        switch Engine.load(models) {
        case .success(let e): engine = e
        case .failure(let f): fail(f.message, status: 1)
        }
        var out = ""
        for path in images {
            out += path + " "
            switch read(path) {
            case .failure(let why): out += "bad \(why)\n"
            case .success(let (pixels, width, height)):
                let found = pixels.withUnsafeBufferPointer { p -> Engine.Found in
                    guard let base = p.baseAddress else { return .problem(.badFrame, "empty") }
                    return engine.describe(base, width: width, height: height, stride: width)
                }
                switch found {
                case .face(let d, let faces):
                    out += "face \(faces) " + d.values.map { "\($0)" }.joined(separator: " ") + "\n"
                case .problem(.noFace, _), .problem(.dark, _): out += "none\n"
                case .problem(let p, let detail): out += "bad \(p) \(detail ?? "")\n"
                }
            }
            if out.utf8.count > 1 << 16 {
                try? FileDescriptor.standardOutput.writeAll(Array(out.utf8))
                out = ""
            }
        }
        try? FileDescriptor.standardOutput.writeAll(Array(out.utf8))
        ProcessState.exit(0)
    }

    struct Problem: Error, CustomStringConvertible { let description: String }

    /// A binary PGM (P5, maxval 255) of at most 4096x4096.
    static func read(_ path: String) -> Result<([UInt8], Int, Int), Problem> {
        let bytes: [UInt8]
        do throws(Errno) {
            let file = try FileDescriptor.open(path, .readOnly, options: [.noControllingTerminal])
            bytes = try file.descriptor.readAll(upTo: 64 << 20)
        } catch { return .failure(Problem(description: error.description)) }
        var at = 0
        func token() -> Int? {
            while at < bytes.count, [0x20, 0x0a, 0x0d, 0x09].contains(bytes[at]) { at += 1 }
            let start = at
            while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39, at - start < 7 { at += 1 }
            return at > start ? Int(String(decoding: bytes[start..<at], as: UTF8.self)) : nil
        }
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "5") else {
            return .failure(Problem(description: "not a binary PGM"))
        }
        at = 2
        guard let w = token(), let h = token(), let maxval = token(), maxval == 255, (16...4096).contains(w), (16...4096).contains(h),
              bytes.count - (at + 1) >= w * h else { return .failure(Problem(description: "unsupported PGM header or size")) }
        return .success((Array(bytes[(at + 1)..<(at + 1 + w * h)]), w, h))
    }
}
