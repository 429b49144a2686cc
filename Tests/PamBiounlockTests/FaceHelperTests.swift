import XCTest
import TestSupport
import Foundation
import BiounlockCore
import BiounlockSensors
import BiounlockFaceProtocol

/// build/biounlock-face against the simulated camera, through its client (FaceCamera): one
/// helper run (one model load) for the whole sequence -- enrol, the same face, another person,
/// no face, dark frames, a stalled camera, hostile frames, an unplugged camera.
final class FaceHelperTests: XCTestCase {
    static let images = buildDirectory + "/face-images"

    func testOneHelperRunThroughEveryCase() throws {
        guard FileManager.default.fileExists(atPath: FaceHelperTests.images + "/astronaut.pgm") else {
            throw XCTSkip("build/face-images is missing: run scripts/face-images build/face-images (scripts/test does)")
        }
        var template = Array("/tmp/bu-face.XXXXXX".utf8CString)
        let dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socketPath = dir + "/cam"
        var options = Options()
        options.face = true
        options.faceHelper = buildDirectory + "/biounlock-face"
        options.faceModels = buildDirectory + "/face-models"
        options.faceSimSocket = socketPath

        let camera: FaceCamera
        switch FaceCamera.open(options, diagnostics: .stderr) {
        case .success(let c): camera = c
        case .failure(let why): return XCTFail("the helper did not open the simulated camera: \(why)")
        }
        defer { camera.close() }
        XCTAssertEqual(camera.camera?.driver, "simulated")
        XCTAssertEqual(camera.camera?.greyscale, true)

        /// Sends `commands` from another thread (each is taken at the camera's next frame).
        func show(_ commands: [String]) -> DispatchGroup {
            let group = DispatchGroup()
            group.enter()
            Thread.detachNewThread {
                for c in commands { _ = SimulatedFinger.send(bytes: Array(c.utf8), to: socketPath, waitMilliseconds: 8000) }
                group.leave()
            }
            return group
        }
        func frame(_ name: String) -> String { "FRAME \(FaceHelperTests.images)/\(name)" }
        /// Leaves `commands` in the camera's listen backlog, in order, without waiting for them to
        /// be taken: the camera takes them before its next frame, so the verify that follows
        /// never sees the scene before them.
        func post(_ commands: [String]) {
            for c in commands {
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { raw in
                    for (i, b) in socketPath.utf8.enumerated() { raw[i] = b }
                }
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
                XCTAssertEqual(connected, 0, "connect \(socketPath)")
                _ = Array(c.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
        }

        // Enrolment: three frames of the astronaut, after frames without a face (counted as
        // retries). The astronaut is shown once the helper has said it saw no face -- not after a
        // fixed time: on a loaded machine the helper's first frame came after such a pause, and
        // the retry never happened (a CI run here).
        let shown = show([frame("camera.pgm")])
        var events: [FaceResponse] = []
        var face: DispatchGroup?
        let enrolled = camera.enrol(frames: 3, threshold: 400, deadline: .after(milliseconds: 20_000)) { event in
            events.append(event)
            if event == .enrolRetry(.noFace), face == nil { face = show([frame("astronaut.pgm")]) }
        }
        shown.wait()
        face?.wait()
        let faces = try enrolled.get()
        XCTAssertEqual(faces.count, 3)
        XCTAssertTrue(events.contains(.enrolRetry(.noFace)), "\(events)")
        XCTAssertEqual(events.last, .enrolFrame(done: 3, total: 3))

        func verify(_ commands: [String], seconds: Int64) -> FaceCamera.Verdict {
            post(commands)
            return camera.verify(against: faces, threshold: 400, deadline: .after(milliseconds: seconds * 1000), interrupt: nil, waitUntil: nil)
        }
        // The same face, darker: a match.
        XCTAssertEqual(verify([frame("astronaut-dark.pgm")], seconds: 10), .matched)
        // Another person: not recognised once ten frames saw that face.
        XCTAssertEqual(verify([frame("lfw-001.pgm")], seconds: 10), .notRecognised)
        // No face, then dark frames: no decision by the deadline, and why.
        XCTAssertEqual(verify([frame("camera.pgm")], seconds: 1), .timedOut(.noFace))
        XCTAssertEqual(verify(["DARK"], seconds: 1), .timedOut(.dark))
        // Hostile frames are refused frame by frame; the helper goes on and still sees the face.
        for bad in ["empty.pgm", "huge.pgm", "wrong-format.pgm", "truncated.pgm"] {
            XCTAssertEqual(verify([frame(bad)], seconds: 1), .timedOut(.badFrame), bad)
        }
        // A camera that stalls: no frame, no decision; once it gives frames again, the face.
        XCTAssertEqual(verify(["SLEEP 3000"], seconds: 1), .timedOut(.stalled))
        XCTAssertEqual(verify([frame("astronaut.pgm")], seconds: 10), .matched)
        // Unplugged: unavailable, never a match.
        post(["UNPLUG"])
        let gone = camera.verify(against: faces, threshold: 400, deadline: .after(milliseconds: 5000), interrupt: nil, waitUntil: nil)
        guard case .unavailable = gone else { return XCTFail("an unplugged camera gave \(gone)") }
    }

    /// A helper refuses models that are not root-owned and safe (dlib trusts what it reads).
    func testModelsInAnUnsafeDirectoryAreRefused() throws {
        var template = Array("/tmp/bu-face.XXXXXX".utf8CString)
        let dir = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/models", withIntermediateDirectories: false)
        chmod(dir + "/models", 0o777)
        var options = Options()
        options.faceHelper = buildDirectory + "/biounlock-face"
        options.faceModels = dir + "/models"
        options.faceSimSocket = dir + "/cam"
        guard case .failure(let why) = FaceCamera.open(options, diagnostics: .stderr) else { return XCTFail("opened with unsafe models") }
        XCTAssertTrue(why.description.contains("face models refused"), why.description)
    }
}
