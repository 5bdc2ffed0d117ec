import LivenessCore
import XCTest

/// The looped-input check in the machine: a run of frames that repeat an earlier frame at one lag
/// (difference at most `loopMaxDifference`), lasting `loopSeconds` from the frame before the run,
/// that moved (somewhere, half a second into the run or later, `motion` reached `loopMinMotion`
/// and `loopMinMotionRatio` times the run's mean difference) fails with `presentationAttack`.
/// Frames are 25 fps (40 ms); the expected frame indices follow from the policy's numbers.
final class LoopCheckTests: XCTestCase {
    /// One frame with a face and a repetition.
    @discardableResult
    private func frame(_ d: inout Driver, _ r: Repetition?) throws -> LivenessStep {
        let t = d.lastTimestamp + frameStep
        let s = try d.machine.observe(Observation(frameIndex: d.nextIndex, timestampMicroseconds: t, face: face(),
                                                  frameDifference: 1.0, repetition: r))
        d.steps.append(s)
        d.lastTimestamp = t
        d.nextIndex += 1
        return s
    }

    /// Runs `n` frames (or until a verdict); returns the index of the verdict frame, if any.
    private func run(_ d: inout Driver, _ n: Int, _ r: (Int) -> Repetition?) throws -> Int? {
        for _ in 0..<n where d.machine.verdict == nil {
            let s = try frame(&d, r(d.nextIndex))
            if s.events.contains(where: { $0.verdict != nil }) { return s.frame.frameIndex }
        }
        return nil
    }

    func testAMovingStretchRepeatedForLoopSecondsFailsWithPresentationAttack() throws {
        let policy = LivenessPolicy()
        XCTAssertEqual(policy.loopCheck, 1, "on by default")
        var d = Driver()
        // Frames 0…9 repeat nothing (too early); from frame 10 on each repeats the frame 2 s back
        // within 0.8 grey levels while the picture moves 3 levels over half a second.
        let verdict = try run(&d, 200) { i in
            i < 10 ? nil : Repetition(lagSeconds: 2.0, difference: 0.8, motion: 3.0)
        }
        // The run starts at frame 9 (the frame before it, 0.36 s) and reaches 2 s at frame 59.
        XCTAssertEqual(verdict, 59)
        XCTAssertEqual(d.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(d.steps.last?.frame.notCreditedReason, .loopedInput)
        let e = d.machine.evidence.looped
        XCTAssertEqual(e.status, .looped)
        XCTAssertEqual(e.lagSeconds, 2.0)
        XCTAssertEqual(e.longestRepeatSeconds, 2.0, accuracy: 1e-9)
        XCTAssertEqual(e.framesMeasured, 50)
    }

    func testAStillOrBarelyMovingRepeatIsNotALoop() throws {
        // Below loopMinMotion: a still picture repeats itself (the frozen check's case).
        var still = Driver()
        XCTAssertNil(try run(&still, 150) { _ in Repetition(lagSeconds: 1.0, difference: 0.05, motion: 0.2) })
        XCTAssertEqual(still.machine.evidence.looped.status, .live)
        // Moving, but about as much as it differs from the earlier frames (a live subject holding
        // still): motion 2.0 is below 3 × the mean difference 0.9.
        var live = Driver()
        XCTAssertNil(try run(&live, 150) { _ in Repetition(lagSeconds: 1.0, difference: 0.9, motion: 2.0) })
        XCTAssertEqual(live.machine.evidence.looped.longestRepeatSeconds, 0)
        // Motion before the run's first half second does not count: a picture that moved and
        // then froze is not a loop.
        var froze = Driver()
        XCTAssertNil(try run(&froze, 150) { i in Repetition(lagSeconds: 0.5, difference: 0.0, motion: i < 12 ? 5.0 : 0.0) })
        XCTAssertEqual(froze.machine.evidence.looped.status, .live)
    }

    func testTheRunNeedsOneLagAndMatchesAtMostLoopMaxDifference() throws {
        // The lag jumps by 0.3 s every frame: no run lasts.
        var jumping = Driver()
        XCTAssertNil(try run(&jumping, 150) { i in Repetition(lagSeconds: 1.0 + 0.3 * Double(i % 5), difference: 0.5, motion: 3.0) })
        XCTAssertEqual(jumping.machine.evidence.looped.longestRepeatSeconds, 0)
        // One frame in every 40 differs by more than loopMaxDifference: each run ends after
        // 1.6 s, short of 2 s.
        var broken = Driver()
        XCTAssertNil(try run(&broken, 200) { i in
            Repetition(lagSeconds: 2.0, difference: i % 40 == 0 ? 1.5 : 0.5, motion: 3.0)
        })
        let longest = broken.machine.evidence.looped.longestRepeatSeconds
        XCTAssertGreaterThan(longest, 1.0)
        XCTAssertLessThan(longest, LivenessPolicy().loopSeconds)
        // A lag that drifts by one frame (40 ms, within lagToleranceSeconds) keeps the run.
        var drifting = Driver()
        XCTAssertEqual(try run(&drifting, 200) { i in
            i < 10 ? nil : Repetition(lagSeconds: i < 30 ? 1.96 : 2.0, difference: 0.5, motion: 3.0)
        }, 59)
    }

    func testWithoutRepetitionsTheCheckIsNotEvaluatedAndTheSwitchTurnsItOff() throws {
        var none = Driver()
        try none.frames(60, face())
        XCTAssertEqual(none.machine.evidence.looped.status, .notEvaluated)
        var p = LivenessPolicy()
        p.loopCheck = 0
        var off = Driver(policy: p)
        XCTAssertNil(try run(&off, 200) { _ in Repetition(lagSeconds: 2.0, difference: 0.5, motion: 3.0) })
        XCTAssertEqual(off.machine.evidence.looped.status, .off)
        let row = try XCTUnwrap(LivenessPolicy.bound(forKey: "loopCheck"))
        XCTAssertTrue(row.isWeaker(0, than: 1))
        XCTAssertFalse(row.isWeaker(1, than: 0))
        // Non-finite measurements are refused like every other observation field.
        var bad = Driver()
        XCTAssertThrowsError(try frame(&bad, Repetition(lagSeconds: .nan, difference: 0, motion: 0)))
    }
}
