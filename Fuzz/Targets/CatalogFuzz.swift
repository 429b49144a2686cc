import BiounlockCore

// Fuzz target: the checks that stand between a message catalog and glibc's gettext
// (MessageCatalog.problem, run inside sudo before dgettext may read a .mo).
//
// Input: the bytes of a .mo file. Nothing may trap; an accepted catalog has, by a reading of its
// own here, every string inside the file and NUL-terminated, a hash table glibc's probing ends in
// (prime size above 2, an empty slot, entries at most the string count), and a UTF-8 header.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalog(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard MessageCatalog.problem(bytes) == nil else { return 0 }
    precondition(bytes.count >= 28, "a header")
    let swapped = bytes[0] == 0x95 && bytes[1] == 0x04 // written big-endian
    func word(_ offset: Int) -> Int {
        precondition(offset >= 0 && offset + 4 <= bytes.count, "a word inside the file")
        let w = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        return Int(swapped ? w.byteSwapped : w)
    }
    let count = word(8), originals = word(12), translations = word(16), hashSize = word(20), hashOffset = word(24)
    var header = false
    for table in [originals, translations] {
        for i in 0..<count {
            let length = word(table + 8 * i), offset = word(table + 8 * i + 4)
            precondition(offset + length < bytes.count && bytes[offset + length] == 0, "every string inside and terminated")
            if table == originals && length == 0 { header = true }
        }
    }
    precondition(header, "a header entry")
    if hashSize != 0 {
        precondition(hashSize > 2 && (2..<hashSize).allSatisfy { $0 * $0 > hashSize || hashSize % $0 != 0 }, "a prime hash size")
        var empty = false
        for slot in 0..<hashSize {
            let entry = word(hashOffset + 4 * slot)
            precondition(entry <= count, "hash entries name strings")
            empty = empty || entry == 0
        }
        precondition(empty, "an empty slot ends every probe")
    }
    return 0
}
