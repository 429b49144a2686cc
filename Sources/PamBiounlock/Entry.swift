import CPAM
import BiounlockCore
import BiounlockSensors
import BiounlockStore

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

    let loaded: Configuration.Loaded
    switch Configuration.load(arguments: arguments) {
    case .success(let l): loaded = l
    case .failure(let failure):
        logger.log(.error, "\(failure); falling back to the password")
        return PAM_AUTHINFO_UNAVAIL
    }
    for diagnostic in loaded.diagnostics { logger.log(.warning, diagnostic.description) }
    for note in loaded.notes { logger.log(.notice, note) }
    let options = loaded.options
    logger.debugEnabled = options.debug

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

    let chain = PolicyChain(
        options: options,
        conversation: PamConversation(pamh),
        logger: logger,
        sensors: Sensors(logger: logger),
        openStore: {
            Result { () throws(StoreFailure) -> AuthStore in try Store.open(path: options.storePath, mode: .authenticate) }
        })

    switch chain.run(request).outcome {
    case .success: return PAM_SUCCESS
    case .notEnabled: return PAM_IGNORE
    case .unavailable: return PAM_AUTHINFO_UNAVAIL
    case .maxTries: return PAM_MAXTRIES
    case .denied: return PAM_AUTH_ERR
    case .userUnknown: return PAM_USER_UNKNOWN
    case .conversationFailed: return PAM_CONV_ERR
    }
}

/// biounlock sets no credentials; returning success keeps sudo-like callers' pam_setcred happy.
@_cdecl("pam_sm_setcred")
public func pam_sm_setcred(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    PAM_SUCCESS
}
