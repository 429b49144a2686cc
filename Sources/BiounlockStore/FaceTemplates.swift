import BiounlockCore

/// The enrolled face, in the templates table as the finger's prints are (no new table, no
/// migration): `sensor = 'face'`, `finger = 'face'`, `data` the descriptors (FaceTemplateData),
/// `device` the camera it was taken with. Modules from before the face skip such rows (neither
/// `face` is a finger nor a sensor they know), so a downgrade cannot misread them. One face per
/// user: enrolling again replaces it, and bumps the enrolment version as a finger does
/// (require_passcode=enrolment).
extension Store {
    static let faceSensor = "face"

    public func faceTemplates(user: String) throws(StoreFailure) -> [FaceTemplate] {
        try requireCurrentSchema()
        return try connection.prepare("""
            SELECT data, device, created FROM templates WHERE user = ? AND sensor = 'face' AND finger = 'face'
            """).bind([.text(user)]).rows { r -> FaceTemplate? in
            guard let data = r.blob(0), !data.isEmpty else { return nil }
            return FaceTemplate(data: data, camera: r.text(1) ?? "", created: r.int(2) ?? 0)
        }
    }

    public func saveFaceTemplate(_ template: FaceTemplate, user: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: template.created)
            try connection.prepare("""
                INSERT OR REPLACE INTO templates(user, finger, sensor, driver, device, data, created) VALUES (?, 'face', 'face', '', ?, ?, ?)
                """).bind([.text(user), .text(template.camera), .blob(template.data), .int(template.created)]).run()
            try bumpEnrolmentVersion(user)
        }
    }

    /// Removes the user's face; returns whether there was one.
    @discardableResult
    public func deleteFaceTemplates(user: String) throws(StoreFailure) -> Bool {
        try write { () throws(StoreFailure) -> Bool in
            try connection.prepare("DELETE FROM templates WHERE user = ? AND sensor = 'face'").bind([.text(user)]).run()
            let removed = connection.changes > 0
            if removed { try bumpEnrolmentVersion(user) }
            return removed
        }
    }
}
