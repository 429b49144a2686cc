import BiounlockSystem

/// The helpers' end of the channel (biounlock-fprint and biounlock-fprintd, fd 3): the greeting,
/// each response sent within a bound, and the loop that hands each request to the helper's
/// session until the spawner is done. The two helpers differ only in what they do with a request.
public final class HelperEndpoint {
    /// Longest wait for the next request; the spawner normally closes or kills the helper long before.
    public static let idleMilliseconds: Int64 = 120_000
    /// Longest wait to hand a response to the spawner.
    public static let sendMilliseconds: Int64 = 5_000

    private let channel: FrameChannel
    /// False once the spawner cannot be written to, hung up, or was told `closed`.
    public private(set) var peerAlive = true

    public init(fd: Int32) { channel = FrameChannel(fd: fd) }

    /// Sends one response; a spawner that does not take it within the bound is gone.
    public func reply(_ response: FprintResponse) {
        guard peerAlive else { return }
        if case .failure = channel.send(response.payload, until: monotonicMilliseconds() &+ HelperEndpoint.sendMilliseconds) {
            peerAlive = false
        }
    }

    /// Greets the spawner, then hands it each request until the spawner hangs up or stays idle
    /// past the bound, sends what this protocol version cannot read (answered, then the end),
    /// or `handle` returns false (it has answered `close`).
    public func serve(_ handle: (FprintRequest) -> Bool) {
        reply(.hello)
        while peerAlive {
            guard case .success(let payload) = channel.receive(until: monotonicMilliseconds() &+ HelperEndpoint.idleMilliseconds) else { return }
            guard let request = FprintRequest(payload: payload) else {
                reply(.failure(FprintFailure(.badRequest, "malformed request or protocol version (this helper speaks \(FprintProtocol.version))")))
                return
            }
            if !handle(request) { peerAlive = false }
        }
    }

    public func close() { channel.close() }
}
