import FaceTracking
import LivenessCore

/// The frontal reference of the parallax check and each frame's residual against it
/// (`FaceParallax.residual`, quantized to trace precision so that a replayed trace feeds the
/// machine the same value).
///
/// The reference is the face's 68 landmarks on the autoshot frame (the frame the baseline yaw is
/// taken at), or, when the autoshot had no face (the framing fallback), on the first later frame
/// with one. Frames before the reference get no residual.
struct ParallaxReference {
    private var landmarks: [Point]?

    /// The residual of `measurement`'s face against the reference; `nil` without a face, before
    /// the reference exists, or when no homography fits.
    func residual(of measurement: FrameMeasurement) -> Double? {
        guard let reference = landmarks, let face = measurement.face else { return nil }
        guard let r = try? FaceParallax.residual(reference: reference, landmarks: face.landmarks), r.isFinite else { return nil }
        // Any residual far above the threshold means the same; the cap keeps it in the trace range.
        return NumberFormat.quantized(min(r, 100))
    }

    /// Takes the reference from `measurement` once the machine has taken its autoshot
    /// (`scanning`), if it has none yet and the frame has a face.
    mutating func update(scanning: Bool, measurement: FrameMeasurement) {
        guard landmarks == nil, scanning, let face = measurement.face, face.landmarks.count == 68 else { return }
        landmarks = face.landmarks
    }
}
