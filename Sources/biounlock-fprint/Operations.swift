import CFPrint
import BiounlockFprintProtocol

/// libfprint's FpFinger for our finger numbers (1 = left thumb … 10 = right little), from the header.
func fpFinger(_ number: UInt8) -> FpFinger? {
    let table: [FpFinger] = [
        FP_FINGER_LEFT_THUMB, FP_FINGER_LEFT_INDEX, FP_FINGER_LEFT_MIDDLE, FP_FINGER_LEFT_RING, FP_FINGER_LEFT_LITTLE,
        FP_FINGER_RIGHT_THUMB, FP_FINGER_RIGHT_INDEX, FP_FINGER_RIGHT_MIDDLE, FP_FINGER_RIGHT_RING, FP_FINGER_RIGHT_LITTLE,
    ]
    let index = Int(number) - 1
    return table.indices.contains(index) ? table[index] : nil
}

/// Reads a stored print for libfprint, or says why not. The length and the `FP3` magic are
/// checked first, always: fp_print_deserialize asserts a length over 3 and aborts the process on
/// shorter input. Then the print must be one this reader can use (fp_print_compatible).
func loadPrint(_ bytes: [UInt8], for device: UnsafeMutablePointer<FpDevice>) -> Result<GObjectRef, PrintProblem> {
    if let problem = PrintProblem.check(bytes) { return .failure(problem) }
    var error: UnsafeMutablePointer<GError>?
    let print = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
        guard let base = buffer.baseAddress else { return nil }
        return fp_print_deserialize(base, gsize(buffer.count), &error)
    }
    if let error { g_error_free(error) }
    guard let print else { return .failure(.unreadable) }
    // (transfer full) of a GInitiallyUnowned: sinking keeps exactly one reference either way.
    let ref = GObjectRef(sinking: UnsafeMutableRawPointer(print))
    if ref.pointer != UnsafeMutableRawPointer(print) { return .failure(.unreadable) }
    guard fp_print_compatible(ref.print, device) != 0 else { return .failure(.otherReader) }
    return .success(ref)
}

/// Data the enrolment progress callback needs (passed unretained as user_data).
final class EnrolProgress {
    let send: (FprintResponse) -> Void
    let total: Int
    init(send: @escaping (FprintResponse) -> Void, total: Int) { self.send = send; self.total = total }
}

extension Session {
    func enrol(finger: UInt8, timeoutMilliseconds: UInt32) {
        guard let device = openDevice else { return send(.failure(FprintFailure(.notOpen, "no reader is open"))) }
        guard let fpFinger = fpFinger(finger) else { return send(.failure(FprintFailure(.badRequest, "unknown finger \(finger)"))) }
        guard let fresh = fp_print_new(device) else { return send(.failure(FprintFailure(.other, "fp_print_new failed"))) }
        let template = GObjectRef(sinking: UnsafeMutableRawPointer(fresh))
        fp_print_set_finger(template.print, fpFinger)

        let stages = fp_device_get_nr_enroll_stages(device)
        let progress = EnrolProgress(send: send, total: stages > 0 ? Int(stages) : 0)
        let cancel = Cancellation(timeoutMilliseconds: timeoutMilliseconds, peer: peer)
        defer { cancel.finish() }
        var error: UnsafeMutablePointer<GError>?
        // Retries (too short, centre the finger, another finger) reach only the progress callback.
        let result = withExtendedLifetime(progress) {
            fp_device_enroll_sync(device, template.print, cancel.cancellable, { _, completed, _, data, error in
                guard let data else { return }
                let p = Unmanaged<EnrolProgress>.fromOpaque(data).takeUnretainedValue()
                if let error {
                    // Guaranteed FP_DEVICE_RETRY by libfprint; the error is (transfer none).
                    p.send(.enrolRetry(code: Int(error.pointee.code)))
                } else {
                    p.send(.enrolStage(done: Int(completed), total: p.total))
                }
            }, Unmanaged.passUnretained(progress).toOpaque(), &error)
        }
        guard let result else {
            if isCancelled(error) {
                g_error_free(error)
                if cancel.peerGone { return }
                return send(.failure(FprintFailure(.timedOut, "no touch in time")))
            }
            return send(.failure(takeError(error, context: "enrolment failed")))
        }
        // The same object as the template, with one more full reference.
        let enrolled = GObjectRef(taking: UnsafeMutableRawPointer(result))
        var data: UnsafeMutablePointer<guchar>?
        var length: gsize = 0
        var serializeError: UnsafeMutablePointer<GError>?
        guard fp_print_serialize(enrolled.print, &data, &length, &serializeError) != 0, let data else {
            return send(.failure(takeError(serializeError, kind: .other, context: "cannot serialize the print")))
        }
        defer { g_free(data) }
        guard let count = Int(exactly: length), count <= FprintProtocol.maximumPrintLength else {
            return send(.failure(FprintFailure(.other, "the reader produced a print of \(length) bytes, over the limit")))
        }
        send(.enrolled(print: Array(UnsafeBufferPointer(start: data, count: count))))
    }

