import XCTest
import Foundation
@testable import BiounlockAdmin
import BiounlockCore

final class PamStackLintTests: XCTestCase {
    let commonAuth = """
        auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
        auth requisite pam_deny.so
        auth required pam_permit.so
        """
    let good = "auth [success=done ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die] pam_biounlock.so\n@include common-auth\n"

    func lint(_ sudo: String, extra: [String: String] = [:]) -> [PamStackLint.Finding] {
        PamStackLint.lint(files: ["sudo": sudo, "common-auth": commonAuth, "login": "@include common-auth\n"].merging(extra) { $1 })
    }

    func testTheRecommendedStackIsClean() {
        XCTAssertEqual(lint(good), [])
        XCTAssertEqual(lint("auth \\\n  [success=done ignore=ignore authinfo_unavail=ignore user_unknown=ignore module_unknown=ignore default=die] \\\n pam_biounlock.so  # continued\n@include common-auth\n"), [])
        XCTAssertEqual(lint("auth [success=end default=ignore] /lib/x86_64-linux-gnu/security/pam_biounlock.so\nauth include common-auth\n"), [])
    }

    /// Issue 32: the keep_password line (profile biounlock-keyring, at the end of
    /// common-auth) is not the module's line: alone it is not linted as one, and beside the
    /// recommended line it changes nothing.
    func testTheKeepPasswordLineIsNotTheModulesLine() {
        let keep = commonAuth + "\nauth optional pam_biounlock.so keep_password\n"
        XCTAssertEqual(lint("@include common-auth\n", extra: ["common-auth": keep]), [])
        XCTAssertEqual(lint(good, extra: ["common-auth": keep]), [])
    }

    func testRequiredLocksPeopleOut() {
        let f = lint("auth required pam_biounlock.so\n@include common-auth\n")
        XCTAssertEqual(f.map(\.severity), [.problem])
        XCTAssertTrue(f[0].message.contains("'required'"), f[0].message)
        XCTAssertEqual(f[0].line, 1)
        XCTAssertTrue(f[0].fix.contains(PamStackLint.recommendedControl))
    }

    func testBracketWithoutFallbackForUnavailable() {
        let f = lint("auth [success=done default=die] pam_biounlock.so\n@include common-auth\n")
        XCTAssertEqual(f.filter { $0.severity == .problem }.count, 2, "authinfo_unavail and ignore both die")
        XCTAssertEqual(f.filter { $0.severity == .warning }.count, 2, "user_unknown and module_unknown")
    }

    func testSufficientIsAWarning() {
        XCTAssertEqual(lint("auth sufficient pam_biounlock.so\n@include common-auth\n").map(\.severity), [.warning])
    }

    func testOrderAndMissingFallback() {
        let after = lint("@include common-auth\nauth [success=done ignore=ignore authinfo_unavail=ignore module_unknown=ignore default=die] pam_biounlock.so\n")
        XCTAssertTrue(after.contains { $0.message.contains("comes after pam_unix.so (common-auth:1)") }, "\(after)")
        let none = lint("auth [success=done ignore=ignore authinfo_unavail=ignore module_unknown=ignore default=die] pam_biounlock.so\nauth required pam_deny.so\n")
        XCTAssertTrue(none.contains { $0.message.contains("no password module after pam_biounlock.so") }, "\(none)")
    }

    /// The text typed at biounlock's prompt goes on as PAM_AUTHTOK: the password module must take it.
    func testThePasswordModuleMustTakeTheTypedText() {
        let debianDefault = "auth [success=1 default=ignore] pam_unix.so nullok\nauth requisite pam_deny.so\nauth required pam_permit.so\n"
        let f = lint(good, extra: ["common-auth": debianDefault])
        XCTAssertEqual(f.map(\.severity), [.problem], "\(f)")
        XCTAssertTrue(f[0].message.contains("has no try_first_pass"), f[0].message)
        XCTAssertEqual(f[0].file, "common-auth")
        XCTAssertTrue(f[0].fix.hasPrefix("run pam-auth-update --enable biounlock"), "common-auth is pam-auth-update's: \(f[0].fix)")
        XCTAssertEqual(lint(good, extra: ["common-auth": debianDefault.replacingOccurrences(of: "nullok", with: "nullok use_first_pass")]), [])
    }

