/// The store's schema, as an ordered list of migrations. `PRAGMA user_version` holds how many
/// have been applied; each runs in its own transaction with the version bump, so a crash
/// (or kill -9) mid-migration leaves the previous version whole.
///
/// Never edit a shipped migration: append a new one.
enum Schema {
    static let migrations: [String] = [
        // 1: users, their per-service overrides, enrolled templates and the audit log.
        """
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
        """,
        // 2: lockout clocks and the passcode-required rules (boot, enrolment change, age).
        """
        ALTER TABLE users ADD COLUMN bio_failure_at INTEGER;
        ALTER TABLE users ADD COLUMN passcode_failure_at INTEGER;
        ALTER TABLE users ADD COLUMN passcode_success_at INTEGER;
        ALTER TABLE users ADD COLUMN passcode_boot_id TEXT;
        ALTER TABLE users ADD COLUMN passcode_enrolment_version INTEGER;
        ALTER TABLE users ADD COLUMN enrolment_version INTEGER NOT NULL DEFAULT 0;
        """,
    ]

    static var currentVersion: Int { migrations.count }
}
