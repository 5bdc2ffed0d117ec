import LivenessCore
import XCTest

/// A synthetic eye-signal generator with exact truth: it writes per-frame EARs (both eyes), head
/// pitch and eye distance, and records which frames belong to a real blink (the eye closes from
/// the open level and reopens). The conditioning must find every blink and nothing else.
struct EyeScript {
    struct Frame {
        var t: Int64
        var left: Double
        var right: Double
        var pitch: Double
        var eyeDistance: Double
    }

    let step: Int64
    let open: Double
    private(set) var frames: [Frame] = []
    /// Frame index ranges of the real blinks.
    private(set) var blinks: [ClosedRange<Int>] = []
    private var ear: (left: Double, right: Double)
    var pitch = 0.0
    var eyeDistance = 100.0

    /// - Parameters:
    ///   - fps: frame rate.
    ///   - open: the subject's open-eye EAR.
    init(fps: Double = 30, open: Double = 0.30) {
        step = Int64((1_000_000 / fps).rounded())
        self.open = open
        ear = (open, open)
    }

    private mutating func emit(_ l: Double, _ r: Double) {
        frames.append(Frame(t: Int64(frames.count) * step, left: l, right: r, pitch: pitch, eyeDistance: eyeDistance))
    }

    /// Both eyes at `ear` for `n` frames.
    mutating func hold(_ ear: Double? = nil, frames n: Int) {
        if let ear { self.ear = (ear, ear) }
        for _ in 0..<n { emit(self.ear.left, self.ear.right) }
    }

    /// Both eyes at `ear` for `seconds`.
    mutating func hold(_ ear: Double? = nil, seconds: Double) {
        hold(ear, frames: Int((seconds * 1e6 / Double(step)).rounded()))
    }

    /// Both eyes (and the pitch by `pitchBy` degrees) move linearly to `ear` over `n` frames.
    mutating func ramp(to target: Double, frames n: Int, pitchBy: Double = 0) {
        let (l0, r0, p0) = (ear.left, ear.right, pitch)
        for i in 1...n {
            let f = Double(i) / Double(n)
            pitch = p0 + pitchBy * f
            emit(l0 + (target - l0) * f, r0 + (target - r0) * f)
        }
        ear = (target, target)
    }

    /// A real blink: both eyes at `closed` for `n` frames, then back to the level before.
    mutating func blink(closed: Double = 0.08, frames n: Int = 3) {
        let start = frames.count
        for _ in 0..<n { emit(closed, closed) }
        blinks.append(start...(frames.count - 1))
    }

    /// The estimator's mean closure on every frame (0 during warm-up).
    func closures(_ policy: LivenessPolicy = LivenessPolicy(), usePitch: Bool = true, useEyeDistance: Bool = true) -> [Double] {
        var e = EyeClosureEstimator(policy: policy)
        return frames.map {
            e.update(leftEAR: $0.left, rightEAR: $0.right, pitchDegrees: usePitch ? $0.pitch : nil,
                     eyeDistancePixels: useEyeDistance ? $0.eyeDistance : nil, timestampMicroseconds: $0.t)?.mean ?? 0
        }
    }

    /// Blinks (by index) with a frame of mean closure ≥ `threshold`, and the frames outside every
    /// blink that reach it.
    func judge(_ c: [Double], threshold: Double = LivenessPolicy().blinkClosureThreshold) -> (found: [Int], falseFrames: [Int]) {
        let found = blinks.indices.filter { b in blinks[b].contains { c[$0] >= threshold } }
        let inside = Set(blinks.flatMap { Array($0) })
        let falseFrames = c.indices.filter { c[$0] >= threshold && !inside.contains($0) }
        return (found, falseFrames)
    }
}

/// The eye conditioning against the generator's exact truth: runs of closures, nods, frowns,
/// slow glances, landmark-fit jumps and single-frame blinks.
final class EyeConditioningTests: XCTestCase {
    let threshold = LivenessPolicy().blinkClosureThreshold

