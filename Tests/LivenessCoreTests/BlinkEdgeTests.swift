import LivenessCore
import XCTest

/// The pixel side of the blink rule: the eyes' vertical-edge shares against their own recent
/// levels (`EyeEdgeBaseline`), the closures they veto, and blink episodes (`BlinkEpisode`).
/// Expected values are worked out by hand from the definitions in the doc comments.
final class BlinkEdgeTests: XCTestCase {
    /// A frontal face given as closures, with edge shares for both eyes.
    private func eyes(closure: Double, edges: Double?) -> FaceObservation {
        var f = face(closure: closure)
        f.eyeEdgeLeft = edges
        f.eyeEdgeRight = edges
        return f
    }

    func testTheLevelIsThePercentileOfTheWindowBeforeTheFrame() {
        var b = EyeEdgeBaseline(windowSeconds: 1, percentile: 0.75, minimumFrames: 4)
        // Left 0.4, 0.5, 0.6, 0.7 and right all 0.5 over four frames: no level before the fourth
        // has passed.
        for (i, l) in [0.4, 0.5, 0.6, 0.7].enumerated() {
            XCTAssertNil(b.update(left: l, right: 0.5, timestampMicroseconds: Int64(i) * 100_000))
        }
        // Left level: the 0.75 quantile of 0.4…0.7 (type 7) = 0.4 + 0.75 × 3 × 0.1 = 0.625;
        // right 0.5. Frame 0.25 / 0.625 = 0.4 and 0.5 / 0.5 = 1: mean 0.7.
        let r = b.update(left: 0.25, right: 0.5, timestampMicroseconds: 400_000)
        XCTAssertEqual(r ?? -1, 0.7, accuracy: 1e-12)
        // 1.3 s later the window (1 s) holds only the frame at 0.4 s and 1.2 s: under 4 shares.
        XCTAssertNil(b.update(left: 0.5, right: 0.5, timestampMicroseconds: 1_300_000))
    }

    func testAnEyeNotMeasuredGivesNoRelativeShare() {
        var b = EyeEdgeBaseline(windowSeconds: 4, percentile: 0.75, minimumFrames: 1)
        XCTAssertNil(b.update(left: 0.5, right: 0.5, timestampMicroseconds: 0))
        XCTAssertNil(b.update(left: nil, right: 0.5, timestampMicroseconds: 40_000))
        XCTAssertEqual(b.update(left: 0.5, right: 0.25, timestampMicroseconds: 80_000) ?? -1, 0.75, accuracy: 1e-12)
    }

    func testAClosureTheEdgesSeeOpenIsNoBlink() throws {
        // 0.6 shares on every open frame, then a frame whose closure is 0.5 with the edges at 0.6
        // (relative 1.0, above 0.75: the lids moved, the iris did not): no blink. Then a closure
        // with the edges at 0.3 (relative 0.5): the blink.
        var d = Driver()
        try d.startScan(eyes(closure: 0, edges: 0.6))
        let vetoed = try d.frame(eyes(closure: 0.5, edges: 0.6))
        XCTAssertTrue(vetoed.frame.eyesOpenByEdges)
        XCTAssertEqual(vetoed.frame.eyeEdgeRelative ?? -1, 1.0, accuracy: 1e-12)
        XCTAssertTrue(d.credited.isEmpty)
        try d.frames(3, eyes(closure: 0, edges: 0.6))
        let blink = try d.frame(eyes(closure: 0.5, edges: 0.3))
        XCTAssertFalse(blink.frame.eyesOpenByEdges)
        XCTAssertEqual(d.credited.map(\.action), [.blink])
        XCTAssertEqual(d.credited.first?.frameIndex, blink.frame.frameIndex)
    }

    func testAClosureBeforeTheEyesHaveLevelsDoesNotCount() {
        // Measured eyes without levels yet (3 shares, 8 needed): the pixels cannot confirm the
        // closure, so it is vetoed; unmeasured eyes leave the closure to decide alone.
        var policy = LivenessPolicy()
        XCTAssertTrue(EyeEdgeBaseline.vetoes(left: 0.3, right: 0.3, relative: nil, policy: policy))
        XCTAssertFalse(EyeEdgeBaseline.vetoes(left: nil, right: nil, relative: nil, policy: policy))
        XCTAssertFalse(EyeEdgeBaseline.vetoes(left: 0.3, right: 0.3, relative: 0.75, policy: policy))
        XCTAssertTrue(EyeEdgeBaseline.vetoes(left: 0.3, right: 0.3, relative: 0.7501, policy: policy))
        policy.eyeEdgeCheck = 0
        XCTAssertFalse(EyeEdgeBaseline.vetoes(left: 0.3, right: 0.3, relative: nil, policy: policy))
    }

