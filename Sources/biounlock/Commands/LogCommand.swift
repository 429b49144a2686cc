import BiounlockCore
import BiounlockAdmin
import BiounlockStore

/// `biounlock log [--user U] [--service S] [--since 2h|2026-11-01] [--limit N]`: the audit log,
/// newest first. Retention (log_retention, log_max_events) is applied as events are written.
enum LogCommand {
    static let spec = CommandSpec(
        path: ["log"], positionals: [],
        options: [OptionSpec(name: "--user", value: "U", help: L("only this user")),
                  OptionSpec(name: "--service", value: "S", help: L("only this PAM service"), kind: .service),
                  OptionSpec(name: "--since", value: "WHEN", help: L("a duration back (2h, 3d) or a UTC date (2026-11-01)")),
                  OptionSpec(name: "--limit", value: "N", help: L("at most N events (default 50)"), kind: .count(1...1_000_000))],
        abstract: L("Show the audit log, newest first."),
        discussion: L("One event per authentication: time, user, service, tty, remote host, method, outcome, reason. Never a secret."),
        writes: false, reportsJSON: true, run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let context = try Context(invocation)
        var since: Int64?
        if let text = invocation.value("--since") {
            guard let t = parseSince(text, now: context.now()) else {
                throw UsageError(L("--since takes a duration (2h, 3d) or a date (2026-11-01), not '{value}'", ["value": sanitizedForLog(text)]), command: spec)
            }
            since = t
        }
        let limit = invocation.integer("--limit") ?? 50
        var events: [AuditEvent] = []
        if let store = try context.storeToRead() {
            events = try storeCall(L("cannot read the log")) { () throws(StoreFailure) in
                try store.recentEvents(user: invocation.value("--user"), service: invocation.value("--service"), since: since, limit: limit)
            }
        }
        if invocation.globals.json {
            Output.line(StatusReport.json(events: events).serialized())
        } else if events.isEmpty {
            Output.line(L("No events."))
        } else {
            for e in events { Output.line(StatusReport.text(event: e)) }
        }
        return 0
    }
}
