import BiounlockSystem

/// `sensor=auto`: which backend to use on this machine, decided once when the options are loaded.
///
/// Rule: fprintd when its D-Bus service is installed (a desktop where fprintd owns the reader,
/// and GNOME Settings, KDE or `fprintd-enroll` make the prints), libfprint otherwise.
/// Security choice: only the presence of a file in a root-owned system directory decides, never
/// the caller's environment, and either answer fails towards the password when the backend then
/// cannot be used (no daemon, no reader, nothing enrolled: unavailable).
public enum SensorSelection {
    /// Where the fprintd package installs its D-Bus system service (bus activation).
    public static let fprintdServiceFiles = [
        "/usr/share/dbus-1/system-services/net.reactivated.Fprint.service",
        "/usr/local/share/dbus-1/system-services/net.reactivated.Fprint.service",
    ]

    /// The first of `fprintdServiceFiles` that exists.
    public static func installedFprintdService(_ paths: [String] = SensorSelection.fprintdServiceFiles) -> String? {
        paths.first { path in (try? FileStatus.of(path, followingSymbolicLinks: true))?.kind == .regular }
    }

    /// Why the backend in use is the one it is, for `biounlock doctor`.
    public enum Reason: Equatable, Sendable {
        /// `sensor=` names it.
        case configured(SensorKind)
        /// `sensor=auto` and fprintd's D-Bus service file is installed there.
        case fprintdInstalled(service: String)
        /// `sensor=auto` and none of fprintd's service files is there (the first one named).
        case fprintdMissing(lookedFor: String)
    }

    /// `options` with `auto` replaced by the backend it means here, and the reason recorded.
    public static func resolve(_ options: Options, fprintdService: () -> String? = { installedFprintdService() }) -> Options {
        var o = options
        switch options.sensor {
        case .auto:
            if let service = fprintdService() {
                o.sensor = .fprintd
                o.sensorChoice = .fprintdInstalled(service: service)
            } else {
                o.sensor = .libfprint
                o.sensorChoice = .fprintdMissing(lookedFor: fprintdServiceFiles[0])
            }
        case let explicit:
            o.sensorChoice = .configured(explicit)
        }
        return o
    }
}
