import BiounlockCore
import BiounlockSystem
import BiounlockGtk

// biounlock-settings: a user's own biometric unlock in a window (GTK 4 + libadwaita), a client
// of biounlockd and nothing else: it never opens the store, never loads libfprint, and does not
// run as root (root has the `biounlock` CLI, which sees every account).

LocaleSetting.set(.all, to: "")
// The catalogs' directory: /usr/share/locale, or BIOUNLOCK_LOCALE_DIR (the build's catalogs,
// for tests and screenshots; the app is unprivileged, so its environment is the user's own).
if let dir = Environment.value("BIOUNLOCK_LOCALE_DIR").map({ String(decoding: $0, as: UTF8.self) }), !dir.isEmpty {
    Localization.use(directory: dir)
}

let arguments = Array(CommandLine.arguments.dropFirst())
func say(_ descriptor: FileDescriptor, _ text: String) { try? descriptor.writeAll(Array((text + "\n").utf8)) }
if arguments.contains("--help") || arguments.contains("-h") {
    say(.standardOutput, L("Usage: {program}", ["program": "biounlock-settings"]))
    say(.standardOutput, L("Sets up your own biometric unlock (fingers, passcode) through the biounlock service."))
    ProcessState.exit(0)
}
if ProcessIdentity.realUserID == 0 || ProcessIdentity.effectiveUserID == 0 {
    say(.standardError, "biounlock-settings: " + L("it manages your own account and does not run as root; root uses the biounlock command instead."))
    ProcessState.exit(1)
}

let application = Application(id: "org.biounlock.Settings")
var settingsWindow: SettingsWindow?
application.onActivate {
    if let settingsWindow { settingsWindow.window.present(); return }
    let w = SettingsWindow(application: application)
    settingsWindow = w
    w.present()
}
ProcessState.exit(application.run())
