import BiounlockDBus
import BiounlockFprintProtocol
import BiounlockSystem

/// Enrolment and deletion on the claimed device (the CLI's `enrol`/`remove` with sensor=fprintd;
/// never inside PAM). The rules of FprintdSession hold here too: replies and statuses count only
/// from fprintd's own bus name, and statuses only for this client's operation.
extension FprintdSession {

    func enrol(finger: UInt8, timeoutMilliseconds: UInt32) {
        guard let claimed else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        guard let name = fprintdFingerName(finger) else { return send(.failure(FprintFailure(.badRequest, "unknown finger \(finger)"))) }
        if vanished { return send(.failure(gone)) }
        if verification != .none { stopVerify() }
        let deadline = Deadline.after(milliseconds: Int64(timeoutMilliseconds))
        drain()
        let serial: UInt32
        switch transmit([FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "EnrollStart", [.string(name)])], deadline: deadline) {
        case .success(let s): serial = s[0]
        case .failure(let f): return send(.failure(f))
        }
        enrolling = true
        let total = claimed.enrolStages
        var done = 0
        var started = false
        while true {
            var status: (result: String, done: Bool)?
            var startError: FprintFailure?
            switch wait(until: deadline, {
                if !started, let list = replies[serial], let m = list.first(where: { $0.sender == owner }) {
                    started = true
                    replies[serial] = nil
                    awaited.remove(serial)
                    if m.kind == .error {
                        startError = FprintdErrors.failure(name: m.errorName ?? "", message: "fprintd EnrollStart: \(String((m.firstText ?? "").prefix(512)))")
                        return true
                    }
                }
                // As for verification, statuses may precede EnrollStart's reply.
                while status == nil, let event = pending.first {
                    pending.removeFirst()
                    if case .enrollStatus(let result, let isDone) = event { status = (result, isDone) }
                }
                return status != nil
            }) {
            case .ready: break
            case .vanished:
                enrolling = false
                return send(.failure(gone))
            case .peerGone:
                stopEnrol()
                return
            case .request, .timedOut:
                stopEnrol()
                return send(.failure(FprintFailure(.timedOut, "no touch in time")))
            }
            if let startError {
                enrolling = false
                return send(.failure(startError))
            }
            guard let status else { continue }
            if !status.done {
                if status.result == "enroll-stage-passed" {
                    done += 1
                    send(.enrolStage(done: done, total: max(total, done)))
                } else {
                    send(.enrolRetry(code: FprintdSession.retryCode(status.result)))
                }
                continue
            }
            stopEnrol()
            func deviceFailure(_ code: Int32, _ text: String) -> FprintResponse {
                .failure(FprintFailure(.device, domain: .device, code: code, "fprintd: \(text)"))
            }
            switch status.result {
            case "enroll-completed":
                send(.enrolStage(done: max(total, done + 1), total: max(total, done + 1)))
                send(.fprintdEnrolled)
            case "enroll-duplicate":
                send(deviceFailure(DeviceCode.dataDuplicate, "this finger is already enrolled (for this or another user)"))
            case "enroll-data-full":
                send(deviceFailure(DeviceCode.dataFull, "the reader's storage is full"))
            case "enroll-disconnected":
                send(deviceFailure(DeviceCode.removed, "the reader was disconnected"))
            default:
                send(deviceFailure(DeviceCode.general, "enrolment failed (\(String(status.result.prefix(64))))"))
            }
            return
        }
    }

    func stopEnrol() {
        guard enrolling, let claimed, !vanished else { enrolling = false; return }
        enrolling = false
        _ = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "EnrollStop"), context: "fprintd EnrollStop",
                 milliseconds: FprintdSession.stopMilliseconds)
    }

    func delete(finger: UInt8) {
        guard let claimed else { return send(.failure(FprintFailure(.notOpen, "no fprintd device is claimed"))) }
        let result: Result<DBusMessage, FprintFailure>
        if finger == 0 {
            result = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "DeleteEnrolledFingers2"),
                          context: "fprintd DeleteEnrolledFingers2")
        } else if let name = fprintdFingerName(finger) {
            result = call(FprintdSession.fprintd(claimed.path, FprintdSession.deviceInterface, "DeleteEnrolledFinger", [.string(name)]),
                          context: "fprintd DeleteEnrolledFinger")
        } else {
            return send(.failure(FprintFailure(.badRequest, "unknown finger \(finger)")))
        }
        switch result {
        case .success: send(.deleted)
        case .failure(let f): send(.failure(f))
        }
    }
}
