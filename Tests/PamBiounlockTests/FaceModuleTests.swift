import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockStore
import BiounlockSensors
import BiounlockFaceProtocol

/// The face through real libpam (pam-harness loading build/pam_biounlock.so), with the real
/// helper (build/biounlock-face: dlib, the models in build/face-models) reading the simulated
/// camera (face_sim_socket), fed scikit-image's sample faces (scripts/face-images). The harness
/// has no terminal: these are the dialog path (face_dialog_services names the service); the
/// terminal path is Tests/EndToEnd/face-sudo.sh (real sudo under expect).
///
/// The enrolled user `daemon` has a finger (simulated), a PIN and the face of skimage's astronaut.
final class FaceModuleTests: ModuleTestCase {
    static let images = buildDirectory + "/face-images"
    static let models = buildDirectory + "/face-models"
    /// The astronaut's descriptor, computed once (one model load) for the whole class.
    static let astronaut: [UInt8] = {
        guard let result = try? runProcess(buildDirectory + "/biounlock-face", ["--describe", models, images + "/astronaut.pgm"], timeout: 60),
              let line = result.stdout.split(separator: "\n").first else { return [] }
        let words = line.split(separator: " ")
        guard words.count == 131, words[1] == "face" else { return [] }
        guard let d = FaceDescriptor(words[3...].compactMap { Float(String($0)) }) else { return [] }
        return FaceTemplateData.encode([d])
    }()

    var camera: String { fixture.dir + "/cam" }

    override func prepare() throws {
        for f in ["astronaut.pgm", "astronaut-dark.pgm", "lfw-001.pgm", "camera.pgm"] {
            guard FileManager.default.fileExists(atPath: FaceModuleTests.images + "/" + f) else {
                throw XCTSkip("build/face-images is missing: run scripts/face-images build/face-images (scripts/test does)")
            }
        }
        XCTAssertFalse(FaceModuleTests.astronaut.isEmpty, "biounlock-face --describe found no face in astronaut.pgm")
        try fixture.store.saveFaceTemplate(FaceTemplate(data: FaceModuleTests.astronaut, camera: "simulated", created: 1),
                                           user: ModuleFixture.enrolledUser)
        try fixture.service("face=on face_sim_socket=\(camera) face_helper=\(buildDirectory)/biounlock-face face_models=\(FaceModuleTests.models) face_dialog_services=biotest touch_first=15 timeout=20")
    }

