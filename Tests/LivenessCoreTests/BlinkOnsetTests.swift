import LivenessCore
import XCTest

/// The onset of a blink episode against the moment before it (`BlinkEpisode`, `onsetRatio`):
/// a closed frame starts an episode only when the eyes' vertical-edge shares have fallen to at
/// most the ratio of their median over the recent open frames. Expected values are worked out by
/// hand from that definition.
final class BlinkOnsetTests: XCTestCase {
    /// An episode judging onsets at 0.7 against the open frames of the last 0.5 s.
    private func episode() -> BlinkEpisode { BlinkEpisode(reopenRatio: 0.7, reopenFrames: 2, onsetRatio: 0.7, onsetSeconds: 0.5) }

    /// Feeds open frames (closure under the threshold) with shares `left`, `right` every 40 ms
    /// from `start` µs; returns the next timestamp.
    private func open(_ e: inout BlinkEpisode, _ count: Int, left: Double, right: Double, from start: Int64) -> Int64 {
        var t = start
        for _ in 0..<count {
            XCTAssertFalse(e.update(closedNow: false, closureBelow: true, edgeRelative: 1, edgeLeft: left, edgeRight: right,
                                    timestampMicroseconds: t, credited: true))
            t += 40_000
        }
        return t
    }

    private func closed(_ e: inout BlinkEpisode, left: Double?, right: Double?, at t: Int64) -> Bool {
        e.update(closedNow: true, closureBelow: false, edgeRelative: 0.5, edgeLeft: left, edgeRight: right,
                 timestampMicroseconds: t, credited: true)
    }

    func testAClosureThatHidesTheIrisStartsABlink() {
        var e = episode()
        let t = open(&e, 10, left: 0.4, right: 0.5, from: 0)
        // 0.2 / 0.4 and 0.25 / 0.5: 0.5 ≤ 0.7.
        XCTAssertTrue(closed(&e, left: 0.2, right: 0.25, at: t))
        XCTAssertTrue(e.closed)
    }

    func testLandmarkLidsClosingOnEyesWhoseEdgesStayAreNoBlink() {
        var e = episode()
        var t = open(&e, 10, left: 0.4, right: 0.5, from: 0)
        // The shares where they were (ratio 1), then a little lower (0.36 / 0.4 and 0.4 / 0.5:
        // mean 0.85): neither starts an episode.
        XCTAssertFalse(closed(&e, left: 0.4, right: 0.5, at: t))
        XCTAssertFalse(e.closed)
        t += 40_000
        XCTAssertFalse(closed(&e, left: 0.36, right: 0.4, at: t))
        XCTAssertFalse(e.closed)
    }

    func testTheBoundaryCountsAndTheReferenceIsTheMedian() {
        var e = episode()
        // Open shares 0.25, 1.0, 0.5 (left and right alike): median 0.5 (the mean would be 0.58);
        // 0.35 / 0.5 is 0.7, in doubles too: it counts; 0.36 / 0.5 does not.
        var t: Int64 = 0
        for s in [0.25, 1.0, 0.5] { t = open(&e, 1, left: s, right: s, from: t) }
        XCTAssertFalse(closed(&e, left: 0.36, right: 0.36, at: t))
        XCTAssertTrue(closed(&e, left: 0.35, right: 0.35, at: t + 40_000))
    }

    func testTheReferenceIsTheLastHalfSecondOnly() {
        var e = episode()
        // Open at 1.0 for a second, then at 0.4 for 0.6 s (the glare went): a closure at 0.35 keeps
        // 0.875 of the last half second's 0.4 (no onset), though it is 0.35 of the older level.
        var t = open(&e, 25, left: 1.0, right: 1.0, from: 0)
        t = open(&e, 15, left: 0.4, right: 0.4, from: t)
        XCTAssertFalse(closed(&e, left: 0.35, right: 0.35, at: t))
        // A closure at 0.2 (0.5 of 0.4) is one.
        XCTAssertTrue(closed(&e, left: 0.2, right: 0.2, at: t + 40_000))
    }

    func testWithoutTwoRecentOpenFramesOrMeasuredEyesTheOnsetIsNotJudged() {
        var e = episode()
        _ = open(&e, 1, left: 0.4, right: 0.4, from: 0)
        XCTAssertTrue(closed(&e, left: 0.4, right: 0.4, at: 40_000), "one open frame is no reference")
        var f = episode()
        let t = open(&f, 10, left: 0.4, right: 0.4, from: 0)
        XCTAssertTrue(closed(&f, left: nil, right: nil, at: t), "eyes not measured: the closure decides")
        // Open frames 0.6 s old are no reference either.
        var g = episode()
        _ = open(&g, 10, left: 0.4, right: 0.4, from: 0)
        XCTAssertTrue(closed(&g, left: 0.4, right: 0.4, at: 360_000 + 600_000))
    }

    func testInsideAnEpisodeTheOnsetIsNotJudgedAgain() {
        var e = episode()
        let t = open(&e, 10, left: 0.4, right: 0.4, from: 0)
        XCTAssertTrue(closed(&e, left: 0.2, right: 0.2, at: t))
        // The lids stay shut while the shares come back up (a long closure behind glasses): the
        // episode goes on, and credits nothing more.
        XCTAssertFalse(closed(&e, left: 0.4, right: 0.4, at: t + 40_000))
        XCTAssertTrue(e.closed)
    }

    func testThePolicysSwitchTurnsTheOnsetOffWithTheEdgeCheck() {
        var policy = LivenessPolicy()
        XCTAssertEqual(policy.eyeEdgeOnsetRatio, 0.7)
        XCTAssertEqual(policy.eyeEdgeOnsetSeconds, 0.5)
        policy.eyeEdgeCheck = 0
        var e = BlinkEpisode(policy: policy)
        let t = open(&e, 10, left: 0.4, right: 0.4, from: 0)
        XCTAssertTrue(closed(&e, left: 0.4, right: 0.4, at: t))
        var on = BlinkEpisode(policy: LivenessPolicy())
        let u = open(&on, 10, left: 0.4, right: 0.4, from: 0)
        XCTAssertFalse(closed(&on, left: 0.4, right: 0.4, at: u))
    }
}
