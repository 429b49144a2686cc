import BiounlockSystem
import CSQLite
import BiounlockCore

/// The CLI's and biounlockd's path through the store: reading every row, enrolment, settings,
/// the passcode, and the audit log's queries.
extension Store {
    public func templates(user: String) throws(StoreFailure) -> [Template] {
        try requireCurrentSchema()
        return try connection.prepare("""
            SELECT finger, sensor, data, driver, device, created FROM templates WHERE user = ? ORDER BY created, finger
            """).bind([.text(user)]).rows { r -> Template? in
            // Rows that do not parse are skipped, never trusted.
            guard let finger = r.text(0).flatMap(Finger.init(name:)),
                  let sensor = r.text(1).flatMap(SensorKind.init(rawValue:)),
                  let data = r.blob(2), !data.isEmpty else { return nil }
            return Template(finger: finger, sensor: sensor, data: data, driver: r.text(3) ?? "",
                            device: r.text(4) ?? "", created: r.int(5) ?? 0)
        }
    }

    /// Every user with a row, sorted by name.
    public func userNames() throws(StoreFailure) -> [String] {
        try requireCurrentSchema()
        return try connection.prepare("SELECT name FROM users ORDER BY name").rows { $0.text(0) }
    }

    /// Every user's record, by name (`biounlock list` and `status`, doctor's account-binding
    /// checks), as one snapshot: read in one transaction, so a write committed meanwhile shows
    /// in all of them or in none.
    public func allUsers() throws(StoreFailure) -> [UserRecord] {
        try reading { () throws(StoreFailure) -> [UserRecord] in
            var out: [UserRecord] = []
            for name in try userNames() {
                if let record = try loadUser(name) { out.append(record) }
            }
            return out
        }
    }

    /// Makes `user`'s row if there is none, bound to the account the name has now (rows made by
    /// counting alone, which only tests do, stay unbound and so enable nothing).
    func ensureUser(_ user: String, at time: Int64) throws(StoreFailure) {
        let uid = lookupAccount(user).map { SQLValue.int(Int64($0.uid)) } ?? .null
        try connection.prepare("INSERT OR IGNORE INTO users(name, uid, created) VALUES (?, ?, ?)").bind([.text(user), uid, .int(time)]).run()
    }

    /// `biounlock forget`: removes `user`'s row with its overrides and templates (the audit log
    /// keeps its history). Returns whether there was one.
    @discardableResult
    public func forget(user: String) throws(StoreFailure) -> Bool {
        try write { () throws(StoreFailure) -> Bool in
            try connection.prepare("DELETE FROM service_overrides WHERE user = ?").bind([.text(user)]).run()
            try connection.prepare("DELETE FROM templates WHERE user = ?").bind([.text(user)]).run()
            try connection.prepare("DELETE FROM users WHERE name = ?").bind([.text(user)]).run()
            return connection.changes > 0
        }
    }

