import LivenessCore
import XCTest

/// Slow closures (`EyeClosureEstimator.againstBaseline`, `LivenessPolicy.eyeSlowClosureEdgeRatio`
/// and `eyeSlowClosureThreshold`): lids that come down over longer than the reference window read
/// shallow against their own recent level; against the open-eye baseline they read deep, and they
/// count when the eyes' edges confirm them. Expected values are worked out by hand from the
/// definitions in the doc comments.
final class SlowClosureTests: XCTestCase {
    func testAgainstTheBaselineASlowRampReadsDeepWhereTheReferenceReadsShallow() throws {
        // 10 fps: the reference window (0.18 s) holds the previous frame only, the confirmation
        // window (0.045 s) the frame itself. Two seconds open at 0.30: baseline 0.30.
        var e = EyeClosureEstimator()
        var t: Int64 = 0
        for _ in 0..<20 {
            _ = e.update(leftEAR: 0.3, rightEAR: 0.3, timestampMicroseconds: t)
            t += 100_000
        }
        // 0.25: reference 0.30 either way, 1 − 0.25/0.30 − 0.06 = 0.10667.
        var c = try XCTUnwrap(e.update(leftEAR: 0.25, rightEAR: 0.25, timestampMicroseconds: t))
        var b = try XCTUnwrap(e.againstBaseline)
        XCTAssertEqual(c.mean, 1 - 0.25 / 0.3 - 0.06, accuracy: 1e-9)
        XCTAssertEqual(b.mean, c.mean, accuracy: 1e-12)
        // 0.20: reference 0.25 (the previous frame) gives 1 − 0.8 − 0.06 = 0.14; the baseline
        // (the window's 75th percentile is still 0.30) gives 1 − 0.2/0.3 − 0.06 = 0.27333.
        t += 100_000
        c = try XCTUnwrap(e.update(leftEAR: 0.2, rightEAR: 0.2, timestampMicroseconds: t))
        b = try XCTUnwrap(e.againstBaseline)
        XCTAssertEqual(c.mean, 0.14, accuracy: 1e-9)
        XCTAssertEqual(b.mean, 1 - 0.2 / 0.3 - 0.06, accuracy: 1e-9)
        // 0.15: 1 − 0.75 − 0.06 = 0.19 (under the 0.22 threshold) against 1 − 0.5 − 0.06 = 0.44.
        t += 100_000
        c = try XCTUnwrap(e.update(leftEAR: 0.15, rightEAR: 0.15, timestampMicroseconds: t))
        b = try XCTUnwrap(e.againstBaseline)
        XCTAssertEqual(c.mean, 0.19, accuracy: 1e-9)
        XCTAssertEqual(b.mean, 0.44, accuracy: 1e-9)
    }

    func testDuringWarmUpThereIsNoReading() {
        var e = EyeClosureEstimator()
        XCTAssertNil(e.update(leftEAR: 0.3, rightEAR: 0.3, timestampMicroseconds: 0))
        XCTAssertNil(e.againstBaseline)
    }

    /// A face given as aspect ratios with both eyes' edge shares.
    private func eyes(ear: Double, edges: Double?) -> FaceObservation {
        var f = landmarkFace(ear: ear)
        f.eyeEdgeLeft = edges
        f.eyeEdgeRight = edges
        return f
    }

    /// At 25 fps: open at 0.30 (edges 0.6), then 0.25 and 0.20 for five frames each (open-looking
    /// edges), then two frames at 0.16 with edge shares `edges`. Returns the last step.
    ///
    /// On the second 0.16 frame the reference (the highest of the previous 0.18 s: 0.20) gives
    /// 1 − 0.8 − 0.06 = 0.14, under the blink threshold; the baseline (the 75th percentile of the
    /// last second: 0.30) gives 1 − 0.16/0.30 − 0.06 = 0.40667 on both 0.16 frames, which the
    /// confirmation keeps. (On the first, the confirmation takes the previous frame's 0.27333,
    /// under 0.3.)
    private func slowClosure(_ d: inout Driver, edges: Double?) throws -> LivenessStep {
        try d.startScan(eyes(ear: 0.3, edges: 0.6))
        try d.frames(15, eyes(ear: 0.3, edges: 0.6))
        try d.frames(5, eyes(ear: 0.25, edges: 0.6))
        try d.frames(5, eyes(ear: 0.2, edges: 0.6))
        let first = try d.frame(eyes(ear: 0.16, edges: edges))
        XCTAssertEqual(first.frame.eyeClosureAgainstBaseline ?? -1, 1 - 0.2 / 0.3 - 0.06, accuracy: 1e-9)
        return try d.frame(eyes(ear: 0.16, edges: edges))
    }