    func testWithTheCheckOffOrWithoutPixelsTheClosureDecidesAlone() throws {
        var policy = LivenessPolicy()
        policy.eyeEdgeCheck = 0
        var d = Driver(policy: policy)
        try d.startScan(eyes(closure: 0, edges: 0.6))
        let step = try d.frame(eyes(closure: 0.5, edges: 0.6))
        XCTAssertFalse(step.frame.eyesOpenByEdges)
        XCTAssertEqual(d.credited.map(\.action), [.blink])

        var plain = Driver()
        try plain.startScan()
        try plain.frame(face(closure: 0.5))
        XCTAssertEqual(plain.credited.map(\.action), [.blink])
    }

    func testAnEpisodeEndsOnlyAfterFramesThatLookOpen() {
        var e = BlinkEpisode(reopenRatio: 0.7, reopenFrames: 2)
        // Closed: a blink credited once.
        XCTAssertTrue(e.update(closedNow: true, closureBelow: false, edgeRelative: 0.4, credited: true))
        XCTAssertTrue(e.closed)
        // The closure falls back under the threshold but the edges still show a closed eye
        // (0.5 < 0.7): still the same episode; closed again: no second blink.
        XCTAssertFalse(e.update(closedNow: false, closureBelow: true, edgeRelative: 0.5, credited: true))
        XCTAssertFalse(e.update(closedNow: true, closureBelow: false, edgeRelative: 0.4, credited: true))
        // One open-looking frame is not enough; a high closure the edges veto neither ends nor continues.
        XCTAssertFalse(e.update(closedNow: false, closureBelow: true, edgeRelative: 0.9, credited: true))
        XCTAssertFalse(e.update(closedNow: false, closureBelow: false, edgeRelative: 0.95, credited: true))
        XCTAssertTrue(e.closed)
        // Two open-looking frames in a row (an unknown share looks open): the episode ends.
        XCTAssertFalse(e.update(closedNow: false, closureBelow: true, edgeRelative: 0.9, credited: true))
        XCTAssertFalse(e.update(closedNow: false, closureBelow: true, edgeRelative: nil, credited: true))
        XCTAssertFalse(e.closed)
        // A new closure is a new blink.
        XCTAssertTrue(e.update(closedNow: true, closureBelow: false, edgeRelative: 0.4, credited: true))
    }

    func testAnEpisodeEndsOnlyWithTheLidsBackAtTheirOpenLevel() throws {
        // A blink (closure 0.5, edges down to half), then two frames whose lids are part-way up
        // (closure 0.1: under the 0.22 threshold but above eyeReopenClosure, 0.02) while the edges
        // read open: the episode goes on. Two frames at rest (0.02, then 0) end it.
        var d = Driver()
        try d.startScan(eyes(closure: 0, edges: 0.6))
        XCTAssertEqual(try d.frame(eyes(closure: 0.5, edges: 0.3)).frame.eyesClosedEpisode, true)
        for _ in 0..<2 { XCTAssertEqual(try d.frame(eyes(closure: 0.1, edges: 0.6)).frame.eyesClosedEpisode, true) }
        XCTAssertEqual(try d.frame(eyes(closure: 0.02, edges: 0.6)).frame.eyesClosedEpisode, true)
        XCTAssertEqual(try d.frame(eyes(closure: 0, edges: 0.6)).frame.eyesClosedEpisode, false)
        // With the former rule (any closure under the threshold looks open) the same frames end it.
        var policy = LivenessPolicy()
        policy.eyeReopenClosure = policy.blinkClosureThreshold
        var former = Driver(policy: policy)
        try former.startScan(eyes(closure: 0, edges: 0.6))
        try former.frame(eyes(closure: 0.5, edges: 0.3))
        try former.frame(eyes(closure: 0.1, edges: 0.6))
        XCTAssertEqual(try former.frame(eyes(closure: 0.1, edges: 0.6)).frame.eyesClosedEpisode, false)
    }

    func testAnEpisodeStartedOnAnUncreditedFrameIsCreditedLater() {
        var e = BlinkEpisode(reopenRatio: 0.7, reopenFrames: 2)
        XCTAssertFalse(e.update(closedNow: true, closureBelow: false, edgeRelative: nil, credited: false))
        XCTAssertTrue(e.update(closedNow: true, closureBelow: false, edgeRelative: nil, credited: true))
        XCTAssertFalse(e.update(closedNow: true, closureBelow: false, edgeRelative: nil, credited: true))
        e.reset()
        XCTAssertFalse(e.closed)
        XCTAssertTrue(e.update(closedNow: true, closureBelow: false, edgeRelative: nil, credited: true))
    }
}
