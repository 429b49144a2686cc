import Glibc

/// Threads, for programs that serve several clients at once (biounlockd's enrolment
/// supervisors). Never used by the PAM module, which starts no thread in its host.
public enum Threads {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// pthread_create(3) of a detached thread running `body`. Throws the error pthread_create
    /// returned (EAGAIN: no thread can be made now).
    public static func detach(_ body: @escaping @Sendable () -> Void) throws(Errno) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
            body.run()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<Body>.fromOpaque(context).release()
            throw Errno(Errno.Code(rawValue: rc), call: "pthread_create")
        }
    }
}
