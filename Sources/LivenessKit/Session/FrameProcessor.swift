import FaceTracking
import LivenessCore

/// One frame of a session: the decoded frame (borrowed: valid only during the callback or until
/// the next frame), what was measured, what the machine made of it and the events it caused.
public struct AnalysisStep {
    /// The upright BGR frame, borrowed.
    public var frame: Image
    /// What the state machine consumed.
    public var observation: Observation
    /// The raw measurement (landmarks included).
    public var measurement: FrameMeasurement
    /// The machine's judgement of the frame.
    public var assessment: FrameAssessment
    /// The events the frame caused (HUD changes, autoshot, actions, snapshot, verdict).
    public var events: [LivenessEvent]
    /// The frame's trace record, core-derived columns filled in.
    public var record: TraceRecord
}

/// The one way frames become events, for every front end: `analyze` and `trace` (a loop over a
/// decoded file, `AnalysisSession`) and camera streams (`StreamSession`) push their frames here.
///
/// Per frame: the device rotation (motion samples or the video's background), the face tracker,
/// the measurements quantized to trace precision, the checks' measurers (`CheckMeasurer`: the
/// frozen and looped-input checks, the eye edges, the recapture check's border, the parallax
/// residual), the `LivenessMachine`, and the autoshot and snapshot frames kept as copies when the
/// machine names them. Timestamps are the caller's
/// (microseconds on any clock) and are made relative to the first frame; they must increase —
/// the front ends check that before calling, with the policy each needs (a file skips such a
/// frame with a warning, a stream answers with an error).
///
/// One processor per session; not thread-safe. The landmark model is shared read-only by every
/// processor of the process.
public final class FrameProcessor {
    /// The state machine after the frames pushed so far.
    public private(set) var machine: LivenessMachine
    /// The autoshot frame, a copy, once the machine has taken it.
    public private(set) var autoshot: Image?
    /// The snapshot frame, a copy, once the machine has taken it.
    public private(set) var snapshot: Image?
    /// Frames processed.
    public private(set) var framesProcessed = 0
    /// Measure the parallax residual against the autoshot frame on every frame with a face once
    /// the reference exists (`trace`, for measurements), rather than only on the frames the
    /// machine reads it from (`LivenessMachine.readsPlanarResidual`; the default: the same
    /// verdict and evidence, without a homography fit on every frame).
    public var planarResidualOnEveryFrame: Bool {
        get { parallax.everyFrame }
        set { parallax.everyFrame = newValue }
    }
    private let observer: FaceObserver
    private let parallax = ParallaxMeasurer()
    /// The checks' measurers (`CheckMeasurer`, `Checks/<Name>`), run in this order on every frame:
    /// the frozen and looped-input checks, the eye edges, the recapture check's border, then the
    /// parallax residual (which asks the machine whether it reads this frame's residual, from
    /// the observation the others filled in).
    private let checks: [CheckMeasurer]
    private var rotation: RotationProvider?
    /// When set, each frame's device rotation is estimated on a second thread while the face is
    /// tracked (same results; for a single input on an otherwise idle core).
    private var parallel: ParallelTask?
    /// The frame's grey copy when the caller gives none.
    private let grayScratch = Image()

    /// - Parameters:
    ///   - model: the landmark model (shared by all sessions of the process).
    ///   - policy: thresholds; the guide circle is passed on to the tracker.
    ///   - seed: seed of the challenge order.
    ///   - rotation: where each frame's device angular speed comes from (nil: unknown).
    ///   - tracking: the tracker's settings (the guide circle is taken from `policy`).
    ///   - keepLandmarks: keep the 68 landmarks in the trace records.
    ///   - plan: prompted mode: the prompts (`LivenessMachine.init(policy:seed:plan:)`); `nil` draws them from `seed`.
    public init(model: LandmarkModel, policy: LivenessPolicy, seed: UInt64, rotation: RotationProvider?,
                tracking: TrackerConfiguration = .init(), keepLandmarks: Bool = false,
                plan: ChallengePlan? = nil) throws(FaceTrackingError) {
        var configuration = tracking
        configuration.guide = GuideCircle(policy: policy)
        observer = FaceObserver(tracker: try FaceTracker(model: model, configuration: configuration))
        observer.keepLandmarks = keepLandmarks
        machine = LivenessMachine(policy: policy, seed: seed, plan: plan)
        self.rotation = rotation
        checks = [FrameDifference(), RepeatDetector(), EyeEdgeMeasurer(), BorderEnclosureSampler(), parallax]
    }

    deinit { parallel?.stop() }

    /// Estimates the device rotation beside the tracking, on a second thread (results unchanged).
    public func overlapRotationWithTracking(_ enabled: Bool) {
        if enabled && parallel == nil { parallel = ParallelTask() }
        if !enabled { parallel?.stop(); parallel = nil }
    }

    /// Replaces the rotation source (a stream that starts sending motion samples).
    public func setRotation(_ provider: RotationProvider?) { rotation = provider }

