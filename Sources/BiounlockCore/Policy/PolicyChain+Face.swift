/// The face in the chain (issue 34): when the camera may watch for the user's face beside the
/// reader. docs/DESIGN.md, "The face".
extension PolicyChain {
    /// Whether the face may be tried in this transaction. Security choices:
    /// - off unless the admin turned it on (`face=on`) and the user enrolled a face (the caller
    ///   then reads the templates: none, no camera);
    /// - never in a remote session, whatever `remote=` says: the camera sees whoever sits at this
    ///   machine, not the remote user;
    /// - only in a transaction a person started and is looking at: at a type-or-touch prompt on
    ///   the foreground terminal (they typed the command there), or, without a terminal, for the
    ///   services the admin names in `face_dialog_services` (their greeter, their screen locker).
    ///   Without a terminal biounlock cannot tell a dialog the user opened from one a program
    ///   opened (pkexec run by a background job, `sudo -S` in a script): a face approves without
    ///   any action, so it is not offered there (Howdy's #957, #389).
    /// The gates before the finger (lockout, boot and enrolment rules, lid) apply to it as to the
    /// finger: they are checked before this is asked.
    func faceAllowed(request: AuthRequest, facts: SessionFacts) -> Bool {
        guard options.face, facts.remote == nil else { return false }
        if options.prompt == .concurrent {
            if heldTerminal == nil { heldTerminal = terminal() }
            if heldTerminal != nil { return true }
        }
        return options.faceDialogServices.contains(request.service)
    }

    /// The user's face templates when the face may be used now; none otherwise (or unreadable:
    /// then the finger alone, and a log line).
    func faceTemplates(user: UserRecord, request: AuthRequest, facts: SessionFacts, store: AuthStore) -> [FaceTemplate] {
        guard faceAllowed(request: request, facts: facts) else { return [] }
        do { return try store.faceTemplates(user: user.name) } catch {
            logger.log(.error, "cannot read the face of \(user.name): \(error)")
            return []
        }
    }
}
