import BiounlockCore
import BiounlockSystem
import BiounlockFaceProtocol
import BiounlockSensors
import BiounlockStore

/// `--face` on `enrol` and `unenrol` (issue 34): the face through biounlock-face, stored in the
/// templates table as the finger's prints are (Store's FaceTemplates.swift).
enum FaceCommands {
    /// Frames one enrolment takes (descriptors kept; a verify compares with each).
    static let enrolFrames = 5

    static func enrol(_ context: Context, options: Options, store: Store, user: String, seconds: Int) throws -> Int32 {
        if !options.face {
            Output.warning(L("face=off in the configuration: the face is enrolled but not used until face=on"))
        }
        let camera: FaceCamera
        switch FaceCamera.open(options, diagnostics: .stderr) {
        case .success(let c): camera = c
        case .failure(let why): throw CommandFailure(L("camera not available: {reason}", ["reason": "\(why)"]))
        }
        defer { camera.close() }
        let info = camera.camera
        if let info, !info.greyscale {
            Output.warning(L("{camera} is a colour camera (face_allow_rgb=yes): a printed photo may pass for a face", ["camera": info.card]))
        }
        Output.progress(L("Enrolling the face of {user} with {camera}: look at the camera ({count} frames).",
                          ["user": user, "camera": info.map { "\($0.card) (\($0.path))" } ?? "?", "count": String(enrolFrames)]))
        let result = camera.enrol(frames: enrolFrames, threshold: options.faceThresholdMilli,
                                  deadline: .after(milliseconds: Int64(seconds) * 1000)) { event in
            switch event {
            case .enrolFrame(let done, let total): Output.progress(L("frame {done}/{total}", ["done": String(done), "total": String(total)]))
            case .enrolRetry(.noFace): Output.progress(L("No face in view: look at the camera."))
            case .enrolRetry(.dark): Output.progress(L("The frames are dark: is the camera covered, or its infrared light off?"))
            case .enrolRetry(.otherFace): Output.progress(L("Another face, or more than one: only the person enrolling should be in view."))
            case .enrolRetry(.stalled): Output.progress(L("The camera gives no frames."))
            case .enrolRetry: Output.progress(L("A frame could not be used."))
            default: break
            }
        }
        let descriptors: [FaceDescriptor]
        switch result {
        case .success(let d): descriptors = d
        case .failure(let why): throw CommandFailure(L("enrolment failed: {reason}; nothing was stored", ["reason": "\(why)"]))
        }
        let template = FaceTemplate(data: FaceTemplateData.encode(descriptors),
                                    camera: info.map { "\($0.driver):\($0.path)" } ?? "", created: context.now())
        try storeCall(L("cannot store the template")) { () throws(StoreFailure) in try store.saveFaceTemplate(template, user: user) }
        Output.line(L("Enrolled the face of {user}.", ["user": user]))
        return 0
    }

    static func unenrol(store: Store, user: String) throws -> Int32 {
        let removed = try storeCall(L("cannot remove the template")) { () throws(StoreFailure) in try store.deleteFaceTemplates(user: user) }
        guard removed else { throw CommandFailure(L("no face is enrolled for {user}", ["user": user])) }
        Output.line(L("Removed the face of {user}.", ["user": user]))
        return 0
    }
}
