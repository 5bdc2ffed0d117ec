import FaceTracking
import LivenessCore

/// The eye-edge check's measurer: each eye's share of vertical edges (`EyeEdges`), which the
/// blink rule reads against the eye's own level (`EyeEdgeBaseline`: a closure the pixels see as
/// open is not a blink). Measured also after the verdict when the session runs on (the regression
/// suite measures blinks over whole clips).
final class EyeEdgeMeasurer: CheckMeasurer {
    func measure(_ frame: CheckFrame, machine: LivenessMachine, into result: inout FaceObserver.Result) {
        guard let face = frame.measurement.face, result.observation.face != nil,
              let edges = try? EyeEdges.measure(gray: frame.gray, landmarks: face.landmarks) else { return }
        let q = NumberFormat.quantized
        result.observation.face?.eyeEdgeLeft = edges.left.map(q)
        result.observation.face?.eyeEdgeRight = edges.right.map(q)
        result.record.eyeEdgeLeft = edges.left.map(q)
        result.record.eyeEdgeRight = edges.right.map(q)
    }
}
