import CFPrint
import BiounlockFprintProtocol

/// The helper's state: one FpContext (created on first use) and at most one open reader.
/// Every request runs to completion on the main thread before the next one is read.
final class Session {
    let peer: Int32
    let send: (FprintResponse) -> Void
    private var context: UnsafeMutablePointer<FpContext>?
    private var device: GObjectRef?
    private var opened: ReaderDescription?

    init(peer: Int32, send: @escaping (FprintResponse) -> Void) {
        self.peer = peer
        self.send = send
    }

    deinit {
        closeDevice()
        if let context { g_object_unref(context) }
    }

    // MARK: readers

    /// The readers libfprint knows (fp_context_get_devices enumerates on first call; transfer none).
    func devices() -> [UnsafeMutablePointer<FpDevice>] {
        if context == nil { context = fp_context_new() }
        guard let context, let array = fp_context_get_devices(context) else { return [] }
        var out: [UnsafeMutablePointer<FpDevice>] = []
        let count = Int(array.pointee.len)
        guard let data = array.pointee.pdata else { return [] }
        for i in 0..<min(count, FprintProtocol.maximumDevices) {
            if let p = data[i] { out.append(p.assumingMemoryBound(to: FpDevice.self)) }
        }
        return out
    }

    static func describe(_ d: UnsafeMutablePointer<FpDevice>) -> ReaderDescription {
        let raw = fp_device_get_features(d).rawValue
        var features: ReaderFeatures = []
        let table: [(FpDeviceFeature, ReaderFeatures)] = [
            (FP_DEVICE_FEATURE_CAPTURE, .capture), (FP_DEVICE_FEATURE_IDENTIFY, .identify),
            (FP_DEVICE_FEATURE_VERIFY, .verify), (FP_DEVICE_FEATURE_STORAGE, .storage),
            (FP_DEVICE_FEATURE_STORAGE_LIST, .storageList), (FP_DEVICE_FEATURE_STORAGE_DELETE, .storageDelete),
            (FP_DEVICE_FEATURE_STORAGE_CLEAR, .storageClear), (FP_DEVICE_FEATURE_DUPLICATES_CHECK, .duplicatesCheck),
        ]
        for (fp, ours) in table where raw & fp.rawValue != 0 { features.insert(ours) }
        let stages = fp_device_get_nr_enroll_stages(d)
        return ReaderDescription(
            driver: string(fp_device_get_driver(d)), device: string(fp_device_get_device_id(d)),
            name: string(fp_device_get_name(d)), enrolStages: stages > 0 ? Int(stages) : 0, features: features,
            scanType: fp_device_get_scan_type(d) == FP_SCAN_TYPE_SWIPE ? "swipe" : "press")
    }

    func enumerate() {
        send(.devices(devices().map(Session.describe)))
    }

    /// Picks the reader: an explicit selector (driver, id, or driver/id) must match exactly one;
    /// otherwise the first reader the user's prints were taken on, otherwise the first reader.
    func choose(selector: String, preferred: [ReaderRef]) -> Result<UnsafeMutablePointer<FpDevice>, FprintFailure> {
        let all = devices()
        guard !all.isEmpty else { return .failure(FprintFailure(.noReader, "no fingerprint reader found")) }
        if !selector.isEmpty {
            let matching = all.filter { Session.describe($0).ref.matches(selector) }
            switch matching.count {
            case 0: return .failure(FprintFailure(.noReader, "no reader matches '\(selector)'"))
            case 1: return .success(matching[0])
            default: return .failure(FprintFailure(.ambiguous, "\(matching.count) readers match '\(selector)'; name one as driver/id"))
            }
        }
        for ref in preferred {
            if let d = all.first(where: { Session.describe($0).ref == ref }) { return .success(d) }
        }
        return .success(all[0])
    }

    func open(selector: String, preferred: [ReaderRef]) {
        guard device == nil else {
            send(.failure(FprintFailure(.badRequest, "a reader is already open")))
            return
        }
        let chosen: UnsafeMutablePointer<FpDevice>
        switch choose(selector: selector, preferred: preferred) {
        case .success(let d): chosen = d
        case .failure(let f): send(.failure(f)); return
        }
        // Opening may wait on USB; a vanished peer cancels it. No timer: the caller bounds it
        // and kills this process when it takes too long.
        let cancel = Cancellation(timeoutMilliseconds: 60_000, peer: peer)
        defer { cancel.finish() }
        var error: UnsafeMutablePointer<GError>?
        // fprintd, another biounlock or any other process holding the reader makes this fail:
        // the caller treats every failure here as "reader unavailable", never as a failed match.
        if fp_device_open_sync(chosen, cancel.cancellable, &error) == 0 {
            send(.failure(takeError(error, context: "cannot open the reader")))
            return
        }
        let ref = GObjectRef(retaining: UnsafeMutableRawPointer(chosen))
        device = ref
        let description = Session.describe(chosen)
        opened = description
        send(.opened(description))
    }

    func closeDevice() {
        guard let device else { return }
        var error: UnsafeMutablePointer<GError>?
        if fp_device_close_sync(device.pointer.assumingMemoryBound(to: FpDevice.self), nil, &error) == 0 {
            // Nothing to report to: the reader is released when this process exits anyway.
            if let error { g_error_free(error) }
        }
        self.device = nil
        opened = nil
    }

    var openDevice: UnsafeMutablePointer<FpDevice>? {
        device?.pointer.assumingMemoryBound(to: FpDevice.self)
    }
}
