import LivenessCore
import XCTest

/// The recapture check in the machine: the enclosure measurements of the followed face over the
/// last `recaptureWindowSeconds` (at least 4 of them) whose lower quartile reaches
/// `recaptureMinEnclosure` fail the session with `presentationAttack`; the window starts again
/// when the face is lost or jumps; a pass waits while the followed face has 1–3 measurements.
/// Frames are 25 fps (40 ms); the expected frame indices follow from the policy's numbers.
final class RecaptureCheckTests: XCTestCase {
    private let box = FaceBox(x: 100, y: 100, width: 100, height: 100)

    /// One frame: a face (with `box` unless told otherwise) or none, its enclosure, ARKit-style
    /// eyes and yaw.
    @discardableResult
    private func frame(_ d: inout Driver, enclosure: Double?, face f: FaceObservation? = nil, noFace: Bool = false,
                       box b: FaceBox? = nil) throws -> LivenessStep {
        let t = d.lastTimestamp + frameStep
        let tracked = noFace ? nil : (f ?? face(box: b ?? box))
        let s = try d.machine.observe(Observation(frameIndex: d.nextIndex, timestampMicroseconds: t, face: tracked,
                                                  borderEnclosure: noFace ? nil : enclosure))
        d.steps.append(s)
        d.lastTimestamp = t
        d.nextIndex += 1
        return s
    }

    private func verdictFrame(_ d: Driver) -> Int? {
        d.steps.first { $0.events.contains { $0.verdict != nil } }?.frame.frameIndex
    }

