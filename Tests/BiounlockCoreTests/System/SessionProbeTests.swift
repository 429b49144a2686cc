import XCTest
import Foundation
import BiounlockSystem
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

    /// Without a logind record of the session, the processes say whether it came over SSH: an
    /// sshd (or OpenSSH 9.8's sshd-session) above this process, or an sshd in its audit session
    /// (a tmux server started from an SSH login, whose parent is init). A fake /proc (proc_path).
    func testWithoutLogindAnSSHDAboveOrInTheSessionMakesItRemote() throws {
        let dir = NSTemporaryDirectory() + "probe-proc-\(getpid())"
        let proc = dir + "/proc"
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir + "/sessions", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func process(_ pid: String, _ stat: String, session: String = "4294967295") throws {
            try FileManager.default.createDirectory(atPath: proc + "/" + pid, withIntermediateDirectories: true)
            try stat.write(toFile: proc + "/" + pid + "/stat", atomically: true, encoding: .utf8)
            try session.write(toFile: proc + "/" + pid + "/sessionid", atomically: true, encoding: .utf8)
        }
        let sessionID = dir + "/sessionid"
        func reason(audit: String = "4294967295") throws -> String? {
            try audit.write(toFile: sessionID, atomically: true, encoding: .utf8)
            return SessionProbe.remoteReason(rhost: "", tty: "/dev/pts/3", environment: { _ in nil }, logindPath: dir + "/sessions",
                                             hostname: "box", sessionIDPath: sessionID, procPath: proc)
        }
        // sudo <- bash <- sshd: alice@pts/0 (the name stays sshd) <- sshd [priv] <- sshd <- init
        try process("self", "4242 (sudo) S 4100 4242 4100 34816 4242 4194560 118 0 0 0\n")
        try process("4100", "4100 (bash) S 4090 4100 4100 34816\n")
        try process("4090", "4090 (sshd) S 4080 4080 4080 0\n")
        XCTAssertEqual(try reason(), "an ancestor process is sshd (pid 4090)")
        try process("4090", "4090 (sshd-session) S 4080 4080 4080 0\n")
        XCTAssertEqual(try reason(), "an ancestor process is sshd (pid 4090)", "OpenSSH 9.8 on")
        // A local terminal: no sshd up to init.
        try process("4090", "4090 (gnome-terminal-) S 1 4080 4080 0\n")
        XCTAssertNil(try reason())
        // A name with spaces and parentheses is read up to the last ")".
        try process("4100", "4100 (a) (sshd) S 4090 4100\n")
        XCTAssertNil(try reason(), "a process named 'a) (sshd' is not sshd")
        try process("4100", "4100 (bash) S 4090 4100\n")
        // A loop in a damaged tree ends (64 levels at most); an unreadable stat ends the walk.
        try process("4090", "4090 (bash) S 4100 4080 4080 0\n")
        XCTAssertNil(try reason())
        try process("4090", "garbage")
        XCTAssertNil(try reason())
        try process("4090", "4090 (gnome-terminal-) S 1 4080 4080 0\n")

        // A tmux server started from an SSH login (its parent is init by then) while the login
        // lasts: an sshd process in the same audit session.
        try process("self", "4242 (sudo) S 4100 4242 4100 34816 4242\n", session: "7")
        try process("3000", "3000 (tmux: server) S 1 3000 3000 0\n", session: "7")
        try process("2990", "2990 (sshd) S 2980 2980 2980 0\n", session: "9")
        XCTAssertNil(try reason(audit: "7"), "an sshd of another audit session is another login")
        try process("2991", "2991 (sshd) S 2980 2980 2980 0\n", session: "7")
        XCTAssertEqual(try reason(audit: "7"), "sshd (pid 2991) holds audit session 7")
        XCTAssertNil(try reason(), "without an audit session there is no session to look for")
        // logind's record, when there is one, decides -- both ways.
        try "UID=1000\nREMOTE=0\n".write(toFile: dir + "/sessions/7", atomically: true, encoding: .utf8)
        XCTAssertNil(try reason(audit: "7"), "logind registered the session as local")
        try "UID=1000\nREMOTE=1\n".write(toFile: dir + "/sessions/7", atomically: true, encoding: .utf8)
        XCTAssertEqual(try reason(audit: "7"), "logind session 7 is remote")

        // The default: no processes are read unless asked (Options.procPath is /proc).
        XCTAssertNil(SessionProbe.remoteReason(rhost: "", environment: { _ in nil }, logindPath: "/x", hostname: "box"))
        XCTAssertEqual(Options().procPath, "/proc")
    }

    /// Issue 33: a closed lid skips the built-in reader, not one plugged into a removable USB port
    /// (a docked laptop). A fake sysfs tree (lid_usb_path) and id list (lid_reader_ids), as
    /// lid_path fakes /proc/acpi.
    func testAClosedLidDoesNotSkipAReaderOnARemovableUSBPort() throws {
        let dir = NSTemporaryDirectory() + "lid-usb-\(getpid())"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/lid/LID0", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir + "/usb", withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: dir) }
        try "state:      closed\n".write(toFile: dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        // The shape of libfprint's 60-autosuspend-libfprint-2.hwdb.
        try """
            # This file has been generated using fprint-list-udev-hwdb with all drivers enabled

            # Supported by libfprint driver goodixmoc
            usb:v27C6p609C*
            usb:v27C6p60A2*
             ID_AUTOSUSPEND=1
             ID_PERSIST=0

            # Known unsupported devices
            usb:v138Ap0091*
             ID_AUTOSUSPEND=1

            """.write(toFile: dir + "/hwdb", atomically: true, encoding: .utf8)
        func device(_ name: String, _ vendor: String, _ product: String, removable: String) throws {
            try fm.createDirectory(atPath: dir + "/usb/" + name, withIntermediateDirectories: true)
            try (vendor + "\n").write(toFile: dir + "/usb/\(name)/idVendor", atomically: true, encoding: .utf8)
            try (product + "\n").write(toFile: dir + "/usb/\(name)/idProduct", atomically: true, encoding: .utf8)
            try (removable + "\n").write(toFile: dir + "/usb/\(name)/removable", atomically: true, encoding: .utf8)
        }
        var options = Options()
        options.lidPath = dir + "/lid"
        options.lidUSBPath = dir + "/usb"
        options.lidReaderIDsPath = dir + "/hwdb"
        func lidSkips() -> Bool { SessionProbe.facts(rhost: "", environment: { _ in nil }, options: options, hostname: "box").lidClosed }

        XCTAssertTrue(lidSkips(), "no USB device: the reader is the built-in one")
        try device("usb1", "1d6b", "0002", removable: "unknown")                 // a root hub
        try device("1-1", "046d", "c077", removable: "removable")               // a mouse, external
        try device("1-1:1.0", "27c6", "609c", removable: "removable")           // an interface, not a device
        try device("1-2", "138a", "0091", removable: "removable")               // a reader libfprint does not support
        XCTAssertTrue(lidSkips(), "no supported reader on a removable port")
        try device("1-7", "27c6", "609c", removable: "fixed")                   // the built-in reader
        XCTAssertTrue(lidSkips(), "the built-in reader (fixed) is under the lid")
        try "unknown\n".write(toFile: dir + "/usb/1-7/removable", atomically: true, encoding: .utf8)
        XCTAssertTrue(lidSkips(), "a port the firmware does not describe counts as built in")
        XCTAssertNil(SessionProbe.externalReader(usbPath: dir + "/usb", readerIDsPath: dir + "/hwdb"))

        try device("3-1", "27c6", "60A2", removable: "removable")
        XCTAssertFalse(lidSkips(), "a supported reader on a removable port is not under the lid")
        XCTAssertEqual(SessionProbe.externalReader(usbPath: dir + "/usb", readerIDsPath: dir + "/hwdb"), "3-1")
        try fm.removeItem(atPath: dir + "/usb/3-1")

        // Behind a dock's hub: the reader's own port is the hub's (unknown), the hub's is removable.
        try device("4-2", "05e3", "0610", removable: "removable")
        try device("4-2.3", "27c6", "609c", removable: "unknown")
        XCTAssertFalse(lidSkips(), "a reader behind a hub on a removable port is external too")
        try "fixed\n".write(toFile: dir + "/usb/4-2/removable", atomically: true, encoding: .utf8)
        XCTAssertTrue(lidSkips(), "... and not behind a built-in hub")

        options.lidReaderIDsPath = dir + "/absent"
        try "removable\n".write(toFile: dir + "/usb/4-2/removable", atomically: true, encoding: .utf8)
        XCTAssertTrue(lidSkips(), "without libfprint's id list no device is known to be a reader: the lid skips, as before")
        options.lidReaderIDsPath = dir + "/hwdb"
        try "state:      open\n".write(toFile: dir + "/lid/LID0/state", atomically: true, encoding: .utf8)
        XCTAssertFalse(lidSkips())
    }

    func testUSBNamesAndIDLists() {
        for name in ["1-1", "3-1.2", "10-4.1.3"] { XCTAssertTrue(SessionProbe.isUSBDeviceName(name), name) }
        for name in ["usb1", "1-1:1.0", "-1", "1-", "1-1.", "a-1", "1-1/../x", "", String(repeating: "1", count: 40) + "-1"] {
            XCTAssertFalse(SessionProbe.isUSBDeviceName(name), name)
        }
        XCTAssertEqual(SessionProbe.readerIDs(hwdb: "usb:v27C6p609C*\n"), [], "ids before any Supported section are not readers")
        XCTAssertEqual(SessionProbe.readerIDs(hwdb: "# Supported by libfprint driver x\nusb:v27C6p609C*\nusb:vZZZZp0000*\nusb:v1\n"),
                       ["27c6:609c"])
        if let real = FileSystem.readRegularFile("/lib/udev/hwdb.d/60-autosuspend-libfprint-2.hwdb", limit: 64 * 1024) {
            let ids = SessionProbe.readerIDs(hwdb: String(decoding: real, as: UTF8.self))
            XCTAssertGreaterThan(ids.count, 100, "Debian's libfprint lists its readers")
            XCTAssertTrue(ids.contains("08ff:1600"), "aes1610, the first of them")
        }
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
