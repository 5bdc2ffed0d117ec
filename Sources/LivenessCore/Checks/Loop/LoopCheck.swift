/// What the looped-input check found, for the report (`presentationAttack.looped`).
public struct LoopEvidence: Sendable, Equatable, Codable {
    /// The outcome.
    public enum Status: String, Sendable, Codable {
        /// The check is switched off (`LivenessPolicy.loopCheck` 0).
        case off
        /// No repetition was measured (ARKit traces, engine traces without the `repeat_*`
        /// columns, no face yet).
        case notEvaluated
        /// Nothing repeated an earlier stretch.
        case live
        /// A moving stretch repeated an earlier one for `loopSeconds`: the session failed with
        /// `presentationAttack`.
        case looped
    }

    /// The outcome.
    public var status: Status
    /// The longest repeated stretch that moved (see `LoopCheck`), seconds.
    public var longestRepeatSeconds: Double
    /// How far back the stretch it repeats lies, seconds (nil when there is none).
    @NullWhenAbsent public var lagSeconds: Double?
    /// Frames that carried a repetition measurement.
    public var framesMeasured: Int

    /// Creates looped-input evidence.
    public init(status: Status, longestRepeatSeconds: Double, lagSeconds: Double?, framesMeasured: Int) {
        self.status = status
        self.longestRepeatSeconds = longestRepeatSeconds
        self.lagSeconds = lagSeconds
        self.framesMeasured = framesMeasured
    }

    private enum CodingKeys: String, CodingKey { case status, longestRepeatSeconds, lagSeconds, framesMeasured }
}

/// The looped-input check (docs/presentation-attacks.md): a recording played in a loop repeats
/// an earlier stretch of the session, motion and all, to within compression noise; a live
/// subject never repeats a moving stretch that exactly. Each observation may carry
/// `Observation.repetition` (measured by the front end): how far back the earlier frame it matches
/// best lies, the difference from it, and the frame's own motion. A run of frames matching at one
/// lag (moving by at most `lagToleranceSeconds` or half a frame interval from frame to frame) with a difference at most `loopMaxDifference` is a repeat;
/// it is a loop when it lasts `loopSeconds` (from the frame before the run) and it moved: at
/// some frame of the run the picture had changed over the last half second, all of it inside the
/// run (`Repetition.motion`), by at least `loopMinMotion` grey levels and by at least
/// `loopMinMotionRatio` times the run's mean difference from the stretch it repeats (a still
/// picture repeats itself trivially: that is the frozen check's case; a live subject who holds
/// still matches earlier frames about as closely as it moves).
struct LoopCheck: Sendable {
    private let enabled: Bool
    private let maxDifference: Double
    private let minMotion: Double
    private let minRatio: Double
    private let limitMicroseconds: Int64
    private var runStart: Int64?
    private var runLag = 0.0
    private var runFrames = 0
    private var runMotion = 0.0
    private var runDifference = 0.0
    private var previousTimestamp: Int64?
    private(set) var evidence: LoopEvidence
    /// How far the lag may move from one frame of a run to the next, seconds: where the picture
    /// changes slowly, neighbouring frames of the earlier stretch match about equally well.
    static let lagToleranceSeconds = 0.1

    init(policy: LivenessPolicy) {
        enabled = policy.loopCheck != 0
        maxDifference = policy.loopMaxDifference
        minMotion = policy.loopMinMotion
        minRatio = policy.loopMinMotionRatio
        limitMicroseconds = microseconds(policy.loopSeconds)
        evidence = LoopEvidence(status: enabled ? .notEvaluated : .off, longestRepeatSeconds: 0, lagSeconds: nil, framesMeasured: 0)
    }

    /// Observes a frame's repetition at `t` µs; returns true when the input is judged looped.
    mutating func observe(_ r: Repetition?, at t: Int64) -> Bool {
        let interval = previousTimestamp.map { Double(t - $0) / 1e6 } ?? 0
        defer { previousTimestamp = t }
        guard enabled else { return false }
        guard let r, r.difference <= maxDifference else {
            if r != nil { countMeasured() }
            runStart = nil
            return false
        }
        countMeasured()
        if runStart != nil, abs(r.lagSeconds - runLag) <= max(interval / 2, Self.lagToleranceSeconds) {
            runLag = r.lagSeconds
            runFrames += 1
            runDifference += r.difference
            // Only motion within the run counts: the span must start inside it.
            if t - runStart! >= microseconds(Repetition.motionSpanSeconds) { runMotion = max(runMotion, r.motion) }
        } else {
            runStart = previousTimestamp ?? t
            runLag = r.lagSeconds
            runFrames = 1
            runMotion = 0
            runDifference = r.difference
        }
        // The stretch moved: at some frame it had changed from half a second before by at least
        // `minMotion`, and by `minRatio` times its mean difference from the stretch it repeats.
        let meanDifference = runDifference / Double(runFrames)
        guard runMotion >= minMotion, runMotion >= minRatio * meanDifference else { return false }
        let duration = t - runStart!
        if Double(duration) / 1e6 > evidence.longestRepeatSeconds {
            evidence.longestRepeatSeconds = Double(duration) / 1e6
            evidence.lagSeconds = runLag
        }
        if duration >= limitMicroseconds {
            evidence.status = .looped
            return true
        }
        return false
    }

    private mutating func countMeasured() {
        evidence.framesMeasured += 1
        if evidence.status == .notEvaluated { evidence.status = .live }
    }
}