    func testAFaceEnclosedOnFourMeasuredFramesFailsOnTheFourth() throws {
        let policy = LivenessPolicy()
        XCTAssertEqual(policy.recaptureCheck, 1, "on by default")
        var d = Driver()
        for _ in 0..<10 where d.machine.verdict == nil { try frame(&d, enclosure: 60) }
        XCTAssertEqual(verdictFrame(d), 3, "four measurements at or above the threshold")
        XCTAssertEqual(d.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(d.steps.last?.frame.notCreditedReason, .recapturedInput)
        let e = d.machine.evidence.recapture
        XCTAssertEqual(e.status, .recaptured)
        XCTAssertEqual(e.windowEnclosure, 60)
        XCTAssertEqual(e.threshold, policy.recaptureMinEnclosure)
        XCTAssertEqual(e.framesMeasured, 4)
        XCTAssertEqual(e.frameIndex, 3)
    }

    func testTheThresholdIsInclusiveAndTheLowerQuartileDecides() throws {
        var at = Driver()
        for _ in 0..<4 { try frame(&at, enclosure: 25) }
        XCTAssertEqual(at.machine.evidence.recapture.status, .recaptured, "25 reaches 25")
        var below = Driver()
        for _ in 0..<30 { try frame(&below, enclosure: 24.99) }
        XCTAssertEqual(below.machine.evidence.recapture.status, .live)
        XCTAssertEqual(below.machine.evidence.recapture.windowEnclosure, 24.99)
        // A live face where the room lines up on one frame in three: the lower quartile of a
        // window (25 frames at 25 fps) is 0; never decided.
        var live = Driver()
        for i in 0..<100 { try frame(&live, enclosure: i % 3 == 0 ? 90 : 0) }
        XCTAssertNil(live.machine.verdict)
        XCTAssertEqual(live.machine.evidence.recapture.windowEnclosure, 0)
        // Three frames in four enclosed: the lower quartile of 25 values (index 6 of the sorted)
        // is enclosed once at most 6 of them are not.
        var mostly = Driver()
        for i in 0..<100 where mostly.machine.verdict == nil { try frame(&mostly, enclosure: i % 4 == 0 ? 0 : 80) }
        XCTAssertEqual(mostly.machine.evidence.recapture.status, .recaptured)
    }

    func testTheWindowKeepsOnlyTheLastSecond() throws {
        // 25 frames of 0 then enclosed frames: the zeros leave the one-second window after 25
        // frames; with 25 measurements in the window the lower quartile (sorted index 6) is
        // enclosed once at most 6 zeros are left in it: frame 25 + 18 = 43.
        var d = Driver()
        for i in 0..<80 where d.machine.verdict == nil { try frame(&d, enclosure: i < 25 ? 0 : 50) }
        XCTAssertEqual(verdictFrame(d), 43)
    }

    func testAtLowFrameRatesTheLastFourMeasurementsDecide() throws {
        // 2 fps: a one-second window never holds four measurements; the face's last four do.
        var d = Driver()
        for i in 0..<10 where d.machine.verdict == nil {
            let t = Int64(i) * 500_000
            let s = try d.machine.observe(Observation(frameIndex: i, timestampMicroseconds: t, face: face(box: box),
                                                      borderEnclosure: 70))
            d.steps.append(s)
        }
        XCTAssertEqual(verdictFrame(d), 3)
    }

    func testTheWindowStartsAgainWhenTheFaceIsLostOrJumps() throws {
        // Three enclosed frames, a frame without a face, three more: never four of one face.
        var lost = Driver()
        for _ in 0..<3 { try frame(&lost, enclosure: 60) }
        try frame(&lost, enclosure: nil, noFace: true)
        for _ in 0..<3 { try frame(&lost, enclosure: 60) }
        XCTAssertNil(lost.machine.verdict)
        try frame(&lost, enclosure: 60)
        XCTAssertEqual(lost.machine.evidence.recapture.status, .recaptured, "the fourth of the new face")
        // A live face measured 0 for a second, then another face (a phone raised before it, its
        // box 150 px away) enclosed: decided on the new face's fourth frame, not diluted by the
        // live face's measurements.
        var jump = Driver()
        for _ in 0..<25 { try frame(&jump, enclosure: 0) }
        let phone = FaceBox(x: 250, y: 100, width: 60, height: 60)
        for _ in 0..<10 where jump.machine.verdict == nil { try frame(&jump, enclosure: 60, box: phone) }
        XCTAssertEqual(verdictFrame(jump), 28)
        // The same box drifting by less than half its width is the same face: no restart.
        var drift = Driver()
        for i in 0..<3 { try frame(&drift, enclosure: 0, box: FaceBox(x: 100 + Double(i) * 40, y: 100, width: 100, height: 100)) }
        XCTAssertEqual(drift.machine.evidence.recapture.framesMeasured, 3)
        try frame(&drift, enclosure: 0, box: FaceBox(x: 220, y: 100, width: 100, height: 100))
        XCTAssertEqual(drift.machine.evidence.recapture.status, .live, "four measurements of one face")
    }

    func testAPassWaitsWhileTheFollowedFaceHasFewerThanFourMeasurements() throws {
        // A session whose actions complete on the second and third frames of a newly followed
        // face: the pass waits for its fourth measurement, and a recaptured face then fails.
        func session(enclosure: Double) throws -> Driver {
            var d = Driver()
            try d.startScan(face(box: box))          // frames 0…10, unmeasured
            try frame(&d, enclosure: nil, noFace: true)  // frame 11: lost
            try frame(&d, enclosure: enclosure, face: face(closure: 0.9, box: box))  // 12: blink
            try frame(&d, enclosure: enclosure, face: face(yaw: 12, box: box))       // 13: turned
            try frame(&d, enclosure: enclosure, face: face(yaw: 12, box: box))       // 14: turn held
            try frame(&d, enclosure: enclosure, face: face(yaw: 12, box: box))       // 15: fourth measurement
            return d
        }
        let live = try session(enclosure: 0)
        XCTAssertEqual(live.machine.evidence.actions.map(\.action), [.blink, .turnHead])
        XCTAssertEqual(live.machine.evidence.actions.last?.frameIndex, 14, "the turn is credited where it completes")
        XCTAssertEqual(live.machine.verdict?.status, .passed)
        XCTAssertEqual(live.machine.evidence.snapshot?.frameIndex, 15, "the pass waited for the fourth measurement")
        let screen = try session(enclosure: 80)
        XCTAssertEqual(screen.machine.verdict?.reason, .presentationAttack)
        XCTAssertEqual(screen.machine.verdict?.frameIndex, 15)
        XCTAssertNil(screen.machine.evidence.snapshot)
    }

    func testWithoutMeasurementsNothingIsDecidedOrHeld() throws {
        // ARKit-style input carries no enclosure: the session passes on the frame completing the
        // second action, and the check says it was not evaluated.
        var d = Driver()
        try d.startScan()
        try d.frame(face(closure: 0.9))
        try d.frame(face(yaw: 12))
        try d.frame(face(yaw: 12))
        XCTAssertEqual(d.machine.verdict?.status, .passed)
        XCTAssertEqual(d.machine.evidence.snapshot?.frameIndex, 13)
        XCTAssertEqual(d.machine.evidence.recapture.status, .notEvaluated)
        XCTAssertEqual(d.machine.evidence.recapture.framesMeasured, 0)
    }

    func testTheSwitchTurnsTheCheckOff() throws {
        var policy = LivenessPolicy()
        policy.recaptureCheck = 0
        var d = Driver(policy: policy)
        for _ in 0..<20 { try frame(&d, enclosure: 200) }
        XCTAssertNil(d.machine.verdict)
        XCTAssertEqual(d.machine.evidence.recapture.status, .off)
        XCTAssertEqual(d.machine.evidence.recapture.framesMeasured, 0)
    }

    func testANonFiniteEnclosureIsRefused() throws {
        var d = Driver()
        XCTAssertThrowsError(try d.machine.observe(Observation(frameIndex: 0, timestampMicroseconds: 0, face: face(box: box),
                                                                borderEnclosure: .nan)))
        XCTAssertEqual(d.machine.evidence.framesRead, 0, "a refused frame changes nothing")
    }

    func testTheRecaptureKeysAreInTheBoundsTable() {
        for key in ["recaptureCheck", "recaptureMinEnclosure", "recaptureWindowSeconds"] {
            XCTAssertNotNil(LivenessPolicy.bound(forKey: key), key)
        }
        var weaker = LivenessPolicy()
        weaker.recaptureMinEnclosure = 40
        XCTAssertEqual(weaker.weakerThanSpec.map(\.key), ["recaptureMinEnclosure"])
        weaker = LivenessPolicy()
        weaker.recaptureWindowSeconds = 2
        XCTAssertEqual(weaker.weakerThanSpec.map(\.key), ["recaptureWindowSeconds"])
        weaker = LivenessPolicy()
        weaker.recaptureCheck = 0
        XCTAssertEqual(weaker.weakerThanSpec.map(\.key), ["recaptureCheck"])
    }
}
