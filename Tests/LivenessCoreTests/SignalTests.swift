import LivenessCore
import XCTest

/// The EAR → closure mapping, the eye baseline and the yaw filter.
final class SignalTests: XCTestCase {
    // MARK: Mapping

    func testClosureMappingIsTheRelativeDip() {
        // A real webcam blink from 0.31 to 0.2418 (a 22 % dip) lands on the threshold.
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0.2418, baseline: 0.31), 0.22, accuracy: 1e-9)
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0.31, baseline: 0.31), 0)
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0.35, baseline: 0.31), 0, "wider than baseline clamps to 0")
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0.10, baseline: 0.30), 2.0 / 3.0, accuracy: 1e-9)
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0, baseline: 0.30), 1)
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0.2, baseline: 0), 0, "no baseline, no closure")
        // Dead zone and scale.
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0.24, baseline: 0.30, deadZone: 0.1, scale: 0.5), 0.2, accuracy: 1e-9)
        XCTAssertEqual(EyeClosureEstimator.closure(ear: 0.29, baseline: 0.30, deadZone: 0.1, scale: 0.5), 0)
    }

    func testDefaultMappingCreditsAWebcamBlinkButNotASquint() {
        let p = LivenessPolicy()
        func c(_ ear: Double, _ baseline: Double) -> Double {
            EyeClosureEstimator.closure(ear: ear, baseline: baseline, deadZone: p.eyeClosureDeadZone, scale: p.eyeClosureScale)
        }
        // A shallow real webcam blink: 0.31 -> 0.22 (29 % dip) reaches the threshold.
        XCTAssertGreaterThanOrEqual(c(0.22, 0.31), p.blinkClosureThreshold)
        // A 22 % dip (squint, smile, landmark jitter) does not.
        XCTAssertLessThan(c(0.31 * 0.78, 0.31), p.blinkClosureThreshold)
        // A full blink to EAR 0.10 maps above 0.5.
        XCTAssertGreaterThan(c(0.10, 0.31), 0.5)
    }

    // MARK: Estimator

    /// Feeds `ears` (both eyes) every `step` µs from `start`; returns the mean closures.
    func feed(_ e: inout EyeClosureEstimator, _ ears: [Double], start: Int64 = 0, step: Int64 = frameStep) -> [Double?] {
        ears.enumerated().map { i, ear in
            e.update(leftEAR: ear, rightEAR: ear, timestampMicroseconds: start + Int64(i) * step)?.mean
        }
    }

    func testWarmUpReportsNothingForTheFirstFrames() {
        var e = EyeClosureEstimator()
        let c = feed(&e, Array(repeating: 0.3, count: 8))
        XCTAssertEqual(c.prefix(5).compactMap { $0 }.count, 0)
        XCTAssertEqual(c.suffix(3).compactMap { $0 }, [0, 0, 0])
    }

    func testBaselineAdaptsToThePersonsOpenEye() {
        for open in [0.22, 0.28, 0.35] {
            var e = EyeClosureEstimator()
            var ears = Array(repeating: open, count: 40)
            ears += [open * 0.7, open * 0.6]                 // a two-frame blink: 30 % then 40 % dip
            ears += Array(repeating: open, count: 10)
            let c = feed(&e, ears)
            XCTAssertEqual(e.baseline?.left ?? .nan, open, accuracy: 1e-9)
            XCTAssertEqual(c[40], 0, "the first frame of a dip is not yet confirmed at 25 fps")
            XCTAssertEqual(c[41] ?? .nan, 0.30 - LivenessPolicy().eyeClosureDeadZone, accuracy: 1e-9, "min of the two frames, less the dead zone")
            XCTAssertEqual(c.suffix(10).compactMap { $0 }.max(), 0)
        }
    }

    func testTheBaselineIsRobustToTheBlinksThemselves() {
        // Blinking every 0.4 s (2 of 10 frames closed) leaves the 75th percentile on the open eye.
        var e = EyeClosureEstimator()
        let cycle = [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.12, 0.15]
        let c = feed(&e, Array(Array(repeating: cycle, count: 6).joined()))
        XCTAssertEqual(e.baseline?.left ?? .nan, 0.3, accuracy: 1e-9)
        XCTAssertEqual(c[59] ?? .nan, 0.5 - LivenessPolicy().eyeClosureDeadZone, accuracy: 1e-9)
    }

    func testAShallowSingleFrameDipIsConfirmedOnlyAtLowFrameRates() {
        // A 33 % dip on one frame: landmark noise at 25 fps, all a blink may show at 10 fps.
        // (A dip of eyeDeepDipLevel or more counts on one frame at any rate: EyeConditioningTests.)
        let ears = Array(repeating: 0.3, count: 20) + [0.2] + Array(repeating: 0.3, count: 5)
        var fast = EyeClosureEstimator()
        XCTAssertEqual(feed(&fast, ears).compactMap { $0 }.max(), 0, "one frame at 25 fps is landmark noise")
        var slow = EyeClosureEstimator()
        let c = feed(&slow, ears, step: 100_000)
        XCTAssertEqual(c[20] ?? .nan, 1 - 0.2 / 0.3 - LivenessPolicy().eyeClosureDeadZone, accuracy: 1e-9,
                       "at 10 fps one frame is all a blink shows")
    }

    func testASlowDriftIsNotABlink() {
        // Looking down: EAR sinks from 0.31 to 0.18 over 3 s and stays there.
        var e = EyeClosureEstimator()
        var ears = Array(repeating: 0.31, count: 25)
        ears += (0..<75).map { 0.31 - 0.13 * Double($0) / 75 }
        ears += Array(repeating: 0.18, count: 50)
        let c = feed(&e, ears).compactMap { $0 }
        XCTAssertLessThan(c.max() ?? 1, 0.22)
    }

    func testALongClosureCountsOnlyAtItsStart() {
        var e = EyeClosureEstimator()
        let ears = Array(repeating: 0.3, count: 25) + Array(repeating: 0.1, count: 50)
        let c = feed(&e, ears)
        let p = LivenessPolicy()
        let full = 1 - 0.1 / 0.3 - p.eyeClosureDeadZone
        XCTAssertEqual(c[25] ?? .nan, full, accuracy: 1e-9, "a full closure counts on its first frame")
        // The eye was last open on frame 24; frames are 40 ms apart. A closed frame is measured from
        // the highest EAR of the previous eyeDipReferenceSeconds: while that window still holds
        // frame 24 the closure counts, afterwards the eye's own closed level is the reference.
        let last = 24 + Int((p.eyeDipReferenceSeconds * 1e6 / Double(frameStep)).rounded(.down))
        XCTAssertGreaterThanOrEqual(last, 26, "the rule must allow a blink of a few frames")
        for k in 25...max(25, last) { XCTAssertEqual(c[k] ?? .nan, full, accuracy: 1e-9, "frame \(k)") }
        XCTAssertEqual(c[last + 1], 0, "later does not")
        XCTAssertEqual(c.last, 0)
    }

    func testAWinkClosesOneEye() {
        var e = EyeClosureEstimator()
        for i in 0..<20 { _ = e.update(leftEAR: 0.3, rightEAR: 0.3, timestampMicroseconds: Int64(i) * frameStep) }
        _ = e.update(leftEAR: 0.1, rightEAR: 0.3, timestampMicroseconds: 20 * frameStep)
        let c = e.update(leftEAR: 0.1, rightEAR: 0.3, timestampMicroseconds: 21 * frameStep)
        XCTAssertEqual(c?.left ?? .nan, 1 - 0.1 / 0.3 - LivenessPolicy().eyeClosureDeadZone, accuracy: 1e-9)
        XCTAssertEqual(c?.right, 0)
    }

    // MARK: Yaw

    func testYawMedianRejectsSingleFrameJumps() {
        var f = YawMedianFilter(windowSeconds: 0.2)
        var out: [Double] = []
        for i in 0..<30 {
            let raw: Double = (i == 10 || i == 20) ? 15 : (i == 15 ? -15 : 0)
            out.append(f.update(yawDegrees: raw, timestampMicroseconds: Int64(i) * frameStep))
        }
        XCTAssertEqual(out.map(abs).max(), 0)
    }

    func testYawMedianPassesAHeldTurnWithAShortDelay() {
        var f = YawMedianFilter(windowSeconds: 0.2)
        var out: [Double] = []
        for i in 0..<30 {
            let raw: Double = (10..<20).contains(i) ? 10 : 0      // held 400 ms
            out.append(f.update(yawDegrees: raw, timestampMicroseconds: Int64(i) * frameStep))
        }
        // 5 samples in 0.2 s at 25 fps: the median flips on the third turned frame.
        XCTAssertEqual(out[11], 0)
        XCTAssertEqual(out[12], 10)
        XCTAssertEqual(Array(out[12..<22]), Array(repeating: 10, count: 10))
        XCTAssertEqual(out[22], 0)
    }

    func testYawMedianIsTimeBased() {
        // At 10 fps the same 0.2 s window holds 3 frames.
        var f = YawMedianFilter(windowSeconds: 0.2)
        let raws: [Double] = [0, 0, 20, 0, 20, 20, 20]
        let out = raws.enumerated().map { f.update(yawDegrees: $1, timestampMicroseconds: Int64($0) * 100_000) }
        XCTAssertEqual(out, [0, 0, 0, 0, 20, 20, 20])
    }

    func testLandmarkYawJumpsDoNotCreditATurnButAHeldTurnDoes() throws {
        var d = Driver()
        try d.startScan(landmarkFace(ear: 0.3, yaw: 3))
        // Alternating single-frame jumps of ±12° around the baseline: never a turn.
        for i in 0..<40 { try d.frame(landmarkFace(ear: 0.3, yaw: i % 4 == 0 ? 15 : (i % 4 == 2 ? -9 : 3))) }
        XCTAssertTrue(d.credited.isEmpty)
        // A turn held for 0.4 s is.
        try d.frames(10, landmarkFace(ear: 0.3, yaw: 14))
        XCTAssertEqual(d.credited.map(\.action), [.turnHead])
        XCTAssertEqual(d.credited.first?.value ?? .nan, 11, accuracy: 1e-9)
    }

    func testLandmarkBlinkOfTwoFramesIsCreditedButASquintIsNot() throws {
        var d = Driver()
        try d.startScan(landmarkFace(ear: 0.31))
        try d.frames(10, landmarkFace(ear: 0.31))
        try d.frames(3, landmarkFace(ear: 0.31 * 0.78))   // 22 % dip for 120 ms: a squint
        try d.frames(10, landmarkFace(ear: 0.31))
        XCTAssertTrue(d.credited.isEmpty)
        try d.frame(landmarkFace(ear: 0.22))              // 29 % dip, first frame: not yet confirmed
        XCTAssertTrue(d.credited.isEmpty)
        try d.frame(landmarkFace(ear: 0.22))
        XCTAssertEqual(d.credited.map(\.action), [.blink])
        XCTAssertEqual(d.credited.first?.value ?? .nan, 1 - 0.22 / 0.31 - LivenessPolicy().eyeClosureDeadZone, accuracy: 1e-9)
    }

    func testClosureInputIsUsedAsGiven() throws {
        var d = Driver()
        let s = try d.frame(FaceObservation(centerX: 0.5, centerY: 0.5, eyes: .closure(left: 0.3, right: 0.1)))
        XCTAssertEqual(s.frame.eyeClosureLeft, 0.3)
        XCTAssertEqual(s.frame.eyeClosureRight, 0.1)
    }
}

