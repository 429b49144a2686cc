import CPAM
import BiounlockCore
import BiounlockSensors
import BiounlockStore
import BiounlockChain
import BiounlockCheck
import BiounlockCheckProtocol

// The module's entry points. This file only translates: bounded C arguments in, one
// exhaustive switch from the chain's Outcome to a PAM code out. Every decision is made by
// BiounlockCore's PolicyChain, which the CLI and the tests share.

/// Most arguments read from a pam.d line; more are ignored (and logged).
let maximumArguments = 64

@_cdecl("pam_sm_authenticate")
public func pam_sm_authenticate(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                                _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh else { return PAM_SERVICE_ERR }
    let logger = SyslogLogger(pamh)
    let arguments = PamHandle.arguments(argc, argv, logger: logger)
    // The line after a login service's password module (issue 32): it reads this transaction's
    // note, so it must not clear it, and it decides nothing (PAM_IGNORE).
    if arguments.contains("keep_password") { return KeptPassword.keepLine(pamh, arguments: arguments, logger: logger) }
    // A note left by an earlier pam_authenticate on this handle (sudo asks up to 3 times) must not
    // make pam_sm_setcred record a password success that this attempt never handed on.
    biounlock_pam_clear_pending_user(pamh)

    let loaded: Configuration.Loaded
    switch Configuration.load(arguments: arguments) {
    case .success(let l): loaded = l
    case .failure(let failure):
        logger.log(.error, "\(failure); falling back to the password")
        return PAM_AUTHINFO_UNAVAIL
    }
    loaded.report(to: logger)
    let options = loaded.options
    logger.debugEnabled = options.debug
    // Messages in the host's locale (the module never sets it): only the domain's directory is
    // chosen here; catalogs are checked and bound when the first text is translated.
    Localization.use(directory: options.localeDir)
    defer { for problem in Localization.takeProblems() { logger.log(.warning, problem) } }

    let user: String
    switch PamHandle.user(pamh) {
    case .name(let name): user = name
    case .failed(let code): return code
    }

    let request = AuthRequest(
        user: user,
        service: PamHandle.item(pamh, PAM_SERVICE) ?? "unknown",
        tty: PamHandle.item(pamh, PAM_TTY) ?? "",
        rhost: PamHandle.item(pamh, PAM_RHOST) ?? "",
        silent: (UInt32(bitPattern: flags) & UInt32(PAM_SILENT)) != 0)

    // Without root (a screen locker running PAM as the user) the root-only store is out of reach:
    // biounlock-check runs the same chain as root for this user and the module relays its
    // conversation (BiounlockCheck.CheckerClient). No password note is left for pam_sm_setcred:
    // running as the user it could not record a password success (see PasswordWitness).
    if CheckerClient.isNeeded {
        var environment: [String: String] = [:]
        for name in CheckProtocol.relayedEnvironment { environment[name] = PamHandle.environment(pamh, name) }
        // The checker runs in the C locale with a cleared environment: the locker's language goes
        // with the request (a plain locale name and LANGUAGE, read here, never set), and the
        // checker's texts arrive in it (CheckerService.useLanguage).
        let language = Localization.callerLanguage()
        let check = CheckRequest(user: user, service: request.service, tty: request.tty, rhost: request.rhost,
                                 silent: request.silent, words: arguments, environment: environment,
                                 locale: language.locale, language: language.language)
        return pamCode(CheckerClient.authenticate(check, options: options, conversation: PamConversation(pamh), logger: logger))
    }

    let conversation = PamConversation(pamh)
    let environment: (String) -> String? = { PamHandle.environment(pamh, $0) }
    #if BIOUNLOCK_FUZZ
    // The fuzz build: the reader, the terminal, the clock and the boot id scripted by the fuzz
    // input (FuzzWorld.swift); never in what ships.
    let chain = FuzzWorld.chain(options: options, conversation: conversation, logger: logger, request: request, environment: environment)
    #else
    let chain = ChainAssembly.chain(
        options: options, conversation: conversation, logger: logger, diagnostics: .syslog, request: request, environment: environment,
        terminal: { ControllingTerminal.forConversation(pamTTY: request.tty) })
    #endif

    let decision = chain.run(request)
    if PasswordWitness.handsOnToPassword(decision) {
        _ = biounlock_pam_set_pending_user(pamh, user)
    }
    // biounlock itself succeeded in this transaction: at a login service, the password kept for
    // the boot becomes PAM_AUTHTOK for the keyring modules below (issue 32; KeptPassword).
    if case .success = decision.outcome {
        KeptPassword.release(pamh, user: user, service: request.service, options: options, logger: logger)
    }
    return pamCode(decision)
}

