import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import BiounlockFprintProtocol
import BiounlockCheckProtocol
import BiounlockCheck

// biounlock-check: the setuid-root helper that lets pam_biounlock.so work in screen lockers
// that run PAM as the user (i3lock, swaylock, hyprlock, xscreensaver's auth helper), as
// unix_chkpwd lets pam_unix read /etc/shadow there. It authenticates the user whose uid is its
// real uid -- never a name from argv, the socket or the environment -- by running the module's
// own policy chain (BiounlockCheck.CheckerService) with the conversation relayed to the module
// over fd 3, and tells the module the decision. That is all it grants: "this user proved who they
// are", to the user's own process.
//
//   started by pam_biounlock.so (HelperProcess), setuid root, no arguments (any are ignored),
//   its end of a socketpair on fd 3. Exit 0 after answering; 64 no socket on fd 3; 67 the real
//   uid has no account; 75 the watchdog; 77 not running as root.
//
// The order below matters: the real uid is read first, the process is hardened (Hardening.swift)
// before a byte is read from the caller, and the watchdog runs before any wait.

let callerUID = ProcessIdentity.realUserID
let callerGID = ProcessIdentity.realGroupID
Hardening.clearEnvironment()
Hardening.resetSignals()
guard Hardening.socketOnDescriptor3() else {
    Hardening.usage()
    ProcessState.exit(Hardening.usageStatus)
}
Hardening.descriptors()
let isRoot = Hardening.isRoot
let limitProblems = isRoot ? Hardening.processState(gid: callerGID) : []
Hardening.watchdog(seconds: CheckProtocol.checkerLifetimeSeconds + 5)

let base = CheckerSyslog()
let channel = FrameChannel(fd: CheckProtocol.checkerDescriptor, limit: CheckProtocol.maximumFrameLength, sensitive: true)
func refuse(_ reason: Reason, status: Int32) -> Never {
    _ = channel.send(CheckerMessage.result(Decision(.unavailable, reason)).payload, until: monotonicMilliseconds() &+ 2_000)
    ProcessState.exit(status)
}
guard isRoot else {
    base.log(.error, "biounlock-check: not running as root (installed setuid root? on a filesystem mounted nosuid? started with no_new_privs?); nothing checked")
    refuse(.checkerUnavailable, status: Hardening.notRootStatus)
}
guard let caller = Accounts.lookup(uid: callerUID) else {
    base.log(.error, "biounlock-check: uid \(callerUID) has no account; nothing checked")
    refuse(.checkerUnavailable, status: Hardening.noUserStatus)
}

let logger = ServiceLogger(base)
var service = CheckerService(
    caller: caller, logger: logger, sensors: Sensors(logger: logger, helperDiagnostics: .syslog),
    openStore: Store.openForAuthentication,
    end: monotonicMilliseconds() &+ Int64(CheckProtocol.checkerLifetimeSeconds) * 1000)
service.setDebug = { base.debugEnabled = $0 }
service.useLanguage = CheckerLanguage.use
service.checkUnixPassword = UnixPassword.matches
service.limitProblems = limitProblems.map(\.description)
service.serve(channel)
ProcessState.exit(0)