    /// lp-d14's pattern: after a second of open eyes, 2.6 s of fluttering half-closed and closed
    /// frames (never open), the eye opens for 3 frames and blinks on a single frame.
    func fluttering() -> EyeScript {
        var s = EyeScript(fps: 30, open: 0.32)
        s.hold(seconds: 1.5)
        for i in 0..<78 { s.hold(i % 2 == 0 ? 0.07 : 0.15, frames: 1) }
        s.hold(0.32, frames: 3)
        s.blink(closed: 0.09, frames: 1)
        s.hold(0.32, frames: 20)
        return s
    }

    func testABlinkAfterARunOfClosuresIsFound() {
        let s = fluttering()
        let c = s.closures()
        XCTAssertEqual(s.judge(c).found, [0], "the blink after the flutter reads \(c[s.blinks[0].lowerBound])")
        // The 1 s percentile alone (no hold) has fallen to the closed level: the same blink reads
        // only a shallow dip and is lost. This is what lp-d14 showed at 6.9-7.0 s.
        var fastOnly = LivenessPolicy()
        fastOnly.eyeBaselineHoldSeconds = 0
        XCTAssertEqual(s.judge(s.closures(fastOnly)).found, [], "without the hold the blink is lost")
    }

    func testTheFlutterItselfCountsOnlyFromTheOpenEye() {
        let s = fluttering()
        let c = s.closures()
        // The flutter begins at 1.5 s (frame 45). The eye was last open on frame 44; after
        // eyeMaxDipSeconds no frame of the flutter may read as a blink.
        let p = LivenessPolicy()
        let lastOpenFrame = 44
        let limit = lastOpenFrame + Int((p.eyeMaxDipSeconds * 1e6 / Double(s.step)).rounded(.down))
        let late = (limit + 1)..<s.blinks[0].lowerBound
        XCTAssertEqual(late.filter { c[$0] >= threshold }, [], "a flutter that never reopens the eye is not a run of blinks")
        XCTAssertTrue((45...limit).contains { c[$0] >= threshold }, "its first closure, from the open eye, is one")
    }

    func testEveryBlinkOfARunIsFound() {
        // Users asked to blink often blink several times in a row: 8 blinks of 4 closed frames,
        // each followed by one open frame (80 % of the frames closed for 1.3 s).
        var s = EyeScript(fps: 30, open: 0.30)
        s.hold(seconds: 1)
        for _ in 0..<8 {
            s.blink(closed: 0.08, frames: 4)
            s.hold(0.30, frames: 1)
        }
        s.hold(seconds: 1)
        let (found, falseFrames) = s.judge(s.closures())
        XCTAssertEqual(found, Array(0..<8))
        XCTAssertEqual(falseFrames, [])
        var fastOnly = LivenessPolicy()
        fastOnly.eyeBaselineHoldSeconds = 0
        XCTAssertLessThan(s.judge(s.closures(fastOnly)).found.count, 8, "a 1 s percentile alone loses the later blinks")
    }

    func testANodThatLowersTheLidsIsNotABlink() {
        // The head pitches down by 12° over 3 frames and the lids follow the gaze: EAR −47 %,
        // held for a second, then back. No blink.
        var s = EyeScript(fps: 30, open: 0.30)
        s.hold(seconds: 1.5)
        s.ramp(to: 0.16, frames: 3, pitchBy: -12)
        s.hold(seconds: 1)
        s.ramp(to: 0.30, frames: 4, pitchBy: 12)
        s.hold(seconds: 1)
        XCTAssertEqual(s.judge(s.closures()).falseFrames, [])
        // The same lid movement without the pitch change is indistinguishable from a blink's onset.
        XCTAssertFalse(s.judge(s.closures(usePitch: false)).falseFrames.isEmpty, "control: the pitch is what tells them apart")
    }

