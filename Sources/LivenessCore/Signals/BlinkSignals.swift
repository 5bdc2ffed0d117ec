/// The blink rule's per-session state, frame by frame: the eyes' closures against their open-eye
/// baseline (`EyeClosureEstimator`), their vertical-edge shares against their own levels
/// (`EyeEdgeBaseline`) and the blink episode (`BlinkEpisode`). `LivenessMachine` judges blinks with
/// it; the regression suite runs the same value over whole clips, past the machine's verdict.
///
/// Per frame with a face: `read` measures, `step` takes the frame into the episode (true when it
/// credits a blink); a frame without a face `reset`s the episode.
public struct BlinkSignals: Sendable, Equatable {
    /// What one frame with a face reads.
    public struct Reading: Sendable, Equatable {
        /// Subject's left and right eye closures, 0…1 (nil during warm-up).
        public var closureLeft: Double?
        public var closureRight: Double?
        /// Mean closure of the two eyes against the open-eye baseline alone (the slow-closure
        /// rule's reading; nil during warm-up or when the closures were given).
        public var closureAgainstBaseline: Double?
        /// The eyes' vertical-edge shares against their own recent levels (nil: not measured, or
        /// no levels yet).
        public var edgeRelative: Double?
        /// The eye-edge check sees open eyes (`EyeEdgeBaseline.vetoes`).
        public var openByEdges: Bool

        /// Mean of the two closures, when both exist.
        public var closureMean: Double? {
            guard let l = closureLeft, let r = closureRight else { return nil }
            return (l + r) / 2
        }

        public init(closureLeft: Double?, closureRight: Double?, closureAgainstBaseline: Double?, edgeRelative: Double?,
                    openByEdges: Bool) {
            self.closureLeft = closureLeft
            self.closureRight = closureRight
            self.closureAgainstBaseline = closureAgainstBaseline
            self.edgeRelative = edgeRelative
            self.openByEdges = openByEdges
        }

        /// Whether the frame's eyes count as closed: the eye-edge check did not see open eyes,
        /// and either the mean closure reaches `blinkClosureThreshold` or — a slow closure — the
        /// closure against the open-eye baseline reaches `eyeSlowClosureThreshold` while the
        /// relative edge share is at most `eyeSlowClosureEdgeRatio` (with `eyeEdgeCheck` on).
        public func isClosed(policy: LivenessPolicy) -> Bool {
            guard let mean = closureMean, !openByEdges else { return false }
            if mean >= policy.blinkClosureThreshold { return true }
            guard policy.eyeEdgeCheck != 0, policy.eyeSlowClosureEdgeRatio > 0,
                  let held = closureAgainstBaseline, let relative = edgeRelative else { return false }
            return held >= policy.eyeSlowClosureThreshold && relative <= policy.eyeSlowClosureEdgeRatio
        }
    }

    private let policy: LivenessPolicy
    private var eyes: EyeClosureEstimator
    private var edges: EyeEdgeBaseline
    private var episode: BlinkEpisode

    public init(policy: LivenessPolicy) {
        self.policy = policy
        eyes = EyeClosureEstimator(policy: policy)
        edges = EyeEdgeBaseline(windowSeconds: policy.eyeEdgeWindowSeconds, percentile: policy.eyeEdgePercentile,
                                minimumFrames: policy.eyeEdgeMinimumFrames)
        episode = BlinkEpisode(policy: policy)
    }

    /// Whether a blink episode is open after the latest frame.
    public var episodeOpen: Bool { episode.closed }

    /// Measures a frame with a face at `timestampMicroseconds`: closures from its aspect ratios
    /// (or as given), edge shares against their levels.
    public mutating func read(_ face: FaceObservation, timestampMicroseconds t: Int64) -> Reading {
        var reading = Reading(closureLeft: nil, closureRight: nil, closureAgainstBaseline: nil, edgeRelative: nil, openByEdges: false)
        switch face.eyes {
        case let .closure(l, r):
            reading.closureLeft = l
            reading.closureRight = r
        case let .aspectRatio(l, r):
            let c = eyes.update(leftEAR: l, rightEAR: r, pitchDegrees: face.pitchDegrees,
                                eyeDistancePixels: face.eyeDistancePixels, timestampMicroseconds: t)
            reading.closureLeft = c?.left
            reading.closureRight = c?.right
            reading.closureAgainstBaseline = eyes.againstBaseline?.mean
        }
        if face.eyeEdgeLeft != nil || face.eyeEdgeRight != nil {
            reading.edgeRelative = edges.update(left: face.eyeEdgeLeft, right: face.eyeEdgeRight, timestampMicroseconds: t)
            reading.openByEdges = EyeEdgeBaseline.vetoes(left: face.eyeEdgeLeft, right: face.eyeEdgeRight,
                                                         relative: reading.edgeRelative, policy: policy)
        }
        return reading
    }

    /// Takes a frame with a face (its `reading`) into the blink episode; returns true when the
    /// frame credits a blink (`credited`: it may count towards an action).
    public mutating func step(_ reading: Reading, face: FaceObservation, timestampMicroseconds t: Int64, credited: Bool) -> Bool {
        let threshold = policy.blinkClosureThreshold
        let mean = reading.closureMean ?? 0
        return episode.update(closedNow: reading.isClosed(policy: policy), closureBelow: mean < threshold,
                              edgeRelative: reading.edgeRelative, edgeLeft: face.eyeEdgeLeft, edgeRight: face.eyeEdgeRight,
                              timestampMicroseconds: t, lidsOpen: mean <= policy.eyeReopenClosure, credited: credited)
    }

    /// A frame without a face: any episode ends.
    public mutating func reset() { episode.reset() }
}