    func testASlowClosureTheEdgesConfirmIsABlink() throws {
        var d = Driver()
        // Edges 0.3 against a level of 0.6: relative 0.5, at most 0.55; against the open frames
        // just before, 0.5 too (the onset, at most 0.7).
        let step = try slowClosure(&d, edges: 0.3)
        XCTAssertEqual(step.frame.eyeClosureMean ?? -1, 0.14, accuracy: 1e-9)
        XCTAssertEqual(step.frame.eyeClosureAgainstBaseline ?? -1, 1 - 0.16 / 0.3 - 0.06, accuracy: 1e-9)
        XCTAssertEqual(step.frame.eyeEdgeRelative ?? -1, 0.5, accuracy: 1e-12)
        XCTAssertEqual(d.credited.map(\.action), [.blink])
        XCTAssertEqual(d.credited.first?.frameIndex, step.frame.frameIndex)
        XCTAssertEqual(step.frame.eyesClosedEpisode, true)
    }

    func testASlowClosureTheEdgesDoNotConfirmIsNoBlink() throws {
        // Edges 0.36: relative 0.6, above 0.55 (and not vetoed: under 0.75). Lids lowered
        // slowly over an iris still showing: a look down.
        var d = Driver()
        let step = try slowClosure(&d, edges: 0.36)
        XCTAssertEqual(step.frame.eyeEdgeRelative ?? -1, 0.6, accuracy: 1e-12)
        XCTAssertFalse(step.frame.eyesOpenByEdges)
        XCTAssertTrue(d.credited.isEmpty)
        XCTAssertEqual(step.frame.eyesClosedEpisode, false)
    }

    func testWithoutPixelsOrWithTheCheckOffOrAShallowerThresholdASlowClosureIsNoBlink() throws {
        var unmeasured = Driver()
        let step = try slowClosure(&unmeasured, edges: nil)
        XCTAssertNil(step.frame.eyeEdgeRelative)
        XCTAssertTrue(unmeasured.credited.isEmpty, "without pixels the closure alone decides, and it is 0.14")

        var policy = LivenessPolicy()
        policy.eyeEdgeCheck = 0
        var off = Driver(policy: policy)
        _ = try slowClosure(&off, edges: 0.3)
        XCTAssertTrue(off.credited.isEmpty)

        // The baseline closure must reach eyeSlowClosureThreshold: 0.40667 falls short of 0.41.
        policy = LivenessPolicy()
        policy.eyeSlowClosureThreshold = 0.41
        var deeper = Driver(policy: policy)
        _ = try slowClosure(&deeper, edges: 0.3)
        XCTAssertTrue(deeper.credited.isEmpty)
        policy.eyeSlowClosureThreshold = 0.40
        var met = Driver(policy: policy)
        _ = try slowClosure(&met, edges: 0.3)
        XCTAssertEqual(met.credited.map(\.action), [.blink])
    }

    func testThePolicysDefaultsAndTheirWeakerSide() throws {
        let policy = LivenessPolicy()
        XCTAssertEqual(policy.eyeSlowClosureEdgeRatio, 0.55)
        XCTAssertEqual(policy.eyeSlowClosureThreshold, 0.3)
        // More slow closures count with a higher edge ratio or a lower closure: weaker.
        var weaker = policy
        weaker.eyeSlowClosureEdgeRatio = 0.8
        weaker.eyeSlowClosureThreshold = 0.25
        XCTAssertEqual(weaker.weakerThanSpec.map(\.key), ["eyeSlowClosureEdgeRatio", "eyeSlowClosureThreshold"])
        var stricter = policy
        stricter.eyeSlowClosureEdgeRatio = 0.5
        stricter.eyeSlowClosureThreshold = 0.35
        XCTAssertEqual(stricter.weakerThanSpec, [])
    }
}
