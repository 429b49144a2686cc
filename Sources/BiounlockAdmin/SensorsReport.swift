import BiounlockSystem
import BiounlockCore

/// The shape of `biounlock sensors`, as text and as JSON (add fields, never rename or remove).
public enum SensorsReport {
    public static func json(sensor: SensorKind, readers: [ReaderInfo]) -> JSON {
        .object([
            ("sensor", .string(sensor.rawValue)),
            ("readers", .array(readers.map { r in
                .object([
                    ("driver", .string(r.driver)),
                    ("device", .string(r.device)),
                    ("name", .string(r.name)),
                    ("enrol_stages", .int(r.enrolStages)),
                    ("scan_type", .string(r.scanType)),
                    ("features", .array(r.features.map(JSON.string))),
                ])
            })),
        ])
    }

    public static func text(sensor: SensorKind, readers: [ReaderInfo]) -> String {
        guard !readers.isEmpty else { return L("No fingerprint reader found (sensor {sensor}).", ["sensor": sensor.rawValue]) }
        return readers.map { r in
            // TRANSLATORS: {scan} (press, swipe) and {features} are libfprint's words: keep them.
            "\(r.driver)/\(r.device)  \(r.name)\n  " + L("enrol stages: {stages}, scan: {scan}, features: {features}",
                                                        ["stages": String(r.enrolStages), "scan": r.scanType, "features": r.features.joined(separator: ", ")])
        }.joined(separator: "\n")
    }
}

/// Whether fprintd and pam_fprintd are also set up on this machine, and whether biounlock uses
/// fprintd itself (sensor=fprintd). With sensor=libfprint they compete for the reader: while
/// fprintd has claimed it, biounlock finds it busy and falls back.
public struct FprintdReport: Equatable, Sendable {
    /// The fprintd daemon's executable, if installed.
    public var daemon: String?
    /// PAM service files that call pam_fprintd.so (not commented out).
    public var pamFiles: [String]
    /// The backend biounlock uses (auto resolved).
    public var sensor: SensorKind = .libfprint
    /// With sensor=fprintd: why fprintd could not be asked for the users' fingers, if it could not.
    public var error: String?

    public init(daemon: String?, pamFiles: [String], sensor: SensorKind = .libfprint, error: String? = nil) {
        self.daemon = daemon; self.pamFiles = pamFiles; self.sensor = sensor; self.error = error
    }

    public var json: JSON {
        .object([("installed", .bool(daemon != nil)), ("pam_fprintd", .array(pamFiles.map(JSON.string))),
                 ("in_use", .bool(sensor == .fprintd)), ("error", error.map(JSON.string) ?? .null)])
    }

    /// Lines for `biounlock status`, empty when neither is present.
    public var notes: [String] {
        var out: [String] = []
        if sensor == .fprintd {
            out.append(L("note: biounlock uses fprintd (sensor fprintd): the fingers shown are the ones fprintd holds, as GNOME Settings, KDE and fprintd-list show them."))
            if let error { out.append(L("note: fprintd could not be asked for the enrolled fingers: {reason}", ["reason": error])) }
            if !pamFiles.isEmpty {
                out.append(L("note: pam_fprintd is also configured ({files}). In a stack that also has pam_biounlock the finger is asked for twice; biounlock doctor names such stacks.",
                             ["files": pamFiles.joined(separator: ", ")]))
            }
            return out
        }
        if !pamFiles.isEmpty {
            out.append(L("note: pam_fprintd is also configured ({files}). fprintd holds the reader while it waits for a finger; biounlock then finds it busy and falls back. Use one of the two per service, or sensor fprintd to share fprintd's prints.",
                         ["files": pamFiles.joined(separator: ", ")]))
        } else if let daemon {
            out.append(L("note: fprintd is installed ({path}). While a client of it has claimed the reader, biounlock finds it busy and falls back; sensor fprintd (or auto) shares fprintd's reader and prints instead.",
                         ["path": daemon]))
        }
        return out
    }
}

public enum FprintdCheck {
    public static let daemonPaths = ["/usr/libexec/fprintd", "/usr/lib/fprintd/fprintd"]

    /// Looks at `pamDirectory` for services calling pam_fprintd.so and at the usual fprintd paths.
    public static func scan(pamDirectory: String = "/etc/pam.d", daemonPaths: [String] = FprintdCheck.daemonPaths) -> FprintdReport {
        var files: [String] = []
        for name in PamDirectory.serviceNames(pamDirectory) {
            let path = pamDirectory + "/" + name
            // Only root-owned service files count (libpam itself ignores nothing, but an
            // admin tool has no business reading what it cannot trust either).
            guard case .success(let text) = TrustedFiles.readText(path) else { continue }
            if mentionsPamFprintd(text) { files.append(path) }
        }
        let daemon = daemonPaths.first { Directory.isExecutable($0) }
        return FprintdReport(daemon: daemon, pamFiles: files)
    }

    /// Whether a PAM service file calls pam_fprintd.so on a line that is not a comment.
    public static func mentionsPamFprintd(_ text: String) -> Bool {
        text.split(whereSeparator: \.isNewline).contains { line in
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return code.contains("pam_fprintd.so")
        }
    }
}
