import XCTest
import BiounlockFaceProtocol

/// The face helper's messages: every one round-trips; anything malformed is refused whole.
final class FaceProtocolTests: XCTestCase {
    let d = FaceDescriptor((0..<128).map { Float($0) / 128 })!

    func testEveryMessageRoundTrips() {
        let requests: [FaceRequest] = [
            .open(camera: "/dev/video2", simulated: false, allowRGB: true, models: "/usr/share/biounlock/face"),
            .enrol(frames: 5, thresholdMilli: 400, timeoutMilliseconds: 60_000),
            .verify(descriptors: [d, d], thresholdMilli: 400, attemptFrames: 10, timeoutMilliseconds: 9750),
            .close,
        ]
        for r in requests { XCTAssertEqual(FaceRequest(payload: r.payload), r) }
        let responses: [FaceResponse] = [
            .hello, .opened(CameraDescription(driver: "uvcvideo", card: "IR Camera", path: "/dev/video2", format: "GREY", width: 640, height: 360, greyscale: true)),
            .enrolFrame(done: 2, total: 5), .enrolRetry(.dark), .enrolled([d]), .verified(.match(index: 1, distanceMilli: 312)),
            .verified(.noMatch(distanceMilli: 701)), .verified(.timedOut(.stalled)), .closed, .failure(FaceFailure(.notInfrared, "no GREY")),
        ]
        for r in responses { XCTAssertEqual(FaceResponse(payload: r.payload), r) }
    }

    func testMalformedMessagesAreRefused() {
        let good = FaceRequest.verify(descriptors: [d], thresholdMilli: 400, attemptFrames: 10, timeoutMilliseconds: 1000).payload
        XCTAssertNil(FaceRequest(payload: good + [0]), "trailing byte")
        XCTAssertNil(FaceRequest(payload: Array(good.dropLast())), "truncated")
        XCTAssertNil(FaceRequest(payload: [2] + good.dropFirst()), "another version")
        XCTAssertNil(FaceRequest(payload: []))
        // A descriptor with a NaN is no descriptor.
        var nan = good
        nan.replaceSubrange((nan.count - 4)..., with: [0x7f, 0xc0, 0, 0] as [UInt8])
        XCTAssertNil(FaceRequest(payload: nan))
        // A match index the request never sent cannot even be encoded past the bound.
        XCTAssertNil(FaceResponse(payload: [1, 105, 1, 200, 0, 0, 0, 1]))
        XCTAssertNil(FaceDescriptor(Array(repeating: 0, count: 127)))
    }

    func testStoredTemplatesDecodeOnlyWhenWhole() {
        let data = FaceTemplateData.encode([d, d])
        XCTAssertEqual(FaceTemplateData.decode(data), [d, d])
        XCTAssertNil(FaceTemplateData.decode(Array(data.dropLast())))
        XCTAssertNil(FaceTemplateData.decode(data + [0]))
        XCTAssertNil(FaceTemplateData.decode(Array("BUF1".utf8) + [0]), "no descriptor")
        XCTAssertNil(FaceTemplateData.decode(Array("FP3x".utf8) + data.dropFirst(4)), "another magic")
        XCTAssertEqual(d.distance(to: d), 0)
    }
}
