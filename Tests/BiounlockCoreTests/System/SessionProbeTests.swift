import XCTest
import Foundation
@testable import BiounlockCore

final class SessionProbeTests: XCTestCase {
    func testRemoteDetection() {
        let none: (String) -> String? = { _ in nil }
        XCTAssertNil(SessionProbe.remoteReason(rhost: "", environment: none, logindPath: "/nonexistent", hostname: "box"))
        for local in ["localhost", "LocalHost.LocalDomain", "box", "BOX"] {
            XCTAssertNil(SessionProbe.remoteReason(rhost: local, environment: none, logindPath: "/nonexistent", hostname: "box",
                                                   hostsPath: "/nonexistent"), local)
        }
        // Finding 28.3: a name that merely starts with the host name is another machine.
        for other in ["box.example.org", "Box.Example.Org", "box.attacker.example", "box."] {
            XCTAssertEqual(SessionProbe.remoteReason(rhost: other, environment: none, logindPath: "/x", hostname: "box", hostsPath: "/nonexistent"),
                           "PAM_RHOST=\(other)", other)
        }
        // Addresses come only from network services, and a loopback connection can be a tunnel.
        for address in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            XCTAssertEqual(SessionProbe.remoteReason(rhost: address, environment: none, logindPath: "/x", hostname: "box"), "PAM_RHOST=\(address)")
        }
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "", tty: "ssh", environment: none, logindPath: "/x", hostname: "box"), "PAM_TTY=ssh",
                       "sshd sets PAM_TTY=ssh, whatever the client's address")
        XCTAssertNil(SessionProbe.remoteReason(rhost: "", tty: "/dev/pts/3", environment: none, logindPath: "/x", hostname: "box"))
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "203.0.113.9", environment: none, logindPath: "/x", hostname: "box"), "PAM_RHOST=203.0.113.9")
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "boxer", environment: none, logindPath: "/x", hostname: "box"), "PAM_RHOST=boxer")
        XCTAssertNil(SessionProbe.remoteReason(rhost: "BOX", environment: none, logindPath: "/x", hostname: "Box"), "either side's case")
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "ÉTÉ", environment: none, logindPath: "/x", hostname: "été"), "PAM_RHOST=??T??",
                       "only ASCII letters fold: a name that differs in another script's case is not this machine (the finger is skipped)")
        XCTAssertEqual(SessionProbe.asciiLowercased("AbC-é-Z9"), "abc-é-z9")
        XCTAssertEqual(SessionProbe.remoteReason(rhost: "", environment: { $0 == "SSH_CLIENT" ? "203.0.113.9 5 22" : nil },
                                                 logindPath: "/x", hostname: "box"), "SSH_CLIENT")
    }

    /// The names root's /etc/hosts gives to a loopback address are this machine (sudo's `fqdn`
    /// option puts the host's full name in PAM_RHOST); no other name of the file is, nor a file
    /// anyone but root may write.
    func testHostsFileLoopbackNamesAreLocal() throws {
        let dir = NSTemporaryDirectory() + "probe-hosts-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let hosts = dir + "/hosts"
        try """
            127.0.0.1\tlocalhost
            127.0.1.1\tbox.example.org  box   # the installer's line
            ::1     ip6-box.example.org
            203.0.113.7 gateway.example.org
            # 127.0.0.1 commented.example.org
            127.0.0.256x bad.example.org
            """.write(toFile: hosts, atomically: true, encoding: .utf8)
        chmod(hosts, 0o644)
        let none: (String) -> String? = { _ in nil }
        func reason(_ rhost: String) -> String? {
            SessionProbe.remoteReason(rhost: rhost, environment: none, logindPath: "/x", hostname: "box", hostsPath: hosts)
        }
        for local in ["box.example.org", "BOX.Example.ORG", "ip6-box.example.org"] { XCTAssertNil(reason(local), local) }
        for other in ["gateway.example.org", "commented.example.org", "bad.example.org", "box.example", "box.example.org.attacker.example"] {
            XCTAssertEqual(reason(other), "PAM_RHOST=\(other)", other)
        }
        chmod(hosts, 0o666)
        XCTAssertEqual(reason("box.example.org"), "PAM_RHOST=box.example.org", "a hosts file others may write names nothing")
    }

    /// Finding 28.1: the logind session is this process's audit session, never XDG_SESSION_ID.
    func testLogindSessionIsTheAuditSessionNeverTheEnvironment() throws {
        let dir = NSTemporaryDirectory() + "probe-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir + "/sessions", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/lid/LID0", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "UID=1000\nREMOTE=1\n".write(toFile: dir + "/sessions/7", atomically: true, encoding: .utf8)
        try "UID=1000\nREMOTE=0\n".write(toFile: dir + "/sessions/8", atomically: true, encoding: .utf8)
        let sessionID = dir + "/sessionid"
        func reason(audit: String, xdg: String) throws -> String? {
            try audit.write(toFile: sessionID, atomically: true, encoding: .utf8)
            return SessionProbe.remoteReason(rhost: "", environment: { $0 == "XDG_SESSION_ID" ? xdg : nil }, logindPath: dir + "/sessions",
                                             hostname: nil, sessionIDPath: sessionID)
        }
        XCTAssertEqual(try reason(audit: "7", xdg: "8"), "logind session 7 is remote", "XDG_SESSION_ID naming a local session changes nothing")
        XCTAssertNil(try reason(audit: "8", xdg: "7"), "nor one naming a remote session: the audit session decides")
        XCTAssertNil(try reason(audit: "4294967295", xdg: "7"), "no audit session: no logind session is read")
        XCTAssertNil(try reason(audit: "../sessions/7", xdg: ""), "ids that are not plain names are never used as paths")
        XCTAssertEqual(try reason(audit: "7\n", xdg: ""), "logind session 7 is remote")

        XCTAssertFalse(SessionProbe.lidClosed(at: dir + "/lid"))
        try "state:      open\n".write(toFile: dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        XCTAssertFalse(SessionProbe.lidClosed(at: dir + "/lid"))
        try "state:      closed\n".write(toFile: dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        XCTAssertTrue(SessionProbe.lidClosed(at: dir + "/lid"))
        XCTAssertFalse(SessionProbe.lidClosed(at: dir + "/absent"))
        XCTAssertNotNil(SessionProbe.bootID())
    }

    /// The byte search the lid check uses agrees with the stdlib's String.contains.
    func testContainsAgreesWithTheStandardLibrary() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = ["c", "l", "o", "s", "e", "d", " ", "\n", "é", "\u{0301}", "🙂", ":"]
        for _ in 0..<5000 {
            let text = (0..<Int.random(in: 0...14, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "" }.joined()
            let word = (0..<Int.random(in: 1...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "" }.joined()
            // Byte equality, not canonical equivalence: differs from String.contains only where
            // a combining mark follows (never in a kernel's "state: closed").
            if word.unicodeScalars.contains(where: { $0.value == 0x301 }) || text.unicodeScalars.contains(where: { $0.value == 0x301 }) { continue }
            XCTAssertEqual(SessionProbe.contains(text, word), text.contains(word), "\(text.debugDescription) \(word.debugDescription)")
        }
        XCTAssertTrue(SessionProbe.contains("state:      closed\n", "closed"))
        XCTAssertFalse(SessionProbe.contains("clos", "closed"))
        XCTAssertFalse(SessionProbe.contains("", "closed"))
    }
}
