/// What the frozen-input check found, for the report (`presentationAttack.frozen`).
public struct FrozenEvidence: Sendable, Equatable, Codable {
    /// The outcome.
    public enum Status: String, Sendable, Codable {
        /// The check is switched off (`LivenessPolicy.frozenCheck` 0).
        case off
        /// No frame difference was measured (ARKit traces and engine traces written before the
        /// `frame_difference` column carry none).
        case notEvaluated
        /// The frames changed as a camera's do.
        case live
        /// The picture stayed unchanged for `frozenSeconds`: the session failed with
        /// `presentationAttack`.
        case frozen
    }

    /// The outcome.
    public var status: Status
    /// The longest run of consecutive frames whose difference from the previous frame was at most
    /// `LivenessPolicy.frozenMaxDifference`, in frames, and its duration in seconds (first to
    /// last frame of the run, plus the step into it).
    public var longestRunFrames: Int
    /// Duration of that run in seconds.
    public var longestRunSeconds: Double
    /// Frames that carried a difference.
    public var framesMeasured: Int

    /// Creates frozen-input evidence.
    public init(status: Status, longestRunFrames: Int, longestRunSeconds: Double, framesMeasured: Int) {
        self.status = status
        self.longestRunFrames = longestRunFrames
        self.longestRunSeconds = longestRunSeconds
        self.framesMeasured = framesMeasured
    }
}

/// The frozen-input check (docs/presentation-attacks.md): a camera's frames always differ (sensor
/// noise, a live subject), a frozen decoder or an injected still repeats the same picture. Each
/// observation may carry `Observation.frameDifference`, the mean absolute difference in grey
/// levels between the frame's small grey thumbnail and the previous frame's (measured by the
/// front end). A run of frames whose difference stays at or below `frozenMaxDifference`, lasting
/// `frozenSeconds` (from the frame before the run, the last one that changed, to the run's last
/// frame), fails the session with `presentationAttack`. A frame without a difference ends a run.
struct FrozenCheck: Sendable {
    private let enabled: Bool
    private let maxDifference: Double
    private let limitMicroseconds: Int64
    private var runStart: Int64?
    private var runFrames = 0
    private var previousTimestamp: Int64?
    private(set) var evidence: FrozenEvidence

    init(policy: LivenessPolicy) {
        enabled = policy.frozenCheck != 0
        maxDifference = policy.frozenMaxDifference
        limitMicroseconds = microseconds(policy.frozenSeconds)
        evidence = FrozenEvidence(status: enabled ? .notEvaluated : .off, longestRunFrames: 0, longestRunSeconds: 0, framesMeasured: 0)
    }

    /// Observes a frame's difference at `t` µs; returns true when the input is judged frozen.
    mutating func observe(difference: Double?, at t: Int64) -> Bool {
        defer { previousTimestamp = t }
        guard enabled else { return false }
        guard let d = difference else {
            runStart = nil
            runFrames = 0
            return false
        }
        evidence.framesMeasured += 1
        if evidence.status == .notEvaluated { evidence.status = .live }
        guard d <= maxDifference else {
            runStart = nil
            runFrames = 0
            return false
        }
        if runStart == nil { runStart = previousTimestamp ?? t }
        runFrames += 1
        let duration = t - runStart!
        if runFrames > evidence.longestRunFrames {
            evidence.longestRunFrames = runFrames
            evidence.longestRunSeconds = Double(duration) / 1e6
        }
        if duration >= limitMicroseconds {
            evidence.status = .frozen
            return true
        }
        return false
    }
}
