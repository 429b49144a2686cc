import BiounlockSystem
import BiounlockFprintProtocol
import Glibc

// Fuzz target: what the module (and the CLI) read from the libfprint helper, biounlock-fprint --
// the byte stream on their end of the socketpair: framing (FrameBuffer, FrameChannel.receive) and
// every message (FprintResponse, with ReaderDescription, FprintdReader, VerifyOutcome,
// FprintFailure, PrintProblem). The same frames are parsed as requests too (what the helper reads
// from us), the fprintd requests and answers included.
//
// Input: one byte that sets how the stream arrives (chunks of 1-256 bytes), then the stream.
// Nothing may trap. Checks: the chunking never changes the frames; a real socket read through
// FrameChannel yields the same frames and ends as the buffer does; frames stay within the limit;
// a parsed message can be re-encoded and parsed again (stable after one round: text is cut at
// the length limit and invalid UTF-8 becomes U+FFFD), and its lists, prints and strings are
// within the protocol's limits.

func frames(_ stream: ArraySlice<UInt8>, chunk: Int) -> (frames: [[UInt8]], tooLarge: Bool, rest: Int) {
    var buffer = FrameBuffer()
    var out: [[UInt8]] = []
    var offset = stream.startIndex
    while true {
        switch buffer.next() {
        case .frame(let f):
            precondition(f.count <= FprintProtocol.maximumFrameLength, "frame over the limit")
            out.append(f)
            continue
        case .tooLarge(let n):
            precondition(Int(exactly: n).map { $0 > FprintProtocol.maximumFrameLength } ?? true, "tooLarge within the limit")
            return (out, true, buffer.buffered)
        case .needMore:
            guard offset < stream.endIndex else { return (out, false, buffer.buffered) }
            let end = min(offset + chunk, stream.endIndex)
            buffer.append(stream[offset..<end])
            offset = end
        }
    }
}

/// The stream through a real socket and FrameChannel, as the module reads the helper; nil when
/// it does not fit in the socket's buffer in one go (then only FrameBuffer is checked).
func channelFrames(_ stream: ArraySlice<UInt8>) -> (frames: [[UInt8]], end: FrameChannel.Failure)? {
    var pair: [Int32] = [-1, -1]
    guard stream.count <= 64 * 1024, socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else { return nil }
    defer { close(pair[1]) }
    let channel = FrameChannel(fd: pair[0])
    let written = Array(stream).withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return send(pair[1], base, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    }
    guard written == stream.count else { return nil }
    shutdown(pair[1], Int32(SHUT_WR))
    var out: [[UInt8]] = []
    while true {
        switch channel.receive(until: monotonicMilliseconds() &+ 5000) {
        case .success(let f): out.append(f)
        case .failure(let end): return (out, end)
        }
    }
}

func checkStrings(_ strings: [String]) {
    for s in strings { precondition(s.utf8.count <= FprintProtocol.maximumStringLength * 3, "a string over the limit") }
}

func check(_ response: FprintResponse) {
    // Re-encoding cuts text at maximumStringLength bytes, and invalid UTF-8 became U+FFFD (three
    // bytes): so the first round may change a string, and from then on nothing changes.
    guard let again = FprintResponse(payload: response.payload) else { preconditionFailure("a re-encoded reply does not parse") }
    precondition(FprintResponse(payload: again.payload) == again, "a reply changes on every round trip")
    precondition(response.payload.count <= FprintProtocol.maximumFrameLength, "a reply fits a frame")
    _ = response.isFinal
    switch response {
    case .devices(let list):
        precondition(list.count <= FprintProtocol.maximumDevices, "too many devices")
        for d in list { checkStrings([d.driver, d.device, d.name, d.scanType]); _ = d.features.names; _ = d.ref }
    case .opened(let d):
        checkStrings([d.driver, d.device, d.name, d.scanType])
        precondition(d.enrolStages <= 1000, "enrol stages are bounded")
    case .enrolled(let print):
        precondition(print.count <= FprintProtocol.maximumPrintLength, "a print over the limit")
        _ = PrintProblem.check(print)
    case .failure(let f):
        checkStrings([f.message])
        _ = f.description
    case .printRejected(_, let problem):
        _ = problem.description
    case .fprintdReaders(let list):
        precondition(list.count <= FprintProtocol.maximumDevices, "too many fprintd devices")
        for d in list {
            checkStrings([d.path, d.name, d.scanType, d.shortName])
            precondition(d.fingers.count <= FprintProtocol.maximumPrints, "too many fingers")
        }
    case .fprintdClaimed(let d):
        checkStrings([d.path, d.name, d.scanType, d.shortName])
        precondition(d.enrolStages <= 1000 && d.fingers.count <= FprintProtocol.maximumPrints, "an fprintd device within the limits")
    case .hello, .enrolStage, .enrolRetry, .verified, .deleted, .closed, .fprintdEnrolled:
        break
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHelperReply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let first = input.first else { return 0 }
    let stream = Array(input.dropFirst())[...]
    let chunked = frames(stream, chunk: Int(first) + 1)
    let whole = frames(stream, chunk: max(stream.count, 1))
    precondition(chunked.frames == whole.frames && chunked.tooLarge == whole.tooLarge, "the chunking changed the frames")
    precondition(whole.frames.reduce(0) { $0 + 4 + $1.count } + whole.rest == stream.count || whole.tooLarge, "bytes lost or invented")

    if let read = channelFrames(stream) {
        precondition(read.frames == whole.frames, "the socket read other frames than the buffer")
        precondition(read.end == (whole.tooLarge ? .tooLarge : .closed), "the socket read ended otherwise: \(read.end)")
    }
    for frame in whole.frames {
        if let response = FprintResponse(payload: frame) { check(response) }
        if let request = FprintRequest(payload: frame) {
            guard let again = FprintRequest(payload: request.payload) else { preconditionFailure("a re-encoded request does not parse") }
            precondition(FprintRequest(payload: again.payload) == again, "a request changes on every round trip")
        }
    }
    return 0
}
