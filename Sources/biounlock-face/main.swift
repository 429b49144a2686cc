import BiounlockFaceProtocol
import BiounlockFprintProtocol
import BiounlockSystem

// biounlock-face: the only biounlock program that loads dlib (and with it a BLAS) and reads a
// camera. The PAM module and the CLI spawn it with a clean environment and talk to it over a
// socketpair on fd 3 (BiounlockFaceProtocol): the host of the PAM module (sudo, login, a
// greeter) never maps dlib, never opens the camera, and a crash or hang here ends this process only.
//
//   biounlock-face --serve [--syslog]
//   biounlock-face --describe MODELS-DIR IMAGE.pgm...     (scripts/bench: one descriptor per image)
//
// Startup hardening, each a choice (as biounlock-fprint's):
// - every descriptor above 3 is closed (close_range), so nothing of the host reaches dlib;
// - umask 077: the simulated camera's socket is root-only;
// - SIGPIPE is ignored in this process (writes also use MSG_NOSIGNAL);
// - the environment is whatever the spawner gave (biounlock gives a clean one, with
//   OPENBLAS_NUM_THREADS=1: one descriptor at a time needs no thread pool).

let arguments = Array(CommandLine.arguments.dropFirst())

func fail(_ text: String, status: Int32 = 64) -> Never {
    try? FileDescriptor.standardError.writeAll(Array("biounlock-face: \(text)\n".utf8))
    ProcessState.exit(status)
}

if arguments.first == "--describe" {
    guard arguments.count >= 3 else { fail("usage: biounlock-face --describe MODELS-DIR IMAGE.pgm...") }
    Describe.run(models: arguments[1], images: Array(arguments.dropFirst(2)))
}

guard arguments.first == "--serve" else {
    fail("a helper of biounlock, spawned by pam_biounlock.so and the biounlock CLI; not for interactive use")
}
let useSyslog = arguments.contains("--syslog")

let peer = FprintProtocol.helperDescriptor
guard (try? FileDescriptor(rawValue: peer).status())?.kind == .socket else { fail("fd 3 is not a socket") }
ProcessState.closeDescriptors(from: peer + 1)
FileSystem.setUmask(0o077)
ProcessState.ignoreBrokenPipe()
if useSyslog { SystemLog.open(identifier: "biounlock-face") }

let channel = FrameChannel(fd: peer, limit: FaceProtocol.maximumFrameLength)
/// Longest wait for the next request; the spawner normally closes or kills us long before.
let idleMilliseconds: Int64 = 120_000
let sendMilliseconds: Int64 = 5_000
var peerAlive = true

func reply(_ response: FaceResponse) {
    guard peerAlive else { return }
    if case .failure = channel.send(response.payload, until: monotonicMilliseconds() &+ sendMilliseconds) {
        peerAlive = false
    }
}

func warn(_ text: String) {
    if useSyslog { SystemLog.write(.warning, String(text.prefix(512))) } else {
        try? FileDescriptor.standardError.writeAll(Array("biounlock-face: \(text.prefix(512))\n".utf8))
    }
}

reply(.hello)
let session = FaceSession(peer: peer, send: reply, warn: warn)
while peerAlive {
    guard case .success(let payload) = channel.receive(until: monotonicMilliseconds() &+ idleMilliseconds) else { break }
    guard let request = FaceRequest(payload: payload) else {
        reply(.failure(FaceFailure(.badRequest, "malformed request or protocol version (this helper speaks \(FaceProtocol.version))")))
        break
    }
    switch request {
    case .open(let camera, let simulated, let allowRGB, let models):
        session.open(camera: camera, simulated: simulated, allowRGB: allowRGB, models: models)
    case .enrol(let frames, let threshold, let timeout):
        session.enrol(frames: frames, thresholdMilli: threshold, timeoutMilliseconds: timeout)
    case .verify(let descriptors, let threshold, let attemptFrames, let timeout):
        session.verify(descriptors: descriptors, thresholdMilli: threshold, attemptFrames: attemptFrames, timeoutMilliseconds: timeout)
    case .close:
        session.close()
        reply(.closed)
        peerAlive = false
    }
}
session.close()
channel.close()
ProcessState.exit(0)