/// The frontal yaw baseline around the autoshot.
final class YawBaselineTests: XCTestCase {
    func testBaselineIsTheMedianOfTheHalfSecondUpToTheAutoshot() {
        var b = YawBaseline(windowSeconds: 0.5)
        // Old frames (more than 0.5 s before the autoshot at 1.0 s) do not count.
        b.record(yawDegrees: 40, timestampMicroseconds: 0)
        b.record(yawDegrees: 40, timestampMicroseconds: 400_000)
        for (i, y) in [10.0, 12, 11, -30, 11].enumerated() {
            b.record(yawDegrees: y, timestampMicroseconds: 600_000 + Int64(i) * 100_000)
        }
        b.fix(atTimestampMicroseconds: 1_000_000)
        XCTAssertEqual(b.degrees, 11)
        b.fixIfUnset(yawDegrees: 99)
        XCTAssertEqual(b.degrees, 11, "a fixed baseline stays")
    }

    func testWithoutAFaceAroundTheAutoshotTheFirstScanFaceFixesIt() throws {
        var d = Driver()
        try d.frame(face(yaw: 30), at: 0)
        try d.frame(nil, at: 2_000_000)
        try d.frame(nil, at: 2_800_000)                  // fallback autoshot, no face for 0.8 s
        XCTAssertNil(d.machine.evidence.yawBaselineDegrees)
        let first = try d.frame(face(yaw: -4))
        XCTAssertEqual(d.machine.evidence.yawBaselineDegrees, -4)
        XCTAssertEqual(first.frame.relativeYawDegrees, 0)
        try d.frames(2, face(yaw: 4))
        XCTAssertEqual(d.credited.first?.value, 8)
        XCTAssertEqual(d.credited.first?.direction, .left)
    }
}
