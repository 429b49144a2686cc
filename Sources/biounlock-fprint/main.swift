import BiounlockFprintProtocol
import BiounlockSystem
import CFPrint

// biounlock-fprint: the only biounlock program that loads libfprint-2 (and with it GLib), for
// sensor=libfprint. (sensor=fprintd has its own helper, biounlock-fprintd, which loads neither.)
// The PAM module and the CLI spawn it with a clean environment and talk to it over a socketpair
// on fd 3 (BiounlockFprintProtocol): the host of the PAM module (sudo, login, a greeter) never
// maps libfprint, never has its GLib main context iterated, and a crash or hang in a driver ends
// this process only.
//
//   biounlock-fprint --serve [--syslog]
//
// Startup hardening, each a choice:
// - every descriptor above 3 is closed (close_range), so nothing of the host reaches libfprint;
// - umask 077: what libfprint creates (the virtual_device test socket) is root-only;
// - SIGPIPE is ignored in this process (our own; writes also use MSG_NOSIGNAL);
// - the environment is whatever the spawner gave (biounlock gives a clean one); nothing from the
//   invoking user reaches this process.

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "--serve" else {
    let usage = "biounlock-fprint: a helper of biounlock, spawned by pam_biounlock.so and the biounlock CLI; not for interactive use\n"
    try? FileDescriptor.standardError.writeAll(Array(usage.utf8))
    ProcessState.exit(64)
}
let useSyslog = arguments.contains("--syslog")

let peer = FprintProtocol.helperDescriptor
guard (try? FileDescriptor(rawValue: peer).status())?.kind == .socket else {
    try? FileDescriptor.standardError.writeAll(Array("biounlock-fprint: fd 3 is not a socket\n".utf8))
    ProcessState.exit(64)
}
ProcessState.closeDescriptors(from: peer + 1)
FileSystem.setUmask(0o077)
ProcessState.ignoreBrokenPipe()

if useSyslog {
    // libfprint's warnings go to syslog (authpriv) when stderr is /dev/null (inside PAM).
    // Debug and info messages are dropped: GLib's G_MESSAGES_DEBUG is never set by biounlock.
    SystemLog.open(identifier: "biounlock-fprint")
    g_log_set_default_handler({ domain, level, message, _ in
        let severe = GLogLevelFlags(rawValue: G_LOG_LEVEL_ERROR.rawValue | G_LOG_LEVEL_CRITICAL.rawValue
                                    | G_LOG_LEVEL_WARNING.rawValue | G_LOG_LEVEL_MESSAGE.rawValue)
        guard level.rawValue & severe.rawValue != 0, let message else { return }
        let text = "\(domain.map { String(cString: $0) } ?? "glib"): \(String(cString: message))"
        SystemLog.write(.warning, String(text.prefix(512)))
    }, nil)
}

let endpoint = HelperEndpoint(fd: peer)
func reply(_ response: FprintResponse) { endpoint.reply(response) }

let session = Session(peer: peer, send: reply)
endpoint.serve { request in
    switch request {
    case .enumerate: session.enumerate()
    case .open(let selector, let preferred): session.open(selector: selector, preferred: preferred)
    case .enrol(let finger, let timeout): session.enrol(finger: finger, timeoutMilliseconds: timeout)
    case .verify(let prints, let timeout): session.verify(prints: prints, timeoutMilliseconds: timeout)
    case .delete(let print): session.delete(print: print)
    case .close:
        session.closeDevice()
        reply(.closed)
        return false
    case .fprintdList, .fprintdClaim, .fprintdVerify, .fprintdEnrol, .fprintdDelete:
        reply(.failure(FprintFailure(.badRequest, "biounlock-fprint serves sensor=libfprint only (fprintd's client: biounlock-fprintd)")))
    }
    return true
}
session.closeDevice()
endpoint.close()
ProcessState.exit(0)
