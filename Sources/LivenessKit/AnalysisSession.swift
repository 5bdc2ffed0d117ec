import FaceTracking
import LivenessCore

/// One frame of an analysis: the decoded frame (borrowed: valid only during the callback),
/// what was measured, what the machine made of it and the events it caused.
public struct AnalysisStep {
    public var frame: Image
    public var observation: Observation
    public var measurement: FrameMeasurement
    public var assessment: FrameAssessment
    public var events: [LivenessEvent]
    /// The frame's trace record, core-derived columns filled in.
    public var record: TraceRecord
}

/// What an analysis ended with.
public struct AnalysisOutcome {
    /// The machine after the last frame (verdict and evidence).
    public var machine: LivenessMachine
    /// Frames decoded (including frames rejected for their timestamps).
    public var framesDecoded: Int
    /// Frames rejected because their timestamps did not increase, with the first problem.
    public var framesRejected: Int
    public var warnings: [String]
    /// Wall-clock time of the run, seconds.
    public var wallSeconds: Double
}

/// Drives one input through the tracker and the liveness state machine, frame by frame. The
/// same machine and the same observations serve `trace`, `analyze` and replay.
public final class AnalysisSession {
    public let source: FrameSource
    public private(set) var machine: LivenessMachine
    private let observer: FaceObserver
    private let stopAtVerdict: Bool
    private let rotation: RotationProvider?
    /// What the input may cost (frame size, frame rate, decoding); see `ResourceLimits`.
    public let limits: ResourceLimits

    /// - Parameters:
    ///   - stopAtVerdict: stop decoding at the verdict (analysis); `false` traces every frame.
    ///   - rotation: where each frame's device angular speed comes from (nil: unknown).
    ///   - tracking: the tracker's settings; the guide circle is taken from `policy`.
    ///   - limits: what the input may cost; the decoded-megapixel budget applies when stopping at
    ///     the verdict (a trace reads whole files, its cost follows their duration).
    public init(source: FrameSource, model: LandmarkModel, policy: LivenessPolicy, seed: UInt64,
                keepLandmarks: Bool = false, stopAtVerdict: Bool = true, rotation: RotationProvider? = nil,
                tracking: TrackerConfiguration = .init(), limits: ResourceLimits = .standard) throws(InputError) {
        self.source = source
        self.limits = limits
        var configuration = tracking
        configuration.guideCenterX = policy.guideCenterX
        configuration.guideCenterY = policy.guideCenterY
        configuration.guideRadius = policy.guideRadius
        do {
            observer = FaceObserver(tracker: try FaceTracker(model: model, configuration: configuration))
        } catch {
            throw InputError(path: source.path, error)
        }
        observer.keepLandmarks = keepLandmarks
        machine = LivenessMachine(policy: policy, seed: seed)
        self.stopAtVerdict = stopAtVerdict
        self.rotation = rotation
    }

    /// Decodes and judges frames until the input ends (or the verdict, when stopping there),
    /// calling `body` for each; then ends the session with `inputEnded` if no verdict came.
    public func run(_ body: (AnalysisStep) throws -> Void) throws -> AnalysisOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        let frame = Image()
        var index = 0
        var decoded = 0
        var rejected = 0
        var warnings: [String] = []
        var previous: Int64?
        var budget = ResourceBudget(limits: limits, boundDecoding: stopAtVerdict)
        if let info = source.videoInfo { try budget.admit(path: source.path, declaredFramesPerSecond: info.framesPerSecond) }
        while true {
            var next: Int64?
            var failure: InputError?
            do {
                next = try source.next(into: frame)
            } catch {
                failure = error
            }
            if let failure {
                // A stream that breaks after some good frames ends there, like a truncated file.
                guard decoded > 0 else { throw failure }
                warnings.append("decoding stopped after \(decoded) frames: \(failure.problem)")
                break
            }
            guard let timestamp = next else { break }
            decoded += 1
            try budget.count(path: source.path, width: frame.width, height: frame.height, timestamp: timestamp)
            if let previous, timestamp <= previous {
                // The spec: a frame whose timestamp does not increase is rejected and does not
                // advance the session. Count it and say so once.
                rejected += 1
                if rejected == 1 {
                    warnings.append("\(source.path): frame \(decoded - 1) has timestamp \(timestamp) µs, not after \(previous) µs; such frames are skipped")
                }
                continue
            }
            previous = timestamp
            let deviceRotation = try rotation?.rotation(for: frame, timestampMicroseconds: timestamp) ?? .unknown
            let result: FaceObserver.Result
            do {
                result = try observer.observe(frame, index: index, timestampMicroseconds: timestamp, rotation: deviceRotation)
            } catch {
                throw InputError(path: source.path, error)
            }
            rotation?.didObserve(result.measurement)
            let step = try machine.observe(result.observation)
            var record = result.record
            record.fill(from: step.frame)
            try body(AnalysisStep(frame: frame, observation: result.observation, measurement: result.measurement,
                                  assessment: step.frame, events: step.events, record: record))
            index += 1
            if stopAtVerdict && machine.verdict != nil { break }
        }
        if machine.verdict == nil { _ = machine.finish(.inputEnded) }
        let elapsed = clock.now - start
        let seconds = elapsed.inSeconds
        return AnalysisOutcome(machine: machine, framesDecoded: decoded, framesRejected: rejected, warnings: warnings,
                               wallSeconds: seconds)
    }
}

/// Supplies the device angular speed of each frame: from motion samples, or estimated from the
/// video. Implementations keep whatever state they need between frames.
public protocol RotationProvider: AnyObject {
    /// The device rotation over the interval ending at this frame.
    func rotation(for frame: Image, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation
    /// Called after the face tracker measured the frame (to mask the face out next time).
    func didObserve(_ measurement: FrameMeasurement)
}

extension TraceRecord {
    /// Copies the machine's judgement of the frame into the record.
    mutating func fill(from a: FrameAssessment) {
        let q = NumberFormat.quantized
        eyeClosureLeft = a.eyeClosureLeft.map(q)
        eyeClosureRight = a.eyeClosureRight.map(q)
        relativeYawDegrees = a.relativeYawDegrees.map(q)
        credited = a.credited
        notCreditedReason = a.notCreditedReason?.rawValue
        phase = a.phase.rawValue
        hud = a.hud.name
    }
}
