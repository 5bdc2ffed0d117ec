import FaceTracking
import LivenessCore

/// One frame as the checks' measurers see it (`FrameProcessor` makes one a frame).
struct CheckFrame {
    /// The upright BGR frame, borrowed.
    let frame: Image
    /// Its grey copy (the tracker's).
    let gray: Image
    /// The tracker's measurement of the frame: the followed face, if any.
    let measurement: FrameMeasurement
    /// The frame's timestamp, microseconds on the caller's clock.
    let timestampMicroseconds: Int64
}

/// The measuring half of a check: what the check reads from a frame's pixels, written into the
/// observation the machine judges and into the frame's trace record, quantized as the trace
/// writes it, so that a replayed trace gives the same judgement. The decision is the pure core's
/// (`LivenessCore/Checks/<Name>`); the measurer lives in `LivenessKit/Checks/<Name>`.
///
/// `FrameProcessor` runs its family of measurers on every frame, in order: `measure` before the
/// machine observes the frame, `machineObserved` after. A new check is one measurer here, added
/// to the family, and one decision in the core.
protocol CheckMeasurer: AnyObject {
    /// Measures `frame` into `result`, given the machine as it stands before the frame.
    func measure(_ frame: CheckFrame, machine: LivenessMachine, into result: inout FaceObserver.Result)
    /// Called once the machine has observed the frame (`machine` includes it).
    func machineObserved(_ frame: CheckFrame, machine: LivenessMachine)
}

extension CheckMeasurer {
    func machineObserved(_ frame: CheckFrame, machine: LivenessMachine) {}
}
