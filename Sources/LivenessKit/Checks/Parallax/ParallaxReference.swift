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

    /// Whether the reference has been taken (frames before it get no residual).
    var hasReference: Bool { landmarks != nil }

    /// The residual of `measurement`'s face (on a frame of `width` × `height` pixels) against the
    /// reference; `nil` without a face, before the reference exists, when a landmark lies outside
    /// the frame, or when no homography fits.
    func residual(of measurement: FrameMeasurement, width: Int, height: Int) -> Double? {
        guard let reference = landmarks, let face = measurement.face,
              Self.inside(face.landmarks, width: width, height: height) else { return nil }
        guard let r = try? FaceParallax.residual(reference: reference, landmarks: face.landmarks), r.isFinite else { return nil }
        // Any residual far above the threshold means the same; the cap keeps it in the trace range.
        return NumberFormat.quantized(min(r, 100))
    }

    /// Takes the reference from `measurement` (a frame of `width` × `height` pixels) once the
    /// machine has taken its autoshot (`scanning`), if it has none yet and the frame has a whole face.
    mutating func update(scanning: Bool, measurement: FrameMeasurement, width: Int, height: Int) {
        guard landmarks == nil, scanning, let face = measurement.face, face.landmarks.count == 68,
              Self.inside(face.landmarks, width: width, height: height) else { return }
        landmarks = face.landmarks
    }

    /// Whether every landmark lies within the frame of `width` × `height` pixels.
    static func inside(_ points: [Point], width: Int, height: Int) -> Bool {
        let w = Double(width), h = Double(height)
        return points.allSatisfy { $0.x >= 0 && $0.y >= 0 && $0.x <= w && $0.y <= h }
    }
}

/// The parallax check's measurer (its decision: `ParallaxCheck`): the residual only where the
/// machine reads it (frames that join a turn run before the turn is credited), unless every
/// frame's is asked for (`everyFrame`: a trace); the reference is taken once the machine has its
/// autoshot.
final class ParallaxMeasurer: CheckMeasurer {
    private var reference = ParallaxReference()
    /// Measure on every frame with a face once the reference exists (`FrameProcessor.planarResidualOnEveryFrame`).
    var everyFrame = false

    func measure(_ frame: CheckFrame, machine: LivenessMachine, into result: inout FaceObserver.Result) {
        guard reference.hasReference, frame.measurement.face != nil,
              everyFrame || machine.readsPlanarResidual(result.observation),
              let residual = reference.residual(of: frame.measurement, width: frame.frame.width, height: frame.frame.height)
        else { return }
        result.observation.face?.planarResidual = residual
        result.record.planarResidual = residual
    }

    func machineObserved(_ frame: CheckFrame, machine: LivenessMachine) {
        reference.update(scanning: machine.evidence.autoshot != nil, measurement: frame.measurement,
                         width: frame.frame.width, height: frame.frame.height)
    }
}
