import BiounlockSensors

// Fuzz target: the simulated sensor's control protocol (one command per connection).
//
// Input: the bytes a client sends. Nothing may trap; a parsed command survives a round trip
// through its wire form.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSimCommand(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let command = SimCommand(bytes: bytes) {
        precondition(SimCommand(bytes: command.bytes) == command, "wire form round-trips")
        precondition(command.bytes.count <= SimCommand.maximumLength, "wire form is bounded")
    }
    return 0
}
