import BiounlockCore
import BiounlockSystem

/// A yes-or-no question on the controlling terminal, for a choice the admin did not make on the
/// command line (re-enrolling a finger without --replace). Only when standard input is a
/// terminal: a script gets the refusal and the option to pass instead, never a question it
/// cannot answer.
enum Question {
    /// Whether the admin answered yes; false for no, Enter alone, end of input or no terminal.
    static func confirm(_ question: String) -> Bool {
        guard FileDescriptor.standardInput.isTerminal,
              let tty = try? FileDescriptor.open("/dev/tty", .readWrite, options: [.noControllingTerminal]) else { return false }
        // TRANSLATORS: appended to a yes-or-no question; the answer is read as y or yes (n, or
        // Enter alone, is no): keep "y/N" as it is.
        _ = try? tty.descriptor.writeAll(Array((question + " " + L("[y/N] ")).utf8))
        var answer: [UInt8] = []
        while let byte = try? tty.descriptor.readByte(), byte != UInt8(ascii: "\n") {
            if answer.count < 16 { answer.append(byte) }
        }
        let word = String(decoding: answer, as: UTF8.self).lowercased().filter { $0 != " " && $0 != "\r" }
        return word == "y" || word == "yes"
    }
}