    /// One touch against the usable prints.
    ///
    /// Design choice (several fingers enrolled): a reader with the IDENTIFY feature compares the
    /// touch with every usable print at once (fp_device_identify_sync). A VERIFY-only reader can
    /// compare one touch with one print only, so it is verified against the first usable print
    /// (the caller sends them oldest enrolment first) — as fprintd does for "any finger" on such
    /// readers. Other fingers then do not unlock on that reader; docs/GUIDE.md says so.
    func verify(prints: [[UInt8]], timeoutMilliseconds: UInt32) {
        guard let device = openDevice else { return send(.failure(FprintFailure(.notOpen, "no reader is open"))) }
        var usable: [(index: Int, print: GObjectRef)] = []
        for (index, bytes) in prints.enumerated() {
            switch loadPrint(bytes, for: device) {
            case .success(let p): usable.append((index, p))
            case .failure(let problem): send(.printRejected(index: index, problem: problem))
            }
        }
        guard let first = usable.first else {
            return send(.failure(FprintFailure(.noUsablePrint, "no stored print can be used on this reader")))
        }
        let identify = fp_device_has_feature(device, FP_DEVICE_FEATURE_IDENTIFY) != 0

        let cancel = Cancellation(timeoutMilliseconds: timeoutMilliseconds, peer: peer)
        defer { cancel.finish() }
        var error: UnsafeMutablePointer<GError>?
        let outcome: VerifyOutcome?
        if identify {
            guard let gallery = g_ptr_array_new() else { return send(.failure(FprintFailure(.other, "g_ptr_array_new failed"))) }
            defer { g_ptr_array_unref(gallery) }
            for u in usable { g_ptr_array_add(gallery, u.print.pointer) }
            var match: OpaquePointer?
            if fp_device_identify_sync(device, gallery, cancel.cancellable, nil, nil, &match, nil, &error) != 0 {
                if let match {
                    let found = usable.first { $0.print.print == match }
                    g_object_unref(UnsafeMutableRawPointer(match))
                    // A match that is not one of ours is not a match.
                    outcome = found.map { .match(index: $0.index) } ?? .noMatch
                } else {
                    outcome = .noMatch
                }
            } else {
                outcome = nil
            }
        } else {
            var matched: gboolean = 0
            if fp_device_verify_sync(device, first.print.print, cancel.cancellable, nil, nil, &matched, nil, &error) != 0 {
                outcome = matched != 0 ? .match(index: first.index) : .noMatch
            } else {
                outcome = nil
            }
        }
        if let outcome { return send(.verified(outcome)) }

        if isRetry(error), let error {
            let code = Int(error.pointee.code)
            g_error_free(error)
            return send(.verified(.retry(code: code)))
        }
        if isCancelled(error) {
            g_error_free(error)
            if cancel.peerGone { return }
            return send(.verified(.timedOut))
        }
        if let error, error.pointee.domain == fp_device_error_quark(),
           error.pointee.code == Int32(FP_DEVICE_ERROR_DATA_NOT_FOUND.rawValue) {
            // A match-on-chip reader does not know the touched finger: a finger that is not
            // enrolled, so a failed match (fprintd reads it the same way).
            g_error_free(error)
            return send(.verified(.noMatch))
        }
        // Everything else (removed, busy, protocol error, too hot, …) is "unavailable" upstream.
        send(.failure(takeError(error, context: identify ? "identify failed" : "verify failed")))
    }

    /// Deletes a print from the reader's own storage (readers with STORAGE_DELETE).
    func delete(print bytes: [UInt8]) {
        guard let device = openDevice else { return send(.failure(FprintFailure(.notOpen, "no reader is open"))) }
        guard fp_device_has_feature(device, FP_DEVICE_FEATURE_STORAGE_DELETE) != 0 else {
            return send(.failure(FprintFailure(.badRequest, "this reader keeps no prints of its own")))
        }
        let print: GObjectRef
        switch loadPrint(bytes, for: device) {
        case .success(let p): print = p
        case .failure(let problem): return send(.failure(FprintFailure(.noUsablePrint, "print not usable here: \(problem)")))
        }
        let cancel = Cancellation(timeoutMilliseconds: 10_000, peer: peer)
        defer { cancel.finish() }
        var error: UnsafeMutablePointer<GError>?
        if fp_device_delete_print_sync(device, print.print, cancel.cancellable, &error) != 0 {
            return send(.deleted)
        }
        if isCancelled(error) {
            g_error_free(error)
            if cancel.peerGone { return }
            return send(.failure(FprintFailure(.timedOut, "the reader did not answer in time")))
        }
        send(.failure(takeError(error, context: "cannot delete the print from the reader")))
    }
}
