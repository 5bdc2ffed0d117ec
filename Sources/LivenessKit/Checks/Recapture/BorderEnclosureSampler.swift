import FaceTracking
import LivenessCore

/// Measures how enclosed the face is by a screen's or a print's border (`FaceEnclosure`), for the
/// recapture check (`LivenessPolicy.recaptureCheck`, docs/presentation-attacks.md), on a schedule
/// that keeps its cost small: every frame with a face until `denseMeasurements` were taken of the
/// face being followed (so the check has a full window before the earliest moment a session can
/// pass, and again as soon as a new face is followed: a phone held up in front of the subject),
/// then one frame every `intervalSeconds` of media time. The value is `FaceEnclosure.enclosure`
/// (grey levels), quantized to trace precision. The decision is the pure machine's (`RecaptureCheck`).
final class BorderEnclosureSampler {
    /// Frames of a newly followed face measured one after the other (twice what the check needs
    /// to decide, `RecaptureRules.minimumMeasurements`).
    static let denseMeasurements = 2 * RecaptureRules.minimumMeasurements
    /// Media time between measurements after that, seconds.
    static let intervalSeconds = 0.2
    /// A face whose box centre moved by more than this share of its width since the previous
    /// frame is a new face (the tracker moved to another one).
    static let jumpShare = 0.5
    private var measurements = 0
    private var lastMeasured: Int64?
    private var previousBox: Rect?

    /// Records the face box of a frame (nil: no face) and says whether the frame, at `t` µs, is to
    /// be measured. Call on every frame, in order.
    func wants(box: Rect?, timestampMicroseconds t: Int64) -> Bool {
        defer { previousBox = box }
        guard let box else { return false }
        if let p = previousBox {
            let dx = box.center.x - p.center.x, dy = box.center.y - p.center.y
            if (dx * dx + dy * dy).squareRoot() > RecaptureRules.faceJumpShare * max(p.width, 1) { measurements = 0 }
        } else {
            measurements = 0
        }
        guard measurements >= Self.denseMeasurements, let last = lastMeasured else { return true }
        return Double(t - last) / 1e6 >= Self.intervalSeconds - 1e-6
    }

    /// The enclosure of `face` on `gray` (the frame's grey copy), grey levels; nil when the face
    /// cannot be measured (too small, degenerate landmarks). Counts towards the schedule.
    func measure(gray: Image, face: FaceMeasurement, timestampMicroseconds t: Int64) -> Double? {
        measurements += 1
        lastMeasured = t
        guard let e = try? FaceEnclosure.measure(gray: gray, box: face.box, landmarks: face.landmarks) else { return nil }
        return NumberFormat.quantized(e.enclosure)
    }
}

/// The recapture check's measurer (its decision: `RecaptureCheck`): on its schedule, never after
/// the verdict, and only when the policy has the check on.
extension BorderEnclosureSampler: CheckMeasurer {
    func measure(_ frame: CheckFrame, machine: LivenessMachine, into result: inout FaceObserver.Result) {
        guard machine.verdict == nil, machine.policy.recaptureCheck != 0,
              wants(box: frame.measurement.face?.box, timestampMicroseconds: frame.timestampMicroseconds),
              let face = frame.measurement.face,
              let value = self.measure(gray: frame.gray, face: face, timestampMicroseconds: frame.timestampMicroseconds)
        else { return }
        result.observation.borderEnclosure = value
        result.record.borderEnclosure = value
    }
}