    /// Sends camera commands once the camera listens (the helper makes its socket when it opens),
    /// each taken when the camera takes its next frame; then, if given, one touch of the finger.
    func show(_ commands: [String], then touch: SimCommand? = nil) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        let path = camera, finger = fixture.socket
        Thread.detachNewThread {
            for c in commands { _ = SimulatedFinger.send(bytes: Array(c.utf8), to: path, waitMilliseconds: 8000) }
            if let touch { _ = SimulatedFinger.send(touch, to: finger, waitMilliseconds: 8000) }
            group.leave()
        }
        return group
    }

    func frame(_ name: String) -> String { "FRAME \(FaceModuleTests.images)/\(name)" }

    func lastEvent() throws -> AuditEvent? { try fixture.store.recentEvents(limit: 1).first }

    /// The enrolled face in view: success with no key pressed, recorded as a face.
    func testTheEnrolledFaceUnlocks() throws {
        let shown = show([frame("astronaut-dark.pgm")])
        let t = try fixture.authenticate(answers: [])
        shown.wait()
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout + t.raw.stderr)
        XCTAssertEqual(t.messages.first, "INFO: Look at the camera or touch the fingerprint reader to authenticate for biotest")
        XCTAssertEqual(try lastEvent()?.method, .face)
        XCTAssertEqual(try lastEvent()?.reason, "face-matched")
    }

    /// Another person: one failed biometric attempt, the camera stops, and the PIN works at once.
    func testAnotherPersonIsCountedOnceAndThePINStillWorks() throws {
        let shown = show([frame("lfw-001.pgm")])
        let t = try fixture.authenticate(answers: [ModuleFixture.pin])
        shown.wait()
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertTrue(t.messages.contains("ERROR: Face not recognised. 2 tries left."), "\(t.messages)")
        XCTAssertEqual(try lastEvent()?.method, .passcode)
        // The PIN's success cleared the counter; the failure was counted before it (audit: one row).
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.biometricFailures, 0)
    }

    /// Another person and a wrong finger, with max_tries=2: both failed attempts counted, in
    /// whichever order they come, and nobody gets in.
    func testAnotherPersonDoesNotUnlock() throws {
        try fixture.service("face=on face_sim_socket=\(camera) face_helper=\(buildDirectory)/biounlock-face face_models=\(FaceModuleTests.models) face_dialog_services=biotest touch_first=15 timeout=20 max_tries=2")
        let shown = show([frame("lfw-001.pgm")], then: ScenarioTests.wrong)
        let t = try fixture.authenticate(answers: [""])
        shown.wait()
        XCTAssertEqual(t.code, "PAM_AUTHINFO_UNAVAIL", t.raw.stdout)
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.biometricFailures, 2)
        XCTAssertNotEqual(try lastEvent()?.method, .face)
    }

    /// No face (a man seen from the side), then dark frames: nothing counted, the finger still works.
    func testNoFaceAndDarkFramesLeaveTheFinger() throws {
        let shown = show([frame("camera.pgm"), "SLEEP 300", "DARK", "SLEEP 300"], then: ScenarioTests.touch)
        let t = try fixture.authenticate(answers: [""])
        shown.wait()
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(try lastEvent()?.method, .fingerprint)
        XCTAssertEqual(try fixture.store.loadUser(ModuleFixture.enrolledUser)?.biometricFailures, 0)
    }

    /// The camera unplugged, and a camera that stalls: the finger and the PIN are not held up.
    func testUnpluggedAndStalledCamerasHoldNothingUp() throws {
        var shown = show(["UNPLUG"], then: ScenarioTests.touch)
        var t = try fixture.authenticate(answers: [""])
        shown.wait()
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(try lastEvent()?.method, .fingerprint)

        shown = show(["SLEEP 60000", "DARK"], then: ScenarioTests.touch)
        t = try fixture.authenticate(answers: [""])
        shown.wait()
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout)
        XCTAssertEqual(try lastEvent()?.method, .fingerprint)
    }

    /// Hostile frames (empty, a header claiming 100000x100000, a PNG, too few pixels) are refused
    /// one by one; the helper survives them and still recognises the face that follows.
    func testHostileFramesAreRefusedAndTheHelperGoesOn() throws {
        let shown = show(["empty.pgm", "huge.pgm", "wrong-format.pgm", "truncated.pgm"].flatMap { [frame($0), "SLEEP 200"] }
                         + [frame("astronaut.pgm")])
        let t = try fixture.authenticate(answers: [])
        shown.wait()
        XCTAssertEqual(t.code, "PAM_SUCCESS", t.raw.stdout + t.raw.stderr)
        XCTAssertEqual(try lastEvent()?.method, .face)
    }

    /// face=off (the default): the camera is never opened, even for a user with a face.
    func testFaceOffNeverOpensTheCamera() throws {
        try fixture.service("face_sim_socket=\(camera) face_helper=\(buildDirectory)/biounlock-face face_models=\(FaceModuleTests.models) face_dialog_services=biotest touch_first=0")
        let t = try fixture.authenticate(answers: [ModuleFixture.pin])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages.first, "PROMPT_OFF: PIN or password for biotest, or touch the reader, then press Enter: ")
        XCTAssertFalse(FileManager.default.fileExists(atPath: camera))
    }

    /// A service not in face_dialog_services, without a terminal: no face (a dialog a program
    /// opened must not be approved by a face that happens to be in view).
    func testNoFaceInDialogsTheAdminDidNotName() throws {
        try fixture.service("face=on face_sim_socket=\(camera) face_helper=\(buildDirectory)/biounlock-face face_models=\(FaceModuleTests.models) face_dialog_services=gdm-password touch_first=0")
        let t = try fixture.authenticate(answers: [ModuleFixture.pin])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages.first, "PROMPT_OFF: PIN or password for biotest, or touch the reader, then press Enter: ")
        XCTAssertEqual(try lastEvent()?.method, .passcode)
    }

    /// A remote session: never the face, whatever remote= says.
    func testNoFaceInARemoteSession() throws {
        try fixture.service("face=on remote=allow face_sim_socket=\(camera) face_helper=\(buildDirectory)/biounlock-face face_models=\(FaceModuleTests.models) face_dialog_services=biotest touch_first=0")
        let t = try fixture.authenticate(answers: [ModuleFixture.pin], extra: ["--rhost", "203.0.113.9"])
        XCTAssertEqual(t.code, "PAM_SUCCESS")
        XCTAssertEqual(t.messages.first, "PROMPT_OFF: PIN or password for biotest, or touch the reader, then press Enter: ")
    }
}
