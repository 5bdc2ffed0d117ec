import LivenessCore
import XCTest

/// Settle, framing, autoshot and fallback, transition by transition.
final class FramingTests: XCTestCase {
    func testSettleLastsThreeHundredMilliseconds() throws {
        var d = Driver()
        // 0, 40, …, 280 ms: settle; in guide but never used for the autoshot.
        let settle = try d.frames(8, face())
        XCTAssertEqual(settle.first?.events.first, .phase(.settle))
        XCTAssertTrue(settle.allSatisfy { $0.frame.phase == .settle && $0.frame.notCreditedReason == .notScanning })
        XCTAssertFalse(d.events.contains(.phase(.framing)))
        XCTAssertNil(d.machine.evidence.autoshot)
        // Exactly 300 ms: framing starts on this frame.
        let s = try d.frame(face(), at: 300_000)
        XCTAssertTrue(s.events.contains(.phase(.framing)))
        XCTAssertEqual(s.frame.phase, .framing)
    }

    func testFramedAutoshotOnThirdConsecutiveInGuideFrame() throws {
        var d = Driver()
        try d.frames(8, face())                          // settle
        let f1 = try d.frame(face(box: FaceBox(x: 1, y: 2, width: 3, height: 4)))
        let f2 = try d.frame(face())
        XCTAssertNil(f1.events.compactMap(\.autoshot).first)
        XCTAssertNil(f2.events.compactMap(\.autoshot).first)
        let box = FaceBox(x: 10, y: 20, width: 30, height: 40)
        let f3 = try d.frame(face(box: box))
        let shot = try XCTUnwrap(f3.events.compactMap(\.autoshot).first)
        XCTAssertEqual(shot, StillCapture(frameIndex: 10, timestampMicroseconds: 400_000, box: box, framed: true))
        XCTAssertEqual(f3.frame.phase, .scan)
        XCTAssertEqual(f3.events.filter { $0 == .phase(.scan) }.count, 1)
        XCTAssertEqual(d.machine.phase, .scan)
    }

    func testAFrameOutsideTheGuideRestartsTheRun() throws {
        var d = Driver()
        try d.frames(8, face())
        try d.frames(2, face())
        try d.frame(face(x: 0.95))                       // outside: run restarts
        try d.frames(2, face())
        XCTAssertNil(d.machine.evidence.autoshot)
        let s = try d.frame(face())
        XCTAssertEqual(s.events.compactMap(\.autoshot).first?.frameIndex, 13)
        XCTAssertEqual(s.events.compactMap(\.autoshot).first?.framed, true)
    }

    func testAFaceInTheCornerNeverCountsAndTheFallbackComesAtTwoAndAHalfSeconds() throws {
        var d = Driver()
        // Framing starts at 300 ms; the fallback is due at 2 800 ms.
        for i in 0..<70 {                                // 0 … 2 760 ms
            let s = try d.frame(face(x: 0.05, y: 0.05), at: Int64(i) * frameStep)
            XCTAssertEqual(s.frame.inGuide, false)
            XCTAssertEqual(s.frame.hud, .outsideGuide)
        }
        XCTAssertNil(d.machine.evidence.autoshot)
        let s = try d.frame(face(x: 0.05, y: 0.05), at: 2_800_000)
        let shot = try XCTUnwrap(s.events.compactMap(\.autoshot).first)
        XCTAssertFalse(shot.framed)
        XCTAssertEqual(shot.timestampMicroseconds, 2_800_000)
        XCTAssertFalse(d.events.contains { if case .progress = $0.hudState { return true } else { return false } },
                       "a face outside the guide must never read progress")
    }

    func testFallbackIsTakenEvenWithoutAFace() throws {
        var d = Driver()
        try d.frame(nil, at: 0)
        try d.frame(nil, at: 2_799_999)
        XCTAssertNil(d.machine.evidence.autoshot)
        let s = try d.frame(nil, at: 2_900_000)
        XCTAssertEqual(s.events.compactMap(\.autoshot).first,
                       StillCapture(frameIndex: 2, timestampMicroseconds: 2_900_000, box: nil, framed: false))
    }

    func testTheThirdInGuideFrameAtTheTimeoutIsFramed() throws {
        var d = Driver()
        try d.frame(face(x: 0.9), at: 0)
        try d.frame(face(), at: 2_700_000)
        try d.frame(face(), at: 2_750_000)
        let s = try d.frame(face(), at: 2_800_000)
        XCTAssertEqual(s.events.compactMap(\.autoshot).first?.framed, true)
    }

    func testGuideIsACircleInPixelsWhenTheFrameSizeIsKnown() throws {
        let policy = LivenessPolicy()
        let circle = GuideCircle(policy: policy)
        // 0.29 of the width off centre: inside in normalised units, 557 px > 324 px on 1920×1080.
        XCTAssertTrue(circle.contains(x: 0.79, y: 0.5, width: nil, height: nil))
        XCTAssertFalse(circle.contains(x: 0.79, y: 0.5, width: 1920, height: 1080))
        // 0.16 of the width = 307 px < 324 px: inside.
        XCTAssertTrue(circle.contains(x: 0.66, y: 0.5, width: 1920, height: 1080))
        // Vertical offset of 0.29 of 1080 = 313 px: inside.
        XCTAssertTrue(circle.contains(x: 0.5, y: 0.79, width: 1920, height: 1080))
        XCTAssertFalse(circle.contains(x: 0.5, y: 0.81, width: 1920, height: 1080))

        var d = Driver()
        for _ in 0..<80 { try d.frame(face(x: 0.79), width: 1920, height: 1080) }
        XCTAssertEqual(d.machine.evidence.autoshot?.framed, false)
    }
}
