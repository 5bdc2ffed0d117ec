import Foundation
import LivenessCore
import LivenessKit
@testable import LivenessService
import XCTest

/// The `liveness-stream/1` server messages on the wire, checked against text written out here
/// (docs/stream-protocol.md, "An exchange") and read back with `JSONSerialization`: an oracle
/// independent of the `ServerMessage` coding the server and the client share.
final class ServerMessageWireTests: XCTestCase {
    private func text(_ message: ServerMessage) -> String { String(decoding: message.json(), as: UTF8.self) }

    func testMessagesAreTheDocumentedBytes() {
        XCTAssertEqual(text(.hud(.progress(done: 0, total: 2), seq: 0)),
                       #"{"done":0,"seq":0,"state":"progress","text":"Almost there, keep going…","total":2,"type":"hud"}"#)
        XCTAssertEqual(text(.hud(.verifying, seq: 26)), #"{"seq":26,"state":"verifying","text":"Verifying…","type":"hud"}"#)
        XCTAssertEqual(text(.hud(.prompt(.turnLeft), seq: 3)),
                       #"{"prompt":"turnLeft","seq":3,"state":"prompt","text":"Turn your head to the left","type":"hud"}"#)
        XCTAssertEqual(text(.autoshot(.init(seconds: 0.4, framed: true, seq: 10))), #"{"framed":true,"seconds":0.4,"seq":10,"type":"autoshot"}"#)
        XCTAssertEqual(text(.action(.init(done: 1, total: 2, seq: 24))), #"{"done":1,"seq":24,"total":2,"type":"action"}"#)
        XCTAssertEqual(text(.snapshot(.init(seconds: 1.04, seq: 26))), #"{"seconds":1.04,"seq":26,"type":"snapshot"}"#)
        XCTAssertEqual(text(.verdict(.init(status: .passed, reason: nil, seq: 26))),
                       #"{"reason":null,"seq":26,"status":"passed","type":"verdict"}"#, "a pass says reason null, not nothing")
        XCTAssertEqual(text(.verdict(.init(status: .failed, reason: "notVerified", seq: 7))),
                       #"{"reason":"notVerified","seq":7,"status":"failed","type":"verdict"}"#)
        XCTAssertEqual(text(.flow(.slow, dropped: 3, seq: 9)), #"{"dropped":3,"seq":9,"state":"slow","type":"flow"}"#)
        XCTAssertEqual(text(.error(StreamError(.frameTooLarge, "a/b too large", recoverable: true), seq: -1)),
                       #"{"code":"frameTooLarge","message":"a/b too large","recoverable":true,"seq":-1,"type":"error"}"#)
        XCTAssertEqual(text(.ack(seq: 12)), #"{"seq":12,"type":"ack"}"#)
        XCTAssertEqual(text(.prompt(.init(index: 0, total: 2, step: .blink, text: PromptStep.blink.text, seconds: 1.5, seq: 40))),
                       #"{"index":0,"seconds":1.5,"seq":40,"step":"blink","text":"Blink","total":2,"type":"prompt"}"#)
        XCTAssertEqual(text(.promptAnswered(.init(index: 1, total: 2, step: .turnRight, outcome: "notFollowed", seq: 41))),
                       #"{"index":1,"outcome":"notFollowed","seq":41,"step":"turnRight","total":2,"type":"promptAnswered"}"#)
    }

    /// The camera client is told `notVerified` and `notFollowed`, never the check or `anticipated`.
    func testTheClientIsToldTheOutcomeOnly() {
        XCTAssertEqual(ServerMessage.clientReason(.presentationAttack), "notVerified")
        XCTAssertEqual(ServerMessage.clientReason(.timeout), "timeout")
        XCTAssertEqual(ServerMessage.clientOutcome(.anticipated), "notFollowed")
        XCTAssertEqual(ServerMessage.clientOutcome(.wrongDirection), "wrongDirection")
    }

    func testTheSessionMessageCarriesTheLimitsAndTheGuide() throws {
        let limits = ServiceLimits()
        let guide = GuideCircle(policy: LivenessPolicy())
        let bytes = ServerMessage.session(id: "ab0b", limits: limits, serverTimeMicroseconds: 1_454_309, guide: guide).json()
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["id", "limits", "protocol", "seq", "serverTimeMicroseconds", "type", "guide"])
        XCTAssertEqual(object["type"] as? String, "session")
        XCTAssertEqual(object["protocol"] as? String, "liveness-stream/1")
        XCTAssertEqual((object["seq"] as? NSNumber)?.intValue, -1)
        XCTAssertEqual((object["serverTimeMicroseconds"] as? NSNumber)?.int64Value, 1_454_309)
        let circle = try XCTUnwrap(object["guide"] as? [String: Any])
        XCTAssertEqual(Set(circle.keys), ["centerX", "centerY", "radius"])
        XCTAssertEqual((circle["radius"] as? NSNumber)?.doubleValue, guide.radius)
        let published = try XCTUnwrap(object["limits"] as? [String: Any])
        let frames = ResourceLimits.standard
        let expected: [String: Double] = [
            "maxSessions": 16, "maxMessageBytes": 8 * 1024 * 1024, "maxFramesPerSession": 3000, "maxFramesPerSecond": 60,
            "idleTimeoutSeconds": 10, "startTimeoutSeconds": 180, "resultRetentionSeconds": 600, "maxUploadBytes": 256 * 1024 * 1024,
            "maxFramePixels": 3840 * 2160, "maxFrameSide": 4096, "uploadMaxFramePixels": Double(frames.maxFramePixels),
            "uploadMaxFrameSide": Double(frames.maxFrameSide), "serverClockGraceSeconds": 5,
            "uploadMaxFramesPerSecond": frames.maxFramesPerSecond, "uploadMaxDecodedMegapixels": frames.maxDecodedMegapixels,
        ]
        XCTAssertEqual(published.mapValues { ($0 as? NSNumber)?.doubleValue ?? .nan }, expected)
        // Whole counts are written as integers.
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).contains(#""maxSessions":16,"#))
    }

    /// What the client reads: the documented lines, `null` and an absent `reason` alike, extra
    /// keys ignored; an unknown type or a missing field is an error.
    func testTheClientReadsTheDocumentedLines() throws {
        XCTAssertEqual(try ServerMessage(json: #"{"done":1,"seq":24,"total":2,"type":"action"}"#),
                       .action(.init(done: 1, total: 2, seq: 24)))
        XCTAssertEqual(try ServerMessage(json: #"{"reason":null,"seq":26,"status":"passed","type":"verdict"}"#),
                       .verdict(.init(status: .passed, reason: nil, seq: 26)))
        XCTAssertEqual(try ServerMessage(json: #"{"seq":26,"status":"passed","type":"verdict","extra":1}"#),
                       .verdict(.init(status: .passed, reason: nil, seq: 26)))
        XCTAssertEqual(try ServerMessage(json: #"{"seq":-1,"state":"noFace","text":"Position your face in the circle","type":"hud"}"#),
                       .hud(.noFace, seq: -1))
        XCTAssertThrowsError(try ServerMessage(json: #"{"seq":1,"type":"dance"}"#))
        XCTAssertThrowsError(try ServerMessage(json: #"{"seq":1,"type":"action","done":1}"#))
        XCTAssertThrowsError(try ServerMessage(json: #"[1]"#))
        // Everything the server writes reads back as itself.
        for message: ServerMessage in [.hud(.progress(done: 1, total: 2), seq: 4), .flow(.resume, dropped: 2, seq: 5),
                                       .error(StreamError(.internal, "x", recoverable: false), seq: 6),
                                       .session(id: "s", limits: ServiceLimits(), serverTimeMicroseconds: 9,
                                                guide: GuideCircle(policy: LivenessPolicy()))] {
            XCTAssertEqual(try ServerMessage(json: text(message)), message)
        }
    }
}
