import LivenessCore
import XCTest

/// The continuity check in the machine: a frame whose face-region difference reaches
/// `cutMinDifference` and `cutMinRatio` times the largest difference of its three frames before
/// and two after (all measured, at most 0.25 s apart) is a jump; the session fails two frames
/// later. A pass waits while one of the last two frames may be a jump. Frames are 25 fps (40 ms);
/// the expected frame indices follow from the policy's numbers.
final class ContinuityCheckTests: XCTestCase {
    /// One frame with a face and the given difference.
    @discardableResult
    private func frame(_ d: inout Driver, _ difference: Double?, face f: FaceObservation = face(),
                       at t: Int64? = nil) throws -> LivenessStep {
        let ts = t ?? d.lastTimestamp + frameStep
        let s = try d.machine.observe(Observation(frameIndex: d.nextIndex, timestampMicroseconds: ts, face: f,
                                                  frameDifference: difference))
        d.steps.append(s)
        d.lastTimestamp = ts
        d.nextIndex += 1
        return s
    }

    private func verdictFrame(_ d: Driver) -> Int? {
        d.steps.first { $0.events.contains { $0.verdict != nil } }?.frame.frameIndex
    }

    func testAJumpBetweenStillFramesFailsTwoFramesLater() throws {
        let policy = LivenessPolicy()
        XCTAssertEqual(policy.continuityCheck, 1, "on by default")
        var d = Driver()
        // A held photo (noise: 0.6 levels) that changes to another at frame 20 (30 levels).
        for i in 0..<40 where d.machine.verdict == nil { try frame(&d, i == 20 ? 30 : 0.6) }
        XCTAssertEqual(verdictFrame(d), 22, "decided when its two frames after are known")
        XCTAssertEqual(d.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(d.steps.last?.frame.notCreditedReason, .discontinuousInput)
        let e = d.machine.evidence.continuity
        XCTAssertEqual(e.status, .cut)
        XCTAssertEqual(e.frameIndex, 20)
        XCTAssertEqual(e.largestJumpRatio, 50, accuracy: 1e-9, "30 / 0.6")
        XCTAssertEqual(e.threshold, policy.cutMinRatio)
        XCTAssertEqual(e.framesJudged, 18, "frames 3…20")
    }

    func testBothThresholdsAreInclusiveAndBothMustHold() throws {
        // Exactly 10 levels, exactly 8 times 1.25: a jump.
        var at = Driver()
        for i in 0..<30 where at.machine.verdict == nil { try frame(&at, i == 10 ? 10 : 1.25) }
        XCTAssertEqual(at.machine.evidence.continuity.status, .cut)
        // 9.9 levels among still frames (ratio 33): below cutMinDifference, not a jump.
        var small = Driver()
        for i in 0..<30 { try frame(&small, i == 10 ? 9.9 : 0.3) }
        XCTAssertEqual(small.machine.evidence.continuity.status, .live)
        XCTAssertEqual(small.machine.evidence.continuity.largestJumpRatio, 0, "only changes of 10 levels and more are rated")
        // 20 levels among neighbours that move 3: ratio 6.7, a fast live movement.
        var moving = Driver()
        for i in 0..<30 { try frame(&moving, i == 10 ? 20 : 3) }
        XCTAssertEqual(moving.machine.evidence.continuity.status, .live)
        XCTAssertEqual(moving.machine.evidence.continuity.largestJumpRatio, 20.0 / 3, accuracy: 1e-9)
    }

    func testTheNeighboursAfterCountAsMuchAsThoseBefore() throws {
        // Still before, moving after (a still head that starts to turn fast): no jump.
        var d = Driver()
        for i in 0..<30 { try frame(&d, i < 10 ? 0.5 : (i == 10 ? 15 : 4)) }
        XCTAssertEqual(d.machine.evidence.continuity.status, .live)
        // Moving before, still after (a turn that stops): no jump either.
        var stop = Driver()
        for i in 0..<30 { try frame(&stop, i < 10 ? 4 : (i == 10 ? 15 : 0.5)) }
        XCTAssertEqual(stop.machine.evidence.continuity.status, .live)
    }

    func testAPerfectlyStillPictureUsesTheFloor() throws {
        // Without noise the neighbours differ by 0: the floor (0.3 levels) makes 12 a jump of 40.
        var d = Driver()
        for i in 0..<20 where d.machine.verdict == nil { try frame(&d, i == 8 ? 12 : 0) }
        XCTAssertEqual(d.machine.evidence.continuity.frameIndex, 8)
        XCTAssertEqual(d.machine.evidence.continuity.largestJumpRatio, 40, accuracy: 1e-9)
    }

    func testGapsAndMissingDifferencesAreNotJudged() throws {
        // A 0.5 s gap before the change (dropped frames: the head may have moved): not judged.
        var gap = Driver()
        for i in 0..<10 { try frame(&gap, 0.5, at: Int64(i) * frameStep) }
        try frame(&gap, 30, at: 9 * frameStep + 500_000)
        for _ in 0..<10 { try frame(&gap, 0.5) }
        XCTAssertEqual(gap.machine.evidence.continuity.status, .live)
        // A frame without a face among the neighbours: not judged.
        var lost = Driver()
        for i in 0..<20 { try frame(&lost, i == 9 ? nil : (i == 10 ? 30 : 0.5)) }
        XCTAssertEqual(lost.machine.evidence.continuity.status, .live)
        // No differences at all (ARKit-style input): not evaluated.
        var none = Driver()
        for _ in 0..<20 { try frame(&none, nil) }
        XCTAssertEqual(none.machine.evidence.continuity.status, .notEvaluated)
        XCTAssertEqual(none.machine.evidence.continuity.framesJudged, 0)
    }

    func testAPassOnAPossibleJumpWaitsForItsNeighbours() throws {
        // The second action completes on a frame that jumped from still frames (a slideshow's
        // closed-eye photo): the pass waits two frames and the jump fails the session instead.
        var slide = Driver()
        try slide.startScan()                                       // frames 0…10
        for _ in 0..<3 { try frame(&slide, 0.5, face: face(yaw: 12)) }  // 11-12 credit the turn; 13 still
        try frame(&slide, 35, face: face(closure: 0.9, yaw: 12))   // 14: the blink, on a jump
        XCTAssertNil(slide.machine.verdict, "the pass waits")
        try frame(&slide, 0.5, face: face(closure: 0.9, yaw: 12))  // 15
        try frame(&slide, 0.5, face: face(closure: 0.9, yaw: 12))  // 16: the jump is decided
        XCTAssertEqual(slide.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(slide.machine.evidence.continuity.frameIndex, 14)
        XCTAssertNil(slide.machine.evidence.snapshot)
        // The same session whose blink frame changed among moving frames passes on that frame.
        var live = Driver()
        try live.startScan()
        for _ in 0..<3 { try frame(&live, 3, face: face(yaw: 12)) }
        try frame(&live, 12, face: face(closure: 0.9, yaw: 12))
        XCTAssertEqual(live.machine.verdict?.status, .passed)
        XCTAssertEqual(live.machine.evidence.snapshot?.frameIndex, 14)
    }

    func testTheSwitchTurnsTheCheckOff() throws {
        var policy = LivenessPolicy()
        policy.continuityCheck = 0
        var d = Driver(policy: policy)
        for i in 0..<30 { try frame(&d, i == 10 ? 80 : 0) }
        XCTAssertNil(d.machine.verdict)
        XCTAssertEqual(d.machine.evidence.continuity.status, .off)
        for key in ["continuityCheck", "cutMinDifference", "cutMinRatio"] {
            XCTAssertNotNil(LivenessPolicy.bound(forKey: key), key)
        }
        var weaker = LivenessPolicy()
        weaker.cutMinRatio = 20
        weaker.cutMinDifference = 30
        XCTAssertEqual(Set(weaker.weakerThanSpec.map(\.key)), ["cutMinRatio", "cutMinDifference"])
    }
}