    func testABlinkWithTheLandmarkPitchShiftIsStillABlink() {
        // Closing the lids moves the 68-point fit's eye corners: pitch reads 8° *up* on the closed
        // frames (2-14° on the labelled clips). Still a blink.
        var s = EyeScript(fps: 30, open: 0.30)
        s.hold(seconds: 1.5)
        s.pitch = 8
        s.blink(closed: 0.08, frames: 3)
        s.pitch = 0
        s.hold(seconds: 1)
        let (found, falseFrames) = s.judge(s.closures())
        XCTAssertEqual(found, [0])
        XCTAssertEqual(falseFrames, [])
    }

    func testAFrownIsNotABlinkButABlinkDuringALongFrownIs() {
        // Brows lowered: EAR sinks 30 % over 0.6 s and stays; 3.5 s later the subject blinks.
        var s = EyeScript(fps: 30, open: 0.30)
        s.hold(seconds: 1.5)
        s.ramp(to: 0.21, frames: 18)
        s.hold(seconds: 3.5)
        s.blink(closed: 0.06, frames: 3)
        s.hold(0.21, seconds: 1)
        let (found, falseFrames) = s.judge(s.closures())
        XCTAssertEqual(falseFrames, [], "the frown")
        XCTAssertEqual(found, [0], "the blink: by then the held baseline has come down to the frowning eye")
    }

    func testAGlanceThatLowersTheLidsOverHalfASecondIsNotABlink() {
        // EAR −33 % over 0.4 s (a downward glance): as deep as a shallow blink, but slow. Against the
        // baseline alone it would read 0.27; against the level of the previous 0.18 s it stays shallow.
        var s = EyeScript(fps: 25, open: 0.30)
        s.hold(seconds: 1.5)
        s.ramp(to: 0.20, frames: 10)
        s.hold(seconds: 1)
        XCTAssertEqual(s.judge(s.closures()).falseFrames, [])
        var baselineOnly = LivenessPolicy()
        baselineOnly.eyeDipReferenceSeconds = 0
        XCTAssertFalse(s.judge(s.closures(baselineOnly)).falseFrames.isEmpty, "control: the reference window is what rejects it")
    }

    func testALandmarkFitJumpIsNotABlink() {
        // After fast motion the fit re-anchors: the eye distance jumps by 40 % and the eye contours
        // collapse for 3 frames although the eyes stay open.
        var s = EyeScript(fps: 25, open: 0.30)
        s.hold(seconds: 1.5)
        s.eyeDistance = 140
        s.hold(0.15, frames: 3)
        s.hold(0.30, seconds: 1)
        XCTAssertEqual(s.judge(s.closures()).falseFrames, [])
        XCTAssertFalse(s.judge(s.closures(useEyeDistance: false)).falseFrames.isEmpty, "control: the jump is what rejects it")
    }

    func testADeepSingleFrameCountsAShallowOneOnlyAtLowFrameRates() {
        for (fps, closed, counts) in [(25.0, 0.10, true), (30, 0.12, true), (25, 0.20, false), (10, 0.20, true)] {
            var s = EyeScript(fps: fps, open: 0.30)
            s.hold(seconds: 1.5)
            s.blink(closed: closed, frames: 1)
            s.hold(seconds: 1)
            let (found, falseFrames) = s.judge(s.closures())
            XCTAssertEqual(found, counts ? [0] : [], "one frame at EAR \(closed) at \(fps) fps")
            XCTAssertEqual(falseFrames, [])
        }
    }