    /// Turns biometric unlock on or off for `user`, or for one PAM service when `service` is set.
    public func setEnabled(_ enabled: Bool, user: String, service: String?, at time: Int64) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            if let service {
                try connection.prepare("""
                    INSERT INTO service_overrides(user, service, enabled) VALUES (?, ?, ?)
                    ON CONFLICT(user, service) DO UPDATE SET enabled = excluded.enabled
                    """).bind([.text(user), .text(service), .int(enabled ? 1 : 0)]).run()
            } else {
                try connection.prepare("UPDATE users SET enabled = ? WHERE name = ?").bind([.int(enabled ? 1 : 0), .text(user)]).run()
            }
        }
    }

    /// Turns biometric unlock on or off for each of `services` (a ServiceGroup's), as one
    /// override each, in one transaction: the module never sees half a group.
    public func setEnabled(_ enabled: Bool, user: String, services: [String], at time: Int64) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            for service in services { try setEnabled(enabled, user: user, service: service, at: time) }
        }
    }

    /// Turns biometric unlock on or off everywhere: the toggle, and no override left (the
    /// settings app's main switch), in one transaction.
    public func setEnabledEverywhere(_ enabled: Bool, user: String, at time: Int64) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try setEnabled(enabled, user: user, service: nil, at: time)
            try connection.prepare("DELETE FROM service_overrides WHERE user = ?").bind([.text(user)]).run()
        }
    }

    /// Stores `template`, replacing the same finger on the same sensor in one transaction.
    public func saveTemplate(_ template: Template, user: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: template.created)
            try connection.prepare("""
                INSERT OR REPLACE INTO templates(user, finger, sensor, driver, device, data, created) VALUES (?, ?, ?, ?, ?, ?, ?)
                """).bind([.text(user), .text(template.finger.name), .text(template.sensor.rawValue), .text(template.driver),
                           .text(template.device), .blob(template.data), .int(template.created)]).run()
            try bumpEnrolmentVersion(user)
        }
    }

    /// Removes one finger (or all when nil); returns how many templates went. The face stays
    /// (`deleteFaceTemplates`, FaceTemplates.swift).
    @discardableResult
    public func deleteTemplates(user: String, finger: Finger?) throws(StoreFailure) -> Int {
        try write { () throws(StoreFailure) -> Int in
            if let finger {
                try connection.prepare("DELETE FROM templates WHERE user = ? AND finger = ?").bind([.text(user), .text(finger.name)]).run()
            } else {
                try connection.prepare("DELETE FROM templates WHERE user = ? AND sensor <> 'face'").bind([.text(user)]).run()
            }
            let removed = connection.changes
            if removed > 0 { try bumpEnrolmentVersion(user) }
            return removed
        }
    }

    /// Records a change of the enrolled set made outside the store (sensor=fprintd: fprintd keeps
    /// the prints, `biounlock enrol`/`unenrol` change them there), so that require_passcode=enrolment
    /// applies as it does to the store's own templates; `fprintdPrints` is the set fprintd holds
    /// afterwards (FprintdPrints' text; nil when it could not be listed: the next look counts as
    /// a change), so that the module does not take this change for another one.
    public func noteEnrolmentChange(user: String, at time: Int64, fprintdPrints: String?) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            try bumpEnrolmentVersion(user)
            try connection.prepare("UPDATE users SET fprintd_prints = ?2 WHERE name = ?1")
                .bind([.text(user), fprintdPrints.map { .text($0) } ?? .null]).run()
        }
    }

    public func noteFprintdPrints(user: String, prints: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("UPDATE users SET fprintd_prints = ?2, enrolment_version = enrolment_version + 1 WHERE name = ?1")
                .bind([.text(user), .text(prints)]).run()
        }
    }

    /// `biounlock enable` under sensor=fprintd: the prints fprintd holds, as the first set
    /// biounlock knows of a user whose prints it never looked at (no enrolment change: the admin
    /// enabling the user vouches for them). Once there is a set, another one is a change
    /// (noteFprintdPrints).
    public func recordFirstFprintdPrints(user: String, prints: String) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try connection.prepare("UPDATE users SET fprintd_prints = ?2 WHERE name = ?1 AND fprintd_prints IS NULL")
                .bind([.text(user), .text(prints)]).run()
        }
    }

    /// Any change of the enrolled set makes the passcode required again (require_passcode=enrolment).
    func bumpEnrolmentVersion(_ user: String) throws(StoreFailure) {
        try connection.prepare("UPDATE users SET enrolment_version = enrolment_version + 1 WHERE name = ?").bind([.text(user)]).run()
    }

    public func setPasscode(_ passcode: StoredPasscode?, user: String, at time: Int64) throws(StoreFailure) {
        try write { () throws(StoreFailure) in
            try ensureUser(user, at: time)
            try connection.prepare("UPDATE users SET passcode_hash = ?, passcode_kind = ?, passcode_failures = 0 WHERE name = ?")
                .bind([passcode.map { .text($0.hash) } ?? .null, passcode.map { .text($0.kind.rawValue) } ?? .null, .text(user)]).run()
        }
    }

    /// The newest audit events first, filtered by user, service and time.
    public func recentEvents(user: String? = nil, service: String? = nil, since: Int64? = nil, limit: Int = 50) throws(StoreFailure) -> [AuditEvent] {
        // NULL parameters switch a filter off; the values are always bound, never spliced in.
        try requireCurrentSchema()
        return try connection.prepare("""
            SELECT time, user, service, tty, rhost, method, outcome, reason FROM events
            WHERE (?2 IS NULL OR user = ?2) AND (?3 IS NULL OR service = ?3) AND (?4 IS NULL OR time >= ?4)
            ORDER BY id DESC LIMIT ?1
            """).bind([.int(limit), user.map { .text($0) } ?? .null, service.map { .text($0) } ?? .null, .optional(since)]).rows { r in
            AuditEvent(time: r.int(0) ?? 0, user: r.text(1) ?? "", service: r.text(2) ?? "", tty: r.text(3) ?? "",
                       rhost: r.text(4) ?? "", method: r.text(5).flatMap(AuthMethod.init(rawValue:)) ?? .none,
                       outcome: r.text(6) ?? "", reason: r.text(7) ?? "")
        }
    }
}
