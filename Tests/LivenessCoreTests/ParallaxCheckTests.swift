import LivenessCore
import XCTest

/// The parallax check in the machine: the residuals a turn's frames carry decide whether the
/// turn was made by a head (depth) or by a flat picture (`presentationAttack`).
final class ParallaxCheckTests: XCTestCase {
    /// A face turned by `yaw`°, with a parallax residual and an eye distance in pixels.
    private func turned(_ yaw: Double, residual: Double?, eyes: Double? = 60) -> FaceObservation {
        var f = face(yaw: yaw)
        f.planarResidual = residual
        f.eyeDistancePixels = eyes
        return f
    }

    func testAFlatTurnFailsWithPresentationAttackOnTheFrameThatWouldCreditIt() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(face(closure: 0.9))  // the blink is done first: only the turn is missing
        try d.frame(turned(12, residual: 0.010))
        let s = try d.frame(turned(12, residual: 0.020))
        let verdict = try XCTUnwrap(s.events.compactMap(\.verdict).first)
        XCTAssertEqual(verdict.status, .failed)
        XCTAssertEqual(verdict.reason, .presentationAttack)
        XCTAssertEqual(verdict.frameIndex, 13)
        XCTAssertEqual(d.credited.map(\.action), [.blink], "the flat turn is not credited")
        let p = d.machine.evidence.parallax
        XCTAssertEqual(p.status, .flat)
        XCTAssertEqual(p.residual, 0.020, "the largest residual of the run")
        XCTAssertEqual(p.framesUsed, 2)
        XCTAssertEqual(p.frameIndex, 13)
        XCTAssertEqual(p.threshold, LivenessPolicy().parallaxMinResidual)
    }

    func testATurnWithDepthOnOneFrameOfTheRunIsCredited() throws {
        var d = Driver()
        try d.startScan()
        try d.frame(turned(12, residual: 0.01))
        try d.frame(turned(12, residual: 0.09))
        XCTAssertEqual(d.credited.map(\.action), [.turnHead])
        XCTAssertEqual(d.machine.evidence.parallax.status, .depth)
        XCTAssertEqual(d.machine.evidence.parallax.residual, 0.09)
        try d.frame(face(closure: 0.9))
        XCTAssertEqual(d.machine.verdict?.status, .passed)
    }

    func testTheThresholdIsStrict() throws {
        let threshold = LivenessPolicy().parallaxMinResidual
        var at = Driver()
        try at.startScan()
        try at.frames(2, turned(9, residual: threshold))
        XCTAssertEqual(at.machine.evidence.parallax.status, .depth, "a residual at the threshold is depth")
        var below = Driver()
        try below.startScan()
        try below.frames(2, turned(9, residual: threshold.nextDown))
        XCTAssertEqual(below.machine.verdict?.reason, .presentationAttack)
    }

    func testOnlyTheFramesOfTheCreditingRunDecide() throws {
        var d = Driver()
        try d.startScan()
        // A first run to the left with depth is broken off; the run that credits is flat.
        try d.frame(turned(12, residual: 0.2))
        try d.frame(turned(0, residual: 0.2))
        try d.frame(turned(-12, residual: 0.2))
        try d.frame(turned(12, residual: 0.01))
        try d.frame(turned(12, residual: 0.01))
        XCTAssertEqual(d.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(d.machine.evidence.parallax.framesUsed, 2)
    }

    func testFramesWithoutReliableLandmarksDoNotDecide() throws {
        // No residual at all (ARKit traces, older engine traces): not evaluated, the turn stands.
        var none = Driver()
        try none.startScan()
        try none.frames(2, turned(12, residual: nil))
        XCTAssertEqual(none.credited.map(\.action), [.turnHead])
        XCTAssertEqual(none.machine.evidence.parallax.status, .notEvaluated)
        XCTAssertEqual(none.machine.evidence.parallax.framesUnreliable, 2)
        XCTAssertNil(none.machine.evidence.parallax.residual)

        // Residuals of faces too small to trust do not decide, even when flat.
        var small = Driver()
        try small.startScan()
        try small.frames(2, turned(12, residual: 0.001, eyes: 12))
        XCTAssertEqual(small.credited.map(\.action), [.turnHead])
        XCTAssertEqual(small.machine.evidence.parallax.status, .notEvaluated)

        // One reliable flat frame decides when the other is unreliable.
        var mixed = Driver()
        try mixed.startScan()
        try mixed.frame(turned(12, residual: 0.5, eyes: 12))
        try mixed.frame(turned(12, residual: 0.01))
        XCTAssertEqual(mixed.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(mixed.machine.evidence.parallax.framesUsed, 1)
        XCTAssertEqual(mixed.machine.evidence.parallax.framesUnreliable, 1)
    }

    func testTheSwitchTurnsTheCheckOff() throws {
        var policy = LivenessPolicy()
        policy.parallaxCheck = 0
        var d = Driver(policy: policy)
        try d.startScan()
        try d.frames(2, turned(12, residual: 0.0))
        try d.frame(face(closure: 0.9))
        XCTAssertEqual(d.machine.verdict?.status, .passed)
        XCTAssertEqual(d.machine.evidence.parallax.status, .off)
        XCTAssertTrue(policy.weakerThanSpec.map(\.key).contains("parallaxCheck"), "switching the check off is weaker")
    }

    func testBeforeAnyTurnTheCheckIsNotEvaluated() throws {
        var d = Driver()
        try d.startScan()
        try d.frames(5, turned(2, residual: 0.0))
        XCTAssertEqual(d.machine.evidence.parallax.status, .notEvaluated)
        XCTAssertNil(d.machine.evidence.parallax.frameIndex)
    }

    func testANonFiniteResidualIsRejected() throws {
        var d = Driver()
        try d.startScan()
        XCTAssertThrowsError(try d.frame(turned(12, residual: .nan)))
    }
    /// The frames a front end must measure the residual on (`readsPlanarResidual`): feeding
    /// residuals only to those frames must give the verdict and the evidence of feeding every
    /// frame's. Yaws that cross the threshold, fall back, start a short run that breaks, then a
    /// run that credits the turn, then more turned frames.
    func testResidualsOnlyWhereTheMachineReadsThemGiveTheSameJudgement() throws {
        let yaws: [Double] = [0, 3, 6, 9, 4, 0, -5, -9, 0, 2, 8, 11, 12, 12, 13, 9, 14, 15, 0]
        for residual in [0.01, 0.05] {  // a flat picture, a head
            var every = Driver(), some = Driver()
            try every.startScan()
            try some.startScan()
            try every.frame(face(closure: 0.9))  // the blink first: the turn decides the verdict
            try some.frame(face(closure: 0.9))
            var read = 0
            for (i, yaw) in yaws.enumerated() {
                let r = residual + 0.001 * Double(i)
                let o = Observation(frameIndex: some.nextIndex, timestampMicroseconds: some.lastTimestamp + frameStep,
                                    face: turned(yaw, residual: nil))
                let reads = some.machine.readsPlanarResidual(o)
                if reads { read += 1 }
                if abs(yaw) < LivenessPolicy().turnYawDegrees - 3 { XCTAssertFalse(reads, "frame \(i): yaw \(yaw)° is far from a turn") }
                try every.frame(turned(yaw, residual: r))
                try some.frame(turned(yaw, residual: reads ? r : nil))
            }
            XCTAssertEqual(some.machine.verdict, every.machine.verdict, "residual \(residual)")
            XCTAssertEqual(some.machine.evidence.parallax, every.machine.evidence.parallax, "residual \(residual)")
            XCTAssertEqual(some.credited, every.credited)
            XCTAssertNotNil(every.machine.verdict)
            XCTAssertGreaterThan(read, 0)
            XCTAssertLessThan(read, yaws.count / 2, "most frames are not read")
        }
    }

    func testNoResidualIsReadWithTheCheckOffOrAfterTheTurn() throws {
        var policy = LivenessPolicy()
        policy.parallaxCheck = 0
        var off = Driver(policy: policy)
        try off.startScan()
        let o = Observation(frameIndex: off.nextIndex, timestampMicroseconds: off.lastTimestamp + frameStep, face: turned(12, residual: nil))
        XCTAssertFalse(off.machine.readsPlanarResidual(o))

        var d = Driver()
        try d.startScan()
        try d.frames(2, turned(12, residual: 0.09))
        XCTAssertEqual(d.credited.map(\.action), [.turnHead])
        let after = Observation(frameIndex: d.nextIndex, timestampMicroseconds: d.lastTimestamp + frameStep, face: turned(12, residual: nil))
        XCTAssertFalse(d.machine.readsPlanarResidual(after), "the turn is credited: no residual is read any more")
        let none = Observation(frameIndex: d.nextIndex, timestampMicroseconds: d.lastTimestamp + frameStep, face: nil)
        XCTAssertFalse(d.machine.readsPlanarResidual(none))
    }
}
