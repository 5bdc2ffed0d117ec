import LivenessCore
import XCTest

/// Crediting, the actions, the cap and the verdict.
final class ScanTests: XCTestCase {
    func testTurnNeedsTwoHeldCreditedFrames() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(yaw: 9))
        try d.frame(face(yaw: 0))
        XCTAssertTrue(d.credited.isEmpty, "one held frame is not a turn")
        try d.frame(face(yaw: 9))
        let s = try d.frame(face(yaw: 9))
        let turn = try XCTUnwrap(s.events.compactMap(\.credit).first)
        XCTAssertEqual(turn.action, .turnHead)
        XCTAssertEqual(turn.direction, .left)
        XCTAssertEqual(turn.value, 9, accuracy: 1e-9)
        XCTAssertEqual(turn.frameIndex, 14)
    }

    func testTurnThresholdSevenVersusEightDegrees() throws {
        var a = Driver()
        try a.startScan()
        try a.frames(10, face(yaw: -7.0))
        XCTAssertTrue(a.credited.isEmpty)

        var b = Driver()
        try b.startScan()
        try b.frames(2, face(yaw: -8.0))
        XCTAssertEqual(b.credited.map(\.action), [.turnHead])
        XCTAssertEqual(b.credited.first?.direction, .right)
    }

    func testTurnRunMustKeepItsDirection() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(yaw: 9))
        try d.frame(face(yaw: -9))
        XCTAssertTrue(d.credited.isEmpty)
        try d.frame(face(yaw: -9))
        XCTAssertEqual(d.credited.first?.direction, .right)
    }

    func testTurnIsRelativeToTheFrontalBaselineAroundTheAutoshot() throws {
        var d = Driver()
        try d.startScan(face(yaw: 20))                   // a per-person bias of 20°
        XCTAssertEqual(d.machine.evidence.yawBaselineDegrees, 20)
        try d.frames(3, face(yaw: 25))                   // 5° relative: no turn
        XCTAssertTrue(d.credited.isEmpty)
        try d.frames(2, face(yaw: 28))                   // 8° relative
        XCTAssertEqual(d.credited.first?.value ?? .nan, 8, accuracy: 1e-9)
    }

    func testBlinkThresholdPointTwoVersusPointTwoFive() throws {
        var a = Driver()
        try a.startScan()
        try a.frames(5, face(closure: 0.20))
        XCTAssertTrue(a.credited.isEmpty)
        var b = Driver()
        try b.startScan()
        let s = try b.frame(face(closure: 0.25))
        XCTAssertEqual(s.events.compactMap(\.credit).first?.action, .blink)
        XCTAssertEqual(s.events.compactMap(\.credit).first?.value ?? .nan, 0.25, accuracy: 1e-12)
    }

    func testBlinkUsesTheMeanOfBothEyes() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .closure(left: 0.4, right: 0.0)))
        XCTAssertTrue(d.credited.isEmpty, "mean 0.2")
        try d.frame(FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .closure(left: 0.44, right: 0.0)))
        XCTAssertEqual(d.credited.map(\.action), [.blink])
    }

    func testTheAutoshotFrameCanCredit() throws {
        var d = Driver()
        try d.frames(10, face())
        let s = try d.frame(face(closure: 0.5))
        XCTAssertNotNil(s.events.compactMap(\.autoshot).first)
        XCTAssertEqual(s.events.compactMap(\.credit).first?.action, .blink)
    }

    func testRotationLimit() throws {
        func run(_ dps: Double?) throws -> Driver {
            var d = Driver()
            try d.startScan()
            let source: RotationSource = dps == nil ? .unknown : .sensor
            try d.frames(2, face(closure: 0.5, yaw: 10), rotation: DeviceRotation(degreesPerSecond: dps, source: source))
            return d
        }
        let slow = try run(9)
        XCTAssertEqual(slow.credited.map(\.action), [.blink, .turnHead])
        XCTAssertEqual(slow.machine.evidence.framesRotationUnknown, 1, "only the autoshot frame had unknown rotation")
        let fast = try run(11)
        XCTAssertTrue(fast.credited.isEmpty)
        XCTAssertEqual(fast.machine.evidence.framesRotating, 2)
        XCTAssertEqual(fast.steps.suffix(2).map(\.frame.notCreditedReason), [.rotating, .rotating])
        let exactly = try run(10)
        XCTAssertTrue(exactly.credited.isEmpty, "the limit itself is rotating")
        let unknown = try run(nil)
        XCTAssertEqual(unknown.credited.map(\.action), [.blink, .turnHead])
        XCTAssertEqual(unknown.machine.evidence.framesRotationUnknown, 3)    // autoshot frame + 2
        XCTAssertEqual(unknown.machine.evidence.framesRotating, 0)
    }

    func testRotatingFrameBreaksATurnRun() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(yaw: 9))
        try d.frame(face(yaw: 9), rotation: DeviceRotation(degreesPerSecond: 30, source: .video))
        try d.frame(face(yaw: 9))
        XCTAssertTrue(d.credited.isEmpty)
        try d.frame(face(yaw: 9))
        XCTAssertEqual(d.credited.map(\.action), [.turnHead])
    }

    func testFaceLostMidScanBreaksATurnRun() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(yaw: 12))
        let lost = try d.frame(nil)
        XCTAssertEqual(lost.frame.notCreditedReason, .noFace)
        XCTAssertEqual(lost.frame.hud, .noFace)
        try d.frame(face(yaw: 12))
        XCTAssertTrue(d.credited.isEmpty)
        try d.frame(face(yaw: 12))
        XCTAssertEqual(d.credited.map(\.action), [.turnHead])
    }

    func testActionsInEitherOrderPass() throws {
        for blinkFirst in [true, false] {
            var d = Driver()
            try d.startScan()
            if blinkFirst {
                try d.frame(face(closure: 0.6))
                try d.frames(2, face(yaw: -10))
            } else {
                try d.frames(2, face(yaw: -10))
                try d.frame(face(closure: 0.6, yaw: -10))
            }
            XCTAssertEqual(d.credited.map(\.action), blinkFirst ? [.blink, .turnHead] : [.turnHead, .blink])
            let last = try XCTUnwrap(d.steps.last)
            let snap = try XCTUnwrap(last.events.compactMap(\.snapshot).first)
            XCTAssertEqual(snap.frameIndex, last.frame.frameIndex)
            XCTAssertEqual(d.machine.verdict?.status, .passed)
            XCTAssertNil(d.machine.verdict?.reason)
            XCTAssertEqual(d.machine.verdict?.frameIndex, last.frame.frameIndex)
            XCTAssertEqual(last.events.suffix(5).map { $0 }, [
                .snapshot(snap), .phase(.verifying), .hud(.verifying),
                .verdict(Verdict(status: .passed, reason: nil, timestampMicroseconds: last.frame.timestampMicroseconds,
                                 frameIndex: last.frame.frameIndex)),
                .phase(.done),
            ])
        }
    }

    func testBothActionsOnOneFrameAfterAHeldFrame() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(yaw: 9))
        let s = try d.frame(face(closure: 0.9, yaw: 9))
        XCTAssertEqual(s.events.compactMap(\.credit).map(\.action), [.blink, .turnHead])
        XCTAssertEqual(d.machine.verdict?.status, .passed)
    }

    func testCapNineteenPointNineVersusTwentyPointOneSeconds() throws {
        func run(after seconds: Double) throws -> Driver {
            var d = Driver()
            let shot = try d.startScan()
            try d.frame(face(closure: 0.7))                  // blink done
            try d.frame(face(yaw: 10), at: shot + 19_800_000)     // first held frame
            try d.frame(face(yaw: 10), at: shot + Int64((seconds * 1_000_000).rounded()))
            return d
        }
        let early = try run(after: 19.9)
        XCTAssertEqual(early.machine.verdict?.status, .passed)
        let late = try run(after: 20.1)
        XCTAssertEqual(late.machine.verdict, Verdict(status: .failed, reason: .timeout,
                                                      timestampMicroseconds: 400_000 + 20_100_000, frameIndex: 13))
        XCTAssertEqual(late.credited.map(\.action), [.blink], "the cap frame is not evaluated")
        XCTAssertEqual(late.steps.last?.frame.notCreditedReason, .capReached)
        XCTAssertNil(late.machine.evidence.snapshot)

        var exact = Driver()
        let shot = try exact.startScan()
        try exact.frame(face(), at: shot + 19_999_999)
        XCTAssertNil(exact.machine.verdict)
        try exact.frame(face(closure: 0.9), at: shot + 20_000_000)
        XCTAssertEqual(exact.machine.verdict?.reason, .timeout)
        XCTAssertTrue(exact.credited.isEmpty)
    }

    func testNoFaceTakesPrecedenceOverTimeout() throws {
        var d = Driver()
        try d.frame(nil, at: 0)
        try d.frame(nil, at: 3_000_000)                   // fallback autoshot
        XCTAssertEqual(d.machine.evidence.autoshot?.framed, false)
        try d.frame(nil, at: 23_000_000)
        XCTAssertEqual(d.machine.verdict?.status, .failed)
        XCTAssertEqual(d.machine.verdict?.reason, .noFace)
    }

    func testTimeoutWhenAFaceWasSeen() throws {
        var d = Driver()
        try d.frame(face(x: 0.1), at: 0)
        try d.frame(nil, at: 3_000_000)
        try d.frame(nil, at: 23_000_000)
        XCTAssertEqual(d.machine.verdict?.reason, .timeout)
    }

    func testFinishInputEnded() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(closure: 0.5))
        let events = d.machine.finish(.inputEnded)
        let v = Verdict(status: .failed, reason: .inputEnded, timestampMicroseconds: d.lastTimestamp, frameIndex: nil)
        XCTAssertEqual(events, [.verdict(v), .phase(.done)])
        XCTAssertEqual(d.machine.verdict, v)
        XCTAssertEqual(d.machine.finish(.inputEnded), [], "finish after a verdict is a no-op")
        XCTAssertEqual(d.machine.finish(.cancelled), [])
        XCTAssertEqual(d.machine.verdict, v)
    }

    func testFinishPrefersNoFaceWhenNoFaceWasEverTracked() throws {
        var d = Driver()
        try d.frames(5, nil)
        XCTAssertEqual(d.machine.finish(.inputEnded).compactMap(\.verdict).first?.reason, .noFace)
        var empty = LivenessMachine(seed: 3)
        XCTAssertEqual(empty.finish(.inputEnded).compactMap(\.verdict).first,
                       Verdict(status: .failed, reason: .noFace, timestampMicroseconds: 0, frameIndex: nil))
        var cancelled = Driver()
        try cancelled.frames(5, nil)
        XCTAssertEqual(cancelled.machine.finish(.cancelled).compactMap(\.verdict).first?.reason, .cancelled)
    }

    func testNothingHappensAfterTheVerdict() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(closure: 0.5))
        try d.frames(2, face(yaw: 10))
        let verdict = try XCTUnwrap(d.machine.verdict)
        let before = d.machine.evidence
        let after = try d.frames(5, face(x: 0.0, closure: 1, yaw: -30))
        XCTAssertTrue(after.allSatisfy { $0.events.isEmpty })
        XCTAssertTrue(after.allSatisfy { $0.frame.phase == .done && $0.frame.notCreditedReason == .afterVerdict })
        XCTAssertEqual(d.machine.verdict, verdict)
        XCTAssertEqual(d.machine.evidence.framesIgnoredAfterVerdict, 5)
        XCTAssertEqual(d.machine.evidence.framesRead, before.framesRead)
        XCTAssertEqual(d.machine.evidence.actions, before.actions)
        XCTAssertEqual(d.machine.finish(.inputEnded), [])
        // Still strictly increasing timestamps after the verdict; a rejected frame is not counted.
        XCTAssertThrowsError(try d.frame(face(), at: d.lastTimestamp))
        XCTAssertEqual(d.machine.evidence.framesIgnoredAfterVerdict, 5)
    }

    func testNonIncreasingTimestampIsRejectedWithoutAdvancing() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(yaw: 10))
        let snapshotBefore = d.machine
        for bad: Int64 in [d.lastTimestamp, d.lastTimestamp - 1, 0] {
            XCTAssertThrowsError(try d.machine.observe(
                Observation(frameIndex: 99, timestampMicroseconds: bad, face: face(yaw: 10)))) { error in
                XCTAssertEqual(error as? LivenessError, .nonIncreasingTimestamp(
                    frameIndex: 99, timestampMicroseconds: bad, previousMicroseconds: d.lastTimestamp))
                XCTAssertTrue("\(error)".contains("increase"), "\(error)")
            }
        }
        XCTAssertEqual(d.machine.evidence, snapshotBefore.evidence)
        // The rejected frame did not extend the turn run: the next frame behaves as without it.
        var reference = snapshotBefore
        let next = Observation(frameIndex: 12, timestampMicroseconds: d.lastTimestamp + frameStep, face: face(yaw: 10))
        XCTAssertEqual(try d.machine.observe(next), try reference.observe(next))
        XCTAssertEqual(d.machine.evidence.actions.map(\.action), [.turnHead])
    }

    func testNonFiniteValuesAreRejected() throws {
        var m = LivenessMachine(seed: 1)
        XCTAssertThrowsError(try m.observe(Observation(frameIndex: 0, timestampMicroseconds: 0, face: face(yaw: .nan))))
        XCTAssertEqual(m.evidence.framesRead, 0)
        XCTAssertNoThrow(try m.observe(Observation(frameIndex: 0, timestampMicroseconds: 0, face: face())))
    }

    func testEvidenceCounts() throws {
        var d = Driver()
        try d.startScan()                                 // 11 tracked, 1 credited (the autoshot frame)
        try d.frame(nil)
        try d.frame(face(), rotation: DeviceRotation(degreesPerSecond: 50, source: .sensor))
        try d.frame(face(), rotation: DeviceRotation(degreesPerSecond: 1, source: .video))
        let e = d.machine.evidence
        XCTAssertEqual(e.framesRead, 14)
        XCTAssertEqual(e.framesTracked, 13)
        XCTAssertEqual(e.framesCredited, 2)
        XCTAssertEqual(e.framesRotating, 1)
        XCTAssertEqual(e.framesRotationUnknown, 1)
    }
}