    /// The fix is the package's pam-auth-update profile before any hand edit, wherever the
    /// profile reaches the stack: alone for a line in common-auth (pam-auth-update rewrites that
    /// file), first for a service that includes common-auth; a stack of its own gets the hand edit.
    func testFixesSuggestPamAuthUpdateBeforeAHandEdit() {
        let inService = lint("auth required pam_biounlock.so\n@include common-auth\n")
        XCTAssertTrue(inService[0].fix.hasPrefix("run pam-auth-update --enable biounlock and remove biounlock from sudo: every service that includes common-auth then gets the recommended line; or, by hand in sudo: use: auth [success=done"), inService[0].fix)
        let inCommon = lint("@include common-auth\n", extra: ["common-auth": "auth sufficient pam_biounlock.so\n" + commonAuth])
        XCTAssertFalse(inCommon.isEmpty)
        for f in inCommon {
            XCTAssertEqual(f.file, "common-auth")
            XCTAssertEqual(f.fix, "run pam-auth-update --enable biounlock (with --force if it reports local changes): it writes the recommended lines into common-auth, where hand edits are lost at its next run")
        }
        let own = lint("auth required pam_biounlock.so\nauth [success=1 default=ignore] pam_unix.so try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n")
        XCTAssertEqual(own.map(\.fix), ["use: auth \(PamStackLint.recommendedControl) pam_biounlock.so"], "pam-auth-update does not reach this stack")
        let order = lint("@include common-auth\nauth [success=done ignore=ignore authinfo_unavail=ignore module_unknown=ignore default=die] pam_biounlock.so\n")
        XCTAssertTrue(order.contains { $0.fix.hasPrefix("run pam-auth-update --enable biounlock and remove biounlock from sudo") && $0.fix.hasSuffix("move the pam_biounlock.so line before pam_unix.so (or before @include common-auth)") }, "\(order)")
    }

    func testFprintdAlsoPresent() {
        let f = lint(good, extra: ["common-auth": "auth [success=2 default=ignore] pam_fprintd.so max-tries=1\n" + commonAuth])
        XCTAssertTrue(f.contains { $0.severity == .warning && $0.message.contains("pam_fprintd.so is also in the auth stack") && $0.file == "common-auth" }, "\(f)")
    }

    /// The examples the project ships are what doctor recommends.
    func testTheShippedExamplesAreClean() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("pam.d")
        var files: [String: String] = [:]
        for name in ["sudo", "su", "login", "xscreensaver", "i3lock", "swaylock"] {
            files[name] = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
        }
        XCTAssertEqual(PamStackLint.lint(files: files), [])
    }

    func testServicesWithoutBiounlockAndIncludeLoopsAreFine() {
        XCTAssertEqual(PamStackLint.lint(files: ["a": "@include b\n", "b": "@include a\n"]), [])
    }

    func testGreeterFingerprintStacks() {
        let shipped = "auth requisite pam_nologin.so\nauth [success=ok default=die] pam_biounlock.so sensor=fprintd policy=biometrics touch_first=120\nauth optional pam_gnome_keyring.so\n"
        for service in ["gdm-fingerprint", "kde-fingerprint"] {
            XCTAssertEqual(PamStackLint.lint(files: [service: shipped]), [], "\(service): no password module is wanted there")
            let required = PamStackLint.lint(files: [service: "auth required pam_biounlock.so sensor=fprintd policy=biometrics touch_first=120\nauth optional pam_gnome_keyring.so\n"])
            XCTAssertEqual(required.map(\.severity), [.problem], "\(required)")
            XCTAssertTrue(required[0].message.contains("an optional module's success can then unlock without a finger"), required[0].message)
            let lenient = PamStackLint.lint(files: [service: "auth \(PamStackLint.recommendedControl) pam_biounlock.so sensor=fprintd policy=biometrics touch_first=120\n"])
            for code in ["ignore", "authinfo_unavail", "maxtries", "user_unknown", "module_unknown"] {
                XCTAssertTrue(lenient.contains { $0.severity == .problem && $0.message.contains("\(code)=ignore in a fingerprint-only stack") },
                              "\(code): \(lenient)")
            }
            let both = PamStackLint.lint(files: [service: "auth required pam_fprintd.so\nauth [success=ok default=die] pam_biounlock.so sensor=libfprint\n"])
            XCTAssertEqual(both.filter { $0.severity == .warning }.count, 2, "sensor=libfprint, pam_fprintd too: \(both)")
            // In fingerprint_services (the default names both) the module is the reader alone by
            // itself: a line without policy=biometrics and touch_first is right as it is.
            XCTAssertEqual(PamStackLint.lint(files: [service: "auth [success=ok default=die] pam_biounlock.so sensor=fprintd\n"]), [])
            // fingerprint_services=none: the line must say so itself.
            let bare = PamStackLint.lint(files: [service: "auth [success=ok default=die] pam_biounlock.so sensor=fprintd\n"], fingerprintServices: [])
            XCTAssertEqual(bare.map(\.severity), [.warning, .warning], "no policy=biometrics, touch_first: \(bare)")
            let asks = PamStackLint.lint(files: [service: "auth [success=ok default=die] pam_biounlock.so sensor=fprintd policy=biometrics timeout=20 touch_first=10\n"],
                                         fingerprintServices: [])
            XCTAssertEqual(asks.map(\.severity), [.warning])
            XCTAssertTrue(asks[0].message.contains("touch_first is shorter than the timeout"), asks[0].message)
            XCTAssertTrue(both.contains { $0.message.contains("pam_fprintd.so and pam_biounlock.so are both in this stack") })
        }
    }
}
