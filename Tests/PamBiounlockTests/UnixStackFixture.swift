import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockSensors

/// The issue-12 contract's texts, in one place for the Swift tests (a later issue translates them).
enum ContractText {
    static let pinOrPassword = "PIN or password"
    static let password = "Password"
    /// pam_unix's own prompt.
    static let unixPrompt = "Password: "
    /// Without a terminal, while the reader is still usable.
    static func orEnter(_ cred: String, _ service: String) -> String { "\(cred) for \(words(service)), or touch the reader, then press Enter: " }
    /// Once the finger cannot be used (or the reader is done).
    static func done(_ cred: String, _ service: String) -> String { "\(cred) for \(words(service)): " }
    static func touchRequest(_ service: String) -> String { "Touch the fingerprint reader to authenticate for \(words(service))" }
    /// What the texts say in place of a known service's name (issue 33, item 3; ServiceWordsTests
    /// checks the table itself); any other service keeps its name.
    static func words(_ service: String) -> String {
        ["i3lock": "unlocking the screen", "kde": "unlocking the screen", "kde-fingerprint": "unlocking the screen", "gdm-password": "logging in",
         "gdm-fingerprint": "logging in", "login": "logging in", "lightdm": "logging in", "sddm": "logging in", "sudo": "running a command as root", "polkit-1": "authorising an action"][service] ?? service
    }
    /// `PIN locked for 4 min: use your finger or your password.` / `...: use your password.`
    /// (the time left in whatever form it takes).
    static func isPinLocked(_ message: String, fingerToo: Bool) -> Bool {
        let tail = fingerToo ? ": use your finger or your password." : ": use your password."
        return message.hasPrefix("ERROR: PIN locked for ") && message.hasSuffix(tail)
    }
}

/// A private world in which the stack really has pam_unix after the module, as the contract's
/// recommended stack says, and pam_unix has users with known passwords.
///
/// The harness runs inside a private mount namespace (`unshare --mount`, one per transaction)
/// where copies of /etc/passwd and /etc/group and a shadow file of the fixture's own are
/// bind-mounted over the real ones; the host's files are only read (passwd and group), never
/// written, and no host password hash is copied: the shadow file holds only the two test
/// accounts (existing system accounts, as in ModuleFixture) and a locked root.
///   daemon  enrolled (ModuleFixture's finger and PIN 2468), Unix password `daemonPassword`
///   bin     biometric unlock not enabled, Unix password `binPassword`
/// Needs root (mounts) and util-linux's unshare; `available` says whether the tests can run.
final class UnixStackFixture {
    static let daemonPassword = "daemon-Unix-pw-4"
    static let binPassword = "bin-Unix-pw-5"
    static let service = "biotest"

    let module: ModuleFixture
    var etc: String { module.dir + "/etc" }

    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    }

    init() throws {
        module = try ModuleFixture()
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: "/etc/passwd", toPath: etc + "/passwd")
        try FileManager.default.copyItem(atPath: "/etc/group", toPath: etc + "/group")
        let today = Int(Date().timeIntervalSince1970) / 86400 - 1   // changed yesterday: not expired
        var shadow = "root:*:\(today):0:99999:7:::\n"
        for (user, password) in [("daemon", Self.daemonPassword), ("bin", Self.binPassword)] {
            let hash = try runProcess("/usr/bin/openssl", ["passwd", "-6", "-stdin"], stdin: password)
            guard hash.status == 0, hash.stdout.hasPrefix("$6$") else { throw CocoaError(.fileWriteUnknown) }
            shadow += "\(user):\(hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)):\(today):0:99999:7:::\n"
        }
        try shadow.write(toFile: etc + "/shadow", atomically: false, encoding: .utf8)
        chmod(etc + "/shadow", 0o600)
        try stack()
    }

    /// The recommended stack for `name`, the module getting ModuleFixture's defaults, then `arguments`.
    func stack(_ arguments: String = "", name: String = UnixStackFixture.service) throws {
        try module.service(arguments, name: name, after: """
            auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
            auth requisite pam_deny.so
            auth required pam_permit.so
            """, control: ModuleFixture.recommendedControl)
    }

    /// The harness's command in a private mount namespace with the fixture's passwd, group and shadow.
    var wrapper: [String] {
        ["/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
         #"mount --bind "$0/passwd" /etc/passwd && mount --bind "$0/group" /etc/group && mount --bind "$0/shadow" /etc/shadow && exec "$@""#,
         etc]
    }

    /// One transaction through the recommended stack. pam_unix's "Password: " always gets
    /// `unixAnswer` when given (whether or not the module asked first); the module's prompts take
    /// `answers` in order.
    func authenticate(_ user: String = ModuleFixture.enrolledUser, answers: [String] = [], unixAnswer: String? = nil,
                      touches: [SimCommand] = [], extra: [String] = [], environment: [String: String] = [:]) throws -> Transaction {
        var extra = extra
        if let unixAnswer { extra += ["--answer-prompt", ContractText.unixPrompt + "=" + unixAnswer] }
        return try module.authenticate(user, service: Self.service, answers: answers, touches: touches, extra: extra,
                                       environment: environment, wrapper: wrapper)
    }
}
