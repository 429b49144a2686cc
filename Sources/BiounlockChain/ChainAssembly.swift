import BiounlockSystem
import BiounlockCore
import BiounlockStore
import BiounlockSensors

/// What a caller of the chain may put in place of a real transaction's parts. Nil: the real one.
/// The module overrides nothing; biounlock-check and its tests override the store, the account
/// lookup, the clock and the boot id; the fuzz build the reader, the clock and the boot id.
public struct ChainSeams {
    public var sensors: SensorProvider?
    public var openStore: PolicyChain.StoreOpener?
    public var lookupAccount: PolicyChain.AccountLookup?
    public var clock: Clock?
    public var bootID: (() -> String?)?

    public init(sensors: SensorProvider? = nil, openStore: PolicyChain.StoreOpener? = nil, lookupAccount: PolicyChain.AccountLookup? = nil,
                clock: Clock? = nil, bootID: (() -> String?)? = nil) {
        self.sensors = sensors; self.openStore = openStore; self.lookupAccount = lookupAccount
        self.clock = clock; self.bootID = bootID
    }
}

/// The one place that assembles the policy chain for a real transaction: the PAM module
/// (Entry.swift, and its fuzz build's FuzzWorld), biounlock-check (CheckerService) and
/// `biounlock verify`. What a transaction is made of is decided here once -- the reader `sensor=`
/// names (through its helper, whose warnings go where `diagnostics` says), the root-only store at
/// `store_path`, the session probe (remote session, closed lid) over the caller's environment --
/// and each caller passes only what is its own: its conversation, its logger, its terminal, and
/// the seams it replaces.
public enum ChainAssembly {
    public static func chain(options: Options, conversation: Conversation, logger: Logger, diagnostics: HelperDiagnostics,
                             request: AuthRequest, environment: @escaping (String) -> String?,
                             hostname: @escaping () -> String? = { SessionProbe.hostname() },
                             terminal: @escaping () -> TypeOrTouchTerminal?,
                             seams: ChainSeams = ChainSeams()) -> PolicyChain {
        PolicyChain(
            options: options, conversation: conversation, logger: logger,
            sensors: seams.sensors ?? Sensors(logger: logger, helperDiagnostics: diagnostics),
            openStore: seams.openStore ?? { Store.openForAuthentication(options) },
            lookupAccount: seams.lookupAccount ?? Accounts.find,
            clock: seams.clock ?? SystemClock(),
            sessionFacts: {
                SessionProbe.facts(rhost: request.rhost, tty: request.tty, environment: environment, options: options, hostname: hostname())
            },
            bootID: seams.bootID ?? { SessionProbe.currentBootID },
            terminal: terminal)
    }
}
