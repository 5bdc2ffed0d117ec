import LivenessCore
import XCTest

/// The frozen-input check in the machine: frame differences (grey levels from the previous
/// frame) that stay at or below `frozenMaxDifference` for `frozenSeconds` are not a camera.
final class FrozenCheckTests: XCTestCase {
    /// The default policy, which has the check on (set here so the tests say so).
    private var on: LivenessPolicy {
        var p = LivenessPolicy()
        p.frozenCheck = 1
        return p
    }

    /// One 25 fps frame with a face and a frame difference.
    @discardableResult
    private func frame(_ d: inout Driver, difference: Double?, closure: Double = 0, yaw: Double = 0) throws -> LivenessStep {
        let t = d.lastTimestamp + frameStep
        let s = try d.machine.observe(Observation(frameIndex: d.nextIndex, timestampMicroseconds: t,
                                                  face: face(closure: closure, yaw: yaw), frameDifference: difference))
        d.steps.append(s)
        d.lastTimestamp = t
        d.nextIndex += 1
        return s
    }

    func testAPictureUnchangedForFrozenSecondsFailsWithPresentationAttack() throws {
        var d = Driver(policy: on)
        try frame(&d, difference: nil)  // the first frame has no previous one
        for _ in 0..<10 { try frame(&d, difference: 0.8) }
        // 1.5 s at 25 fps: the run starts at the last frame that changed (frame 10, 0.4 s) and
        // reaches 1.5 s on the 38th unchanged frame (frame 48, 1.92 s).
        var verdictFrame: Int?
        for _ in 0..<60 where d.machine.verdict == nil {
            let s = try frame(&d, difference: 0.002)
            if s.events.contains(where: { $0.verdict != nil }) { verdictFrame = s.frame.frameIndex }
        }
        XCTAssertEqual(verdictFrame, 48)
        XCTAssertEqual(d.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(d.steps.last?.frame.notCreditedReason, .frozenInput)
        let e = d.machine.evidence.frozen
        XCTAssertEqual(e.status, .frozen)
        XCTAssertEqual(e.longestRunFrames, 38)
        XCTAssertEqual(e.longestRunSeconds, 1.52, accuracy: 1e-9)
    }

    func testShortRunsOfDuplicatedFramesAreACamera() throws {
        // A webcam that repeats frames for 0.44 s (11 frames, as clm-cap12 does) now and then.
        var d = Driver(policy: on)
        try frame(&d, difference: nil)
        for k in 0..<200 {
            try frame(&d, difference: k % 20 < 11 ? 0.0 : 0.5, closure: k == 150 ? 0.9 : 0, yaw: k > 160 ? 12 : 0)
        }
        XCTAssertEqual(d.machine.verdict?.status, .passed)
        XCTAssertEqual(d.machine.evidence.frozen.status, .live)
        XCTAssertEqual(d.machine.evidence.frozen.longestRunFrames, 11)
    }

    func testTheThresholdIsInclusiveAndAFrameWithoutADifferenceEndsTheRun() throws {
        let limit = LivenessPolicy().frozenMaxDifference
        var at = Driver(policy: on)
        try frame(&at, difference: nil)
        for _ in 0..<40 { try frame(&at, difference: limit) }
        XCTAssertEqual(at.machine.verdict?.reason, .presentationAttack, "a difference at the limit is unchanged")

        var above = Driver(policy: on)
        try frame(&above, difference: nil)
        for _ in 0..<60 { try frame(&above, difference: limit.nextUp) }
        XCTAssertNil(above.machine.verdict)

        var broken = Driver(policy: on)
        try frame(&broken, difference: nil)
        for k in 0..<60 { try frame(&broken, difference: k % 30 == 29 ? nil : 0) }
        XCTAssertNil(broken.machine.verdict, "runs of 29 frames (1.16 s) never reach 1.5 s")
    }

    func testWithoutDifferencesTheCheckIsNotEvaluatedAndTheSwitchTurnsItOff() throws {
        var none = Driver(policy: on)
        try none.frames(60, face())
        XCTAssertEqual(none.machine.evidence.frozen.status, .notEvaluated)
        XCTAssertNil(none.machine.verdict)

        XCTAssertEqual(LivenessPolicy().frozenCheck, 1, "on by default")
        var p = LivenessPolicy()
        p.frozenCheck = 0
        var off = Driver(policy: p)
        for _ in 0..<60 { try frame(&off, difference: 0) }
        XCTAssertNil(off.machine.verdict)
        XCTAssertEqual(off.machine.evidence.frozen.status, .off)
        // Switching off a check a session's policy turned on is weaker than that policy.
        let row = try XCTUnwrap(LivenessPolicy.bound(forKey: "frozenCheck"))
        XCTAssertTrue(row.isWeaker(0, than: 1))
        XCTAssertFalse(row.isWeaker(1, than: 0))
    }

    func testANonFiniteDifferenceIsRejected() throws {
        var d = Driver(policy: on)
        XCTAssertThrowsError(try frame(&d, difference: .infinity))
    }
}