/// The chain's decision as a PAM code: Core's one table (PamReturn), the same for a decision made
/// here, one biounlock-check made for a caller without root, and what `biounlock verify` prints.
func pamCode(_ decision: Decision) -> Int32 {
    PamReturn(decision.outcome).rawValue
}

/// biounlock sets no credentials and always returns PAM_SUCCESS (sudo-like callers fail without
/// it). Callers invoke it only after the auth stack succeeded, so if pam_sm_authenticate handed
/// this user on to the password, the password was right: see PasswordWitness. The note must
/// name the user the stack authenticated (pendingUserOfThisStack).
@_cdecl("pam_sm_setcred")
public func pam_sm_setcred(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh, let user = pendingUserOfThisStack(pamh) else { return PAM_SUCCESS }
    biounlock_pam_clear_pending_user(pamh)
    guard (UInt32(bitPattern: flags) & UInt32(PAM_DELETE_CRED)) == 0 else { return PAM_SUCCESS }
    recordPasswordSuccess(pamh, user: user, argc, argv)
    return PAM_SUCCESS
}

/// The account phase, for callers that authenticate and never call pam_setcred (polkit's agent
/// helper, which runs common-auth and common-account as root): the pam-auth-update profile puts
/// `account optional pam_biounlock.so` in common-account. It decides nothing about the account
/// (PAM_IGNORE, always) and only witnesses the Unix password (issue 33, item 4).
///
/// Why this proves the password, when nothing says the caller calls pam_acct_mgmt only after a
/// successful pam_authenticate (sshd, for one, calls it after a public key): it does not trust
/// the caller's order at all. It records a password success only when
/// - pam_sm_authenticate left its note on this handle (it handed this user on to the password,
///   in the last pam_authenticate: the note is cleared at each), and
/// - pam_unix's own verdict on the handle ("unix_setcred_return", which pam_unix's
///   pam_sm_authenticate writes on every return for its pam_sm_setcred) says PAM_SUCCESS, and
///   is not the verdict the handle held when biounlock handed on: pam_unix checked the password
///   after biounlock's line, in this handle, and accepted it -- whatever the caller does next.
/// Another password module (pam_sss, pam_krb5) leaves no such verdict: nothing is recorded here
/// for it (pam_setcred still does, for callers that run it). A stack with pam_unix before
/// biounlock's line proves nothing new after the hand-off. The user is the note's, and must be
/// PAM_USER (or PAM_RUSER, as for pam_setcred): pam_unix authenticated PAM_USER.
/// The module's process is the caller's, as root: a user cannot write either piece of handle
/// data (a caller running as the user cannot write the store at all; see CheckerService for
/// lockers).
@_cdecl("pam_sm_acct_mgmt")
public func pam_sm_acct_mgmt(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                             _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh, biounlock_pam_unix_succeeded_since_pending(pamh) == 1, let user = pendingUserOfThisStack(pamh) else {
        return PAM_IGNORE
    }
    // Recorded once: pam_sm_setcred, if the caller runs it too, finds no note.
    biounlock_pam_clear_pending_user(pamh)
    recordPasswordSuccess(pamh, user: user, argc, argv)
    return PAM_IGNORE
}

/// The user of the note pam_sm_authenticate left, if the note names the user the stack
/// authenticated: PAM_USER, or PAM_RUSER when the caller changed PAM_USER after authenticating
/// -- sudo authenticates the invoking user (PAM_USER and PAM_RUSER both that user), then sets
/// PAM_USER to the target (root) before pam_setcred. A note for anyone else records nothing: a
/// false "password success" would reset the PIN lockout. Names compare byte for byte, never by
/// Unicode equivalence (another account's name may be canonically equal: docs/SECURITY.md,
/// finding 28.2).
func pendingUserOfThisStack(_ pamh: OpaquePointer) -> String? {
    guard let pending = biounlock_pam_get_pending_user(pamh).flatMap(PamHandle.string),
          case .name(let current) = PamHandle.user(pamh),
          current.utf8.elementsEqual(pending.utf8) || PamHandle.item(pamh, PAM_RUSER)?.utf8.elementsEqual(pending.utf8) == true else {
        return nil
    }
    return pending
}

func recordPasswordSuccess(_ pamh: OpaquePointer, user: String, _ argc: Int32,
                           _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
    let logger = SyslogLogger(pamh)
    guard case .success(let loaded) = Configuration.load(arguments: PamHandle.arguments(argc, argv, logger: logger)),
          case .success(let store) = Store.openForAuthentication(loaded.options) else { return }
    PasswordWitness.recordPasswordSuccess(user: user, store: store, logger: logger)
}
