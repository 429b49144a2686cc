import BiounlockFprintProtocol
import BiounlockSystem

// biounlock-fprintd: fprintd's client for sensor=fprintd. It speaks D-Bus itself
// (BiounlockDBus: one Unix socket, SASL EXTERNAL, the messages read in the order the bus sends
// them) and loads no library but libc and libm: no libfprint, no GLib, no libdbus or sd-bus. The
// PAM module and the CLI spawn it with a clean environment and talk to it over a socketpair on
// fd 3 (BiounlockFprintProtocol, the fprintd requests): the host of the PAM module (sudo, login,
// a greeter) never opens a bus connection, and a crash or hang here ends this process only.
//
//   biounlock-fprintd --serve [--syslog] [--detach SECONDS]
//
// Startup hardening, each a choice (as biounlock-fprint's):
// - every descriptor above 3 is closed (close_range), so nothing of the host reaches the bus;
// - umask 077; SIGPIPE ignored (writes also use MSG_NOSIGNAL);
// - the environment is whatever the spawner gave (biounlock gives a clean one) and is never
//   read: the bus address comes from the request (the root-owned `fprintd_bus`);
// - `--detach SECONDS` (the PAM module, unless its host is a subreaper): once fprintd verifies
//   (VerifyStart answered, the wait for a touch begins), this process forks and exits at once,
//   and its child serves the spawner from then on, adopted by init. After a match the module
//   then returns as soon as `closed` comes (fprintd's Release answered, the device free) instead
//   of also waiting for this process's exit, and no host is left a child; the fork runs while
//   the user's finger is still on its way, off the way to the touch request and to the answer.
//   Until then this process is the spawner's child, killed by pid on a deadline as before; the
//   child cannot be, so it ends by itself: every wait in it watches fd 3 (the spawner's end
//   closing ends it), every bus call is bounded, and at the latest SECONDS after the fork
//   (SIGALRM: _exit). A helper that never verified does not fork (its spawner waits for its exit).

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "--serve" else {
    let usage = "biounlock-fprintd: a helper of biounlock, spawned by pam_biounlock.so and the biounlock CLI; not for interactive use\n"
    try? FileDescriptor.standardError.writeAll(Array(usage.utf8))
    ProcessState.exit(64)
}
let useSyslog = arguments.contains("--syslog")

let peer = FprintProtocol.helperDescriptor
guard (try? FileDescriptor(rawValue: peer).status())?.kind == .socket else {
    try? FileDescriptor.standardError.writeAll(Array("biounlock-fprintd: fd 3 is not a socket\n".utf8))
    ProcessState.exit(64)
}
ProcessState.closeDescriptors(from: peer + 1)
/// `--detach SECONDS`: the child's longest life after the fork; nil (a bad value is the
/// spawner's bug: served, not detached, and the spawner waits for the end as without it).
let detachSeconds: Int? = arguments.firstIndex(of: "--detach").flatMap { at in
    at + 1 < arguments.count ? Int(arguments[at + 1]).flatMap { (1...3600).contains($0) ? $0 : nil } : nil
}
FileSystem.setUmask(0o077)
ProcessState.ignoreBrokenPipe()
if useSyslog { SystemLog.open(identifier: "biounlock-fprintd") }

let endpoint = HelperEndpoint(fd: peer)
func reply(_ response: FprintResponse) { endpoint.reply(response) }

let session = FprintdSession(peer: peer, send: reply)
var detached = false
session.verifying = {
    guard !detached, let detachSeconds else { return }
    detached = true
    // A failed fork: this process goes on, and the spawner waits for its exit as without it.
    if ProcessState.detach() { ProcessState.installWatchdog(seconds: detachSeconds) }
}
endpoint.serve { request in
    switch request {
    case .fprintdList(let bus, let user): session.list(bus: bus, user: user)
    case .fprintdClaim(let bus, let user, let selector, let purpose):
        session.claim(bus: bus, user: user, selector: selector, purpose: purpose)
    case .fprintdVerify(let timeout): session.verify(timeoutMilliseconds: timeout)
    case .fprintdEnrol(let finger, let timeout): session.enrol(finger: finger, timeoutMilliseconds: timeout)
    case .fprintdDelete(let finger): session.delete(finger: finger)
    case .close:
        session.finish()
        reply(.closed)
        return false
    case .enumerate, .open, .enrol, .verify, .delete:
        reply(.failure(FprintFailure(.badRequest, "biounlock-fprintd serves sensor=fprintd only (libfprint's readers: biounlock-fprint)")))
    }
    return true
}
session.finish()
endpoint.close()
// The spawner waits for this end (its pidfd) or, detached, for `closed`, sent once the device
// was released: nothing is buffered, no exit handler has work to do.
ProcessState.exitNow(0)
