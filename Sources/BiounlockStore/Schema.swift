import BiounlockCore

/// The store's schema, as an ordered list of migrations. `PRAGMA user_version` holds how many
/// have been applied; the pending ones run in one transaction with the version bump, so a crash
/// (or kill -9) mid-migration leaves the previous version whole.
///
/// Never edit a shipped migration: append a new one.
enum Schema {
    /// One step: SQL, then (for what SQL cannot do, such as asking NSS) Swift, in one transaction.
    struct Migration: Sendable {
        typealias Fill = @Sendable (_ connection: Connection, _ lookupAccount: (String) -> Account?) throws(StoreFailure) -> Void
        let sql: String
        let fill: Fill?

        init(_ sql: String, fill: Fill? = nil) {
            self.sql = sql
            self.fill = fill
        }
    }

    static let migrations: [Migration] = [
        // 1: users, their per-service overrides, enrolled templates and the audit log.
        Migration("""
        CREATE TABLE users (
            name              TEXT PRIMARY KEY NOT NULL,
            enabled           INTEGER NOT NULL DEFAULT 0,
            passcode_hash     TEXT,
            passcode_kind     TEXT,
            bio_failures      INTEGER NOT NULL DEFAULT 0,
            passcode_failures INTEGER NOT NULL DEFAULT 0,
            last_success      INTEGER,
            last_failure      INTEGER,
            created           INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE TABLE service_overrides (
            user    TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
            service TEXT NOT NULL,
            enabled INTEGER NOT NULL,
            PRIMARY KEY (user, service)
        ) STRICT;
        CREATE TABLE templates (
            user    TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
            finger  TEXT NOT NULL,
            sensor  TEXT NOT NULL,
            driver  TEXT NOT NULL DEFAULT '',
            device  TEXT NOT NULL DEFAULT '',
            data    BLOB NOT NULL,
            created INTEGER NOT NULL,
            PRIMARY KEY (user, finger, sensor)
        ) STRICT;
        CREATE TABLE events (
            id      INTEGER PRIMARY KEY,
            time    INTEGER NOT NULL,
            user    TEXT NOT NULL,
            service TEXT NOT NULL,
            tty     TEXT NOT NULL,
            rhost   TEXT NOT NULL,
            method  TEXT NOT NULL,
            outcome TEXT NOT NULL,
            reason  TEXT NOT NULL
        ) STRICT;
        CREATE INDEX events_by_time ON events(time);
        CREATE INDEX events_by_user ON events(user, time);
        """),
        // 2: lockout clocks and the passcode-required rules (boot, enrolment change, age).
        Migration("""
        ALTER TABLE users ADD COLUMN bio_failure_at INTEGER;
        ALTER TABLE users ADD COLUMN passcode_failure_at INTEGER;
        ALTER TABLE users ADD COLUMN passcode_success_at INTEGER;
        ALTER TABLE users ADD COLUMN passcode_boot_id TEXT;
        ALTER TABLE users ADD COLUMN passcode_enrolment_version INTEGER;
        ALTER TABLE users ADD COLUMN enrolment_version INTEGER NOT NULL DEFAULT 0;
        """),
        // 3: each user's row belongs to an account (its uid), not to a name that NSS may give to
        // someone else after the account is deleted. Existing rows are bound to the uid their
        // name has now; a name that is no account now stays unbound (NULL), which the module
        // treats like a row of another account: not enabled, until `biounlock forget`.
        Migration("""
        ALTER TABLE users ADD COLUMN uid INTEGER;
        """, fill: { connection, lookupAccount throws(StoreFailure) in
            let names = try connection.prepare("SELECT name FROM users").rows { $0.text(0) }
            for name in names {
                guard let account = lookupAccount(name) else { continue }
                try connection.prepare("UPDATE users SET uid = ? WHERE name = ?").bind([.int(Int64(account.uid)), .text(name)]).run()
            }
        }),
        // 4: the audit log's two indexes go. No query used them (`biounlock log` filters with
        // "?2 IS NULL OR user = ?2", which no index serves, and walks the ids newest first;
        // pruning walks the oldest ids), yet every audit row wrote both: two of the four pages
        // a passcode success adds to the WAL, which the next attempt's sync then writes out.
        Migration("""
        DROP INDEX IF EXISTS events_by_time;
        DROP INDEX IF EXISTS events_by_user;
        """),
        // 5: sensor=fprintd: the prints fprintd held for the user when biounlock last looked
        // (FprintdPrints), so that a change made in GNOME Settings or fprintd-enroll is an
        // enrolment change too. NULL (every existing row): never looked, which counts as a change.
        Migration("""
        ALTER TABLE users ADD COLUMN fprintd_prints TEXT;
        """),
        // 6: the boot in which the Unix password last proved the user (PasswordWitness), which
        // login services (login_services) require once per boot (issue 32). NULL: not this boot.
        Migration("""
        ALTER TABLE users ADD COLUMN password_boot_id TEXT;
        """),
    ]

    static var currentVersion: Int { migrations.count }
}
