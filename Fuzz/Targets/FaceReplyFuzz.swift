import BiounlockSystem
import BiounlockFprintProtocol
import BiounlockFaceProtocol

// Fuzz target: what the module (and the CLI) read from the face helper, biounlock-face -- its
// frames (FrameBuffer with the face protocol's limit) and every message (FaceResponse, with
// CameraDescription, FaceOutcome, FrameProblem, FaceFailure, descriptors) -- and what the helper
// reads from us (FaceRequest), and a stored face template (FaceTemplateData: the store's bytes).
//
// Input: one byte that sets the chunk size (1-256 bytes), then the stream. Nothing may trap.
// Checks: the chunking never changes the frames; frames stay within the limit; a parsed message
// re-encodes to one that parses to the same value after one round (text is cut at the length
// limit, invalid UTF-8 becomes U+FFFD); descriptors are 128 finite floats; lists within the limits.

func faceFrames(_ stream: ArraySlice<UInt8>, chunk: Int) -> (frames: [[UInt8]], tooLarge: Bool) {
    var buffer = FrameBuffer(limit: FaceProtocol.maximumFrameLength)
    var out: [[UInt8]] = []
    var offset = stream.startIndex
    while true {
        switch buffer.next() {
        case .frame(let f):
            precondition(f.count <= FaceProtocol.maximumFrameLength, "frame over the limit")
            out.append(f)
        case .tooLarge:
            return (out, true)
        case .needMore:
            guard offset < stream.endIndex else { return (out, false) }
            let end = min(offset + chunk, stream.endIndex)
            buffer.append(stream[offset..<end])
            offset = end
        }
    }
}

func checkDescriptors(_ list: [FaceDescriptor]) {
    precondition(list.count <= FaceProtocol.maximumDescriptors, "too many descriptors")
    for d in list {
        precondition(d.values.count == FaceProtocol.descriptorLength && d.values.allSatisfy(\.isFinite), "a bad descriptor")
        precondition(d.distance(to: d) == 0, "a descriptor is not at distance 0 from itself")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFaceReply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let first = input.first else { return 0 }
    let stream = Array(input.dropFirst())[...]
    let chunked = faceFrames(stream, chunk: Int(first) + 1)
    let whole = faceFrames(stream, chunk: max(stream.count, 1))
    precondition(chunked.frames == whole.frames && chunked.tooLarge == whole.tooLarge, "the chunking changed the frames")
    for frame in whole.frames + [Array(stream)] {
        if let response = FaceResponse(payload: frame) {
            guard let again = FaceResponse(payload: response.payload) else { preconditionFailure("a re-encoded reply does not parse") }
            precondition(FaceResponse(payload: again.payload) == again, "a reply changes on every round trip")
            _ = response.label; _ = response.isFinal
            switch response {
            case .enrolled(let list): checkDescriptors(list)
            case .opened(let c): precondition(c.width <= 65536 && c.height <= 65536, "camera sizes are bounded")
            case .verified(.match(let index, _)): precondition(index < FaceProtocol.maximumDescriptors, "a match index over the limit")
            case .failure(let f): _ = f.description
            case .enrolRetry(let p): _ = p.description
            default: break
            }
        }
        if let request = FaceRequest(payload: frame) {
            guard let again = FaceRequest(payload: request.payload) else { preconditionFailure("a re-encoded request does not parse") }
            precondition(FaceRequest(payload: again.payload) == again, "a request changes on every round trip")
            if case .verify(let list, let threshold, let attempt, _) = request {
                checkDescriptors(list)
                precondition(threshold <= 2000 && attempt >= 1, "verify's numbers are bounded")
            }
        }
        if let stored = FaceTemplateData.decode(frame) {
            checkDescriptors(stored)
            precondition(!stored.isEmpty && FaceTemplateData.decode(FaceTemplateData.encode(stored)) == stored, "a stored face does not round-trip")
        }
    }
    return 0
}