    func testTheMachinePassesPitchAndEyeDistanceToTheBlinkRule() throws {
        var d = Driver()
        try d.startScan(landmarkFace(ear: 0.30, pitch: 0, eyeDistance: 100))
        try d.frames(20, landmarkFace(ear: 0.30, pitch: 0, eyeDistance: 100))
        // A nod: pitch −10°, lids −45 %, for half a second.
        try d.frames(12, landmarkFace(ear: 0.165, pitch: -10, eyeDistance: 100))
        try d.frames(20, landmarkFace(ear: 0.30, pitch: 0, eyeDistance: 100))
        // A fit jump: eye distance +40 %, contours collapsed for 3 frames.
        try d.frames(3, landmarkFace(ear: 0.15, pitch: 0, eyeDistance: 140))
        try d.frames(20, landmarkFace(ear: 0.30, pitch: 0, eyeDistance: 140))
        XCTAssertTrue(d.credited.isEmpty, "\(d.credited)")
        // A blink.
        try d.frames(2, landmarkFace(ear: 0.08, pitch: 3, eyeDistance: 140))
        XCTAssertEqual(d.credited.map(\.action), [.blink])
    }

    func testANonFinitePitchOrEyeDistanceIsRejected() throws {
        var d = Driver()
        try d.frame(landmarkFace(ear: 0.3, pitch: 0))
        XCTAssertThrowsError(try d.frame(landmarkFace(ear: 0.3, pitch: .nan))) { error in
            XCTAssertEqual(error as? LivenessError, .nonFiniteValue(frameIndex: 1, field: "face.pitchDegrees"))
        }
        XCTAssertThrowsError(try d.frame(landmarkFace(ear: 0.3, eyeDistance: .infinity))) { error in
            XCTAssertEqual(error as? LivenessError, .nonFiniteValue(frameIndex: 1, field: "face.eyeDistancePixels"))
        }
    }

    /// Eyes too small to read: the same blink, with the eye centres 14 px apart (under
    /// `eyeMinimumDistancePixels`, 15), reads no closure; at 16 px it is found. After the face
    /// comes closer, the eye must be seen open at the readable size before a dip counts.
    func testEyesTooSmallToReadGiveNoClosure() {
        func script(eyeDistance: Double) -> EyeScript {
            var s = EyeScript(fps: 30, open: 0.30)
            s.eyeDistance = eyeDistance
            s.hold(seconds: 1.5)
            s.blink(closed: 0.10, frames: 3)
            s.hold(seconds: 0.5)
            return s
        }
        let small = script(eyeDistance: 14)
        XCTAssertEqual(small.closures().max(), 0, "no closure on eyes 14 px apart")
        XCTAssertEqual(small.judge(small.closures()).found, [])
        let readable = script(eyeDistance: 16)
        XCTAssertEqual(readable.judge(readable.closures()).found, [0], "the same blink at 16 px")
        var off = LivenessPolicy()
        off.eyeMinimumDistancePixels = 0
        XCTAssertEqual(small.judge(small.closures(off)).found, [0], "with the rule off the small blink counts")

        // Small eyes half-closed for a while, then the face comes closer with the lids still low:
        // nothing counts until the eye has been seen open at 20 px; the blink after that does.
        var s = EyeScript(fps: 30, open: 0.30)
        s.eyeDistance = 12
        s.hold(seconds: 1.5)
        s.hold(0.14, frames: 6)
        s.eyeDistance = 20
        s.hold(0.14, frames: 4)
        s.hold(0.30, frames: 15)
        s.blink(closed: 0.10, frames: 3)
        s.hold(seconds: 0.5)
        let c = s.closures()
        XCTAssertEqual(s.judge(c).found, [0])
        XCTAssertEqual(s.judge(c).falseFrames, [], "the low lids seen when the face came closer are no blink")
    }

    func testNodAndFitJumpRulesCanBeSwitchedOff() {
        var p = LivenessPolicy()
        p.eyeNodPitchDegrees = 0
        p.eyeFitJumpRatio = 0
        var s = EyeScript(fps: 30, open: 0.30)
        s.hold(seconds: 1.5)
        s.eyeDistance = 150
        s.ramp(to: 0.16, frames: 3, pitchBy: -12)
        s.hold(seconds: 0.5)
        XCTAssertFalse(s.judge(s.closures(p)).falseFrames.isEmpty)
    }
}
