import BiounlockCore

/// One command of the simulated sensor's control protocol: the same words as libfprint's
/// virtual_device driver, one per connection, no trailing newline (everything after the
/// first space is the argument, verbatim).
public enum SimCommand: Equatable, Sendable {
    /// A touch by the finger called `id`.
    case scan([UInt8])
    /// The reader asks for another touch (libfprint's retry codes).
    case retry(Int)
    /// The next action fails with this device error.
    case error(Int)
    /// The reader goes away.
    case unplug
    /// Wait this long before the next command takes effect.
    case sleep(milliseconds: Int)

    public static let maximumIdLength = 128
    public static let maximumSleepMilliseconds = 60_000
    /// Longest command read from a connection; longer input is discarded unread.
    public static let maximumLength = 256

    /// Parses one command; nil for anything malformed (ignored by the sensor).
    public init?(bytes: [UInt8]) {
        guard bytes.count <= SimCommand.maximumLength else { return nil }
        let space = bytes.firstIndex(of: UInt8(ascii: " "))
        let word = String(decoding: bytes[..<(space ?? bytes.count)], as: UTF8.self)
        let argument = space.map { Array(bytes[($0 + 1)...]) }
        func number(_ range: ClosedRange<Int>) -> Int? {
            guard let argument, !argument.isEmpty, argument.count <= 6,
                  argument.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let n = Int(String(decoding: argument, as: UTF8.self)), range.contains(n) else { return nil }
            return n
        }
        switch word {
        case "SCAN":
            guard let argument, !argument.isEmpty, argument.count <= SimCommand.maximumIdLength else { return nil }
            self = .scan(argument)
        case "RETRY":
            guard let n = number(0...255) else { return nil }
            self = .retry(n)
        case "ERROR":
            guard let n = number(0...0xFFFF) else { return nil }
            self = .error(n)
        case "UNPLUG":
            guard argument == nil else { return nil }
            self = .unplug
        case "SLEEP":
            guard let n = number(0...SimCommand.maximumSleepMilliseconds) else { return nil }
            self = .sleep(milliseconds: n)
        default:
            return nil
        }
    }

    /// The wire form (what `biounlock sim …` sends).
    public var bytes: [UInt8] {
        switch self {
        case .scan(let id): return Array("SCAN ".utf8) + id
        case .retry(let n): return Array("RETRY \(n)".utf8)
        case .error(let n): return Array("ERROR \(n)".utf8)
        case .unplug: return Array("UNPLUG".utf8)
        case .sleep(let ms): return Array("SLEEP \(ms)".utf8)
        }
    }
}