    /// Processes one upright BGR frame at `timestampMicroseconds` (which must exceed the previous
    /// frame's); returns what happened. After the verdict frames are only counted by the machine.
    public func process(_ frame: Image, timestampMicroseconds timestamp: Int64) throws -> AnalysisStep {
        try process(frame, gray: nil, timestampMicroseconds: timestamp)
    }

    /// The same, given `gray`, the frame's grey copy (`Image.gray(into:)`; a decoder running
    /// ahead can make it on its own thread). Without it the processor converts the frame once
    /// itself; either way one grey image serves the tracker and the rotation estimate.
    public func process(_ frame: Image, gray given: Image?, timestampMicroseconds timestamp: Int64) throws -> AnalysisStep {
        var deviceRotation = DeviceRotation.unknown
        var rotationFailure: InputError?
        let measurement: FrameMeasurement
        let gray: Image
        if let given {
            gray = given
        } else {
            try frame.gray(into: grayScratch)
            gray = grayScratch
        }
        let milliseconds = Double(timestamp) / 1000
        // A provider may leave the estimate until the frame is known to show a face
        // (`prepareDeferred`): after a frame without a face, the background flow runs only if
        // this one has a face (no frame without one is credited).
        var deferred = false
        if let rotation, let parallel {
            // The estimate uses the previous frame's face box (didObserve), never this frame's
            // tracking: the two can run at once and give what they give in turn.
            let box = RotationBox()
            parallel.start {
                do throws(InputError) {
                    if try rotation.prepareDeferred(for: frame, gray: gray, timestampMicroseconds: timestamp) {
                        box.deferred = true
                    } else {
                        box.value = try rotation.rotation(for: frame, gray: gray, timestampMicroseconds: timestamp)
                    }
                } catch {
                    box.failure = error
                }
            }
            do {
                measurement = try observer.tracker.process(frame, gray: gray, timestampMilliseconds: milliseconds)
            } catch {
                parallel.wait()
                throw error
            }
            parallel.wait()
            deviceRotation = box.value
            rotationFailure = box.failure
            deferred = box.deferred
        } else {
            if let rotation {
                deferred = try rotation.prepareDeferred(for: frame, gray: gray, timestampMicroseconds: timestamp)
                if !deferred { deviceRotation = try rotation.rotation(for: frame, gray: gray, timestampMicroseconds: timestamp) }
            }
            measurement = try observer.tracker.process(frame, gray: gray, timestampMilliseconds: milliseconds)
        }
        if let rotationFailure { throw rotationFailure }
        if deferred, let rotation { deviceRotation = try rotation.resolveDeferred(hasFace: measurement.face != nil) }
        var result = observer.observation(of: measurement, frame: frame, index: framesProcessed, timestampMicroseconds: timestamp,
                                          rotation: deviceRotation)
        let checked = CheckFrame(frame: frame, gray: gray, measurement: measurement, timestampMicroseconds: timestamp)
        for measurer in checks { measurer.measure(checked, machine: machine, into: &result) }
        rotation?.didObserve(result.measurement)
        let step = try machine.observe(result.observation)
        for measurer in checks { measurer.machineObserved(checked, machine: machine) }
        framesProcessed += 1
        for event in step.events {
            switch event {
            case .autoshot: autoshot = frame.copy()
            case .snapshot: snapshot = frame.copy()
            default: break
            }
        }
        var record = result.record
        record.fill(from: step.frame)
        return AnalysisStep(frame: frame, observation: result.observation, measurement: result.measurement,
                            assessment: step.frame, events: step.events, record: record)
    }

    /// Ends the session before a verdict (input ended, stream cancelled, invalid input); returns
    /// the verdict events, none when a verdict exists.
    public func finish(_ reason: FailureReason) -> [LivenessEvent] { machine.finish(reason) }
}

extension TraceRecord {
    /// Copies the machine's judgement of the frame into the record.
    mutating func fill(from a: FrameAssessment) {
        let q = NumberFormat.quantized
        eyeClosureLeft = a.eyeClosureLeft.map(q)
        eyeClosureRight = a.eyeClosureRight.map(q)
        relativeYawDegrees = a.relativeYawDegrees.map(q)
        eyeEdgeRelative = a.eyeEdgeRelative.map(q)
        eyeClosureBaseline = a.eyeClosureAgainstBaseline.map(q)
        eyesOpenByEdges = eyeEdgeLeft != nil || eyeEdgeRight != nil ? a.eyesOpenByEdges : nil
        eyesClosed = a.eyesClosedEpisode
        credited = a.credited
        notCreditedReason = a.notCreditedReason?.rawValue
        phase = a.phase.rawValue
        hud = a.hud.name
    }
}

/// A rotation estimate handed back from the parallel task.
private final class RotationBox: @unchecked Sendable {
    var value = DeviceRotation.unknown
    var deferred = false
    var failure: InputError?
}
