import BiounlockSystem

/// The chain's bookkeeping: successes recorded, the audit row and log line of every decision,
/// and what the user is told about it.
extension PolicyChain {
    /// A success resets counters; run() writes it together with the audit event.
    func recordSuccess(user: String, method: AuthMethod) {
        pendingSuccess = (user, method)
    }

    func writeSuccess(user: String, method: AuthMethod, store: AuthStore) {
        // The decision stands even if the counters cannot be reset.
        do { try store.recordSuccess(user: user, method: method, at: clock.now(), bootID: bootID() ?? "") } catch {
            logger.log(.error, "cannot record success for \(user): \(error)")
        }
    }

    /// One audit row per transaction in which biounlock took part (when the store is open) and one
    /// log line, never a secret. When biounlock stays out (the user has not enabled biometric
    /// unlock, a remote session under remote=ignore) there is only the log line, at debug level:
    /// nothing to audit, and a row would cost every such sudo a synced write to the store
    /// (bench/RESULTS.md, section 1, has what a transaction costs each way).
    /// Logs the line and returns the row, which run() writes (nil when there is none).
    func audit(_ decision: Decision, request: AuthRequest) -> AuditEvent? {
        let user = sanitizedForLog(request.user)
        let line = "user=\(user) service=\(sanitizedForLog(request.service)) method=\(decision.method.rawValue) outcome=\(decision.outcome.label) reason=\(decision.reason.rawValue)"
        logger.log(decision.outcome == .ignore ? .debug : .info, line)
        return auditEvent(decision, request: request)
    }

    /// The audit row of `decision` (nil when biounlock stayed out: see audit).
    func auditEvent(_ decision: Decision, request: AuthRequest) -> AuditEvent? {
        guard decision.outcome != .ignore else { return nil }
        return AuditEvent(time: clock.now(), user: sanitizedForLog(request.user), service: sanitizedForLog(request.service),
                          tty: sanitizedForLog(request.tty), rhost: sanitizedForLog(request.rhost),
                          method: decision.method, outcome: decision.outcome.label, reason: decision.reason.rawValue)
    }

    func write(_ event: AuditEvent, store: AuthStore) {
        do { try store.appendEvent(event) } catch {
            // The decision stands: a full disk must not turn a success into a failure or the reverse.
            logger.log(.error, "cannot write audit event: \(error)")
        }
    }

    /// The request to touch the reader, the feedback on each touch and the lockout messages are
    /// part of the exchange, like a password prompt, so they are shown even under PAM_SILENT. sudo
    /// passes PAM_SILENT on every call (sudo < 1.9.16 cannot be told otherwise); honouring it
    /// here would leave the user looking at a silent terminal while sudo waits for a finger --
    /// approving something with no sign it is happening. pam_fprintd makes the same choice.
    func say(_ request: AuthRequest, exchange text: String, isError: Bool = false) {
        if let activeTerminal { return activeTerminal.message(text) }
        isError ? conversation.error(text) : conversation.info(text)
    }

    /// Notices about what happened (reader unavailable, timed out, nothing enrolled) are
    /// suppressed by PAM_SILENT.
    func say(_ request: AuthRequest, notice text: String, isError: Bool = true) {
        guard !request.silent else { return }
        if let activeTerminal { return activeTerminal.message(text) }
        isError ? conversation.error(text) : conversation.info(text)
    }
}
