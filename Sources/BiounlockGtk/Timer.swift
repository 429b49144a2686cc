import CGtk

/// A repeating call on GLib's main loop (`g_timeout_add_seconds_full`, or `g_timeout_add_full`
/// for milliseconds), on GTK's thread like the rest of this layer: `body` runs every period
/// until it returns false or the timer is cancelled (or released: its deinit cancels it). The
/// closure's box is released by GLib when the source is removed.
public final class RepeatingTimer {
    private final class Box {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
    }

    private var source: UInt32 = 0

    public init(seconds: UInt32, _ body: @escaping () -> Bool) {
        let data = Unmanaged.passRetained(Box(body)).toOpaque()
        source = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, seconds, RepeatingTimer.call, data, RepeatingTimer.release)
    }

    /// Every `milliseconds` (an animation's frames).
    public init(milliseconds: UInt32, _ body: @escaping () -> Bool) {
        let data = Unmanaged.passRetained(Box(body)).toOpaque()
        source = g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, RepeatingTimer.call, data, RepeatingTimer.release)
    }

    private static let call: GSourceFunc = { data in
        guard let data else { return 0 }
        return Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().body() ? 1 : 0
    }
    private static let release: GDestroyNotify = { data in
        guard let data else { return }
        Unmanaged<Box>.fromOpaque(data).release()
    }

    /// Stops the calls (nothing if the body already ended them).
    public func cancel() {
        guard source != 0 else { return }
        // A source the body ended by returning false is gone already: only a live one is removed.
        if g_main_context_find_source_by_id(nil, source) != nil { g_source_remove(source) }
        source = 0
    }

    deinit { cancel() }
}
