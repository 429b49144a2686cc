import BiounlockSystem
import BiounlockCore
import BiounlockSensors
import BiounlockFprintProtocol

/// biounlockd's two workers are the same program started again (`biounlockd --reauth-worker`,
/// `--enrol-worker`), spoken to over a socketpair on descriptor 3 in FrameChannel's frames.
///
/// Why processes and not threads:
/// - re-authentication runs a PAM stack, and so loads pam_biounlock.so, whose statically linked
///   SQLite would share the store's POSIX locks with the service's own SQLite in one process
///   (docs/SECURITY.md, "SQLite inside the module": closing either copy's descriptor drops both
///   copies' locks); pam_unix's delay after a wrong password then sleeps in the worker, not in
///   the service;
/// - an enrolment waits for touches for up to minutes: cancelling it is killing the worker (its
///   libfprint helper sees its peer go and ends too), and the service's death kills it
///   (PR_SET_PDEATHSIG), so a kill -9 of the service mid-enrolment leaves no one holding the reader.
///   PR_SET_PDEATHSIG follows the thread that started the worker: the service starts them from
///   threads that live as long as it does (biounlockd's exclusive pool).
///   Nothing is written to the store until the service has the finished template.
public struct WorkerLaunch: Sendable {
    /// The service's own executable (root's, in directories only root can write: checked
    /// before each start, as the module checks its helpers).
    public let path: String
    /// The service's option words (db=, config=, sensor=, sim_socket=), for the enrolment worker.
    public let optionWords: [String]
    /// Test setting: the PAM configuration directory for re-authentication (pam_start_confdir).
    public let pamConfdir: String?
    /// Whether the workers' standard error is the service's (--log-stderr) or /dev/null.
    public let shareStandardError: Bool

    public init(path: String, optionWords: [String], pamConfdir: String? = nil, shareStandardError: Bool = false) {
        self.path = path; self.optionWords = optionWords; self.pamConfdir = pamConfdir; self.shareStandardError = shareStandardError
    }

    static let environment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]

    func spawn(_ mode: String, sensitive: Bool) -> Result<HelperProcess, SensorUnavailable> {
        if let problem = TrustedFiles.checkExecutable(path) {
            return .failure(SensorUnavailable("\(path) refused as biounlockd's worker: \(problem)"))
        }
        let launch = HelperLaunch(path: path, arguments: [mode, "--parent", String(ProcessIdentity.processID)],
                                  environment: WorkerLaunch.environment, stderrToNull: !shareStandardError)
        return HelperProcess.spawn(launch, limit: WorkerMessages.maximumFrame, sensitive: sensitive)
    }
}

/// The frames between the service and its workers (WireWriter/WireReader).
enum WorkerMessages {
    static let version: UInt8 = 1
    static let maximumFrame = 8 << 20

    // service -> re-authentication worker
    /// The secret goes last, copied once into an array of the frame's final size (no growth
    /// leaves a copy behind); the caller wipes what this returns once it is sent.
    static func reauthRequest(user: String, confdir: String?, secret: Secret) -> [UInt8] {
        var w = WireWriter()
        w.u8(version)
        w.string(user)
        w.string(confdir ?? "")
        w.u32(UInt32(clamping: secret.count))
        var frame = [UInt8](repeating: 0, count: w.bytes.count + secret.count)
        for (i, b) in w.bytes.enumerated() { frame[i] = b }
        secret.withBytes { raw in for (i, b) in raw.enumerated() { frame[w.bytes.count + i] = b } }
        return frame
    }

    // re-authentication worker -> service
    enum ReauthResult: UInt8 { case accepted = 0, rejected = 1, unavailable = 2 }

    // service -> enrolment worker
    static func enrolRequest(user: String, finger: Finger, seconds: UInt32, words: [String]) -> [UInt8] {
        var w = WireWriter()
        w.u8(version)
        w.string(user)
        w.u8(UInt8(clamping: finger.rawValue))
        w.u32(seconds)
        w.u32(UInt32(clamping: words.count))
        for word in words { w.string(word) }
        return w.bytes
    }

    // enrolment worker -> service
    enum EnrolKind: UInt8 { case ready = 1, stage = 2, retry = 3, done = 4, failed = 5 }
}
