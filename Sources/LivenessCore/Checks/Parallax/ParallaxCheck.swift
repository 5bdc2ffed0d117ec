/// What the parallax check found, for the report (`presentationAttack.parallax`).
public struct ParallaxEvidence: Sendable, Equatable, Codable {
    /// The outcome.
    public enum Status: String, Sendable, Codable {
        /// The check is switched off (`LivenessPolicy.parallaxCheck` 0).
        case off
        /// Not evaluated: no turn was credited yet, or none of the turn's frames had reliable
        /// landmarks (ARKit traces carry none; older engine traces lack the residual column).
        case notEvaluated
        /// The turn moved the landmarks out of any plane: depth, as a real head shows.
        case depth
        /// One homography explained the turn: a flat picture. The session failed with
        /// `presentationAttack`.
        case flat
    }

    /// The outcome.
    public var status: Status
    /// The largest parallax residual over the judged turn's frames with reliable landmarks
    /// (fraction of the eye-centre distance); `nil` when not evaluated.
    @NullWhenAbsent public var residual: Double?
    /// The threshold it was compared with (`LivenessPolicy.parallaxMinResidual`).
    public var threshold: Double
    /// Frames of the judged turn whose residual decided.
    public var framesUsed: Int
    /// Frames of the judged turn without a reliable residual (none measured, or an eye distance
    /// below `LivenessPolicy.parallaxMinEyeDistancePixels`): they did not decide.
    public var framesUnreliable: Int
    /// The index of the frame that completed the judged turn, once one was judged.
    @NullWhenAbsent public var frameIndex: Int?

    /// Creates parallax evidence.
    public init(status: Status, residual: Double?, threshold: Double, framesUsed: Int, framesUnreliable: Int, frameIndex: Int?) {
        self.status = status
        self.residual = residual
        self.threshold = threshold
        self.framesUsed = framesUsed
        self.framesUnreliable = framesUnreliable
        self.frameIndex = frameIndex
    }

    private enum CodingKeys: String, CodingKey { case status, residual, threshold, framesUsed, framesUnreliable, frameIndex }
}

/// The parallax check of a turn (docs/presentation-attacks.md).
///
/// A real head that turns moves its landmarks in depth; a flat photo or screen, however it is
/// swung, tilted or moved, maps its landmarks from the frontal reference frame to any other frame
/// by one homography. Each observation carries that homography's residual
/// (`FaceObservation.planarResidual`, measured by the front end against the autoshot frame). The
/// machine collects the residuals of the frames of the current turn run; when the run credits
/// the turn, the largest residual among its frames with reliable landmarks is compared with
/// `parallaxMinResidual`: below it the turn was made by a flat picture. Frames without a residual
/// or with an eye distance below `parallaxMinEyeDistancePixels` do not decide; a turn without any
/// reliable frame is not evaluated and stands. The largest residual is used so that a single
/// frame of depth is enough for a live face (the error the check must not make is refusing one).
struct ParallaxCheck: Sendable {
    private let enabled: Bool
    private let threshold: Double
    private let minEyeDistancePixels: Double
    private var residuals: [Double] = []
    private var unreliable = 0

    init(policy: LivenessPolicy) {
        enabled = policy.parallaxCheck != 0
        threshold = policy.parallaxMinResidual
        minEyeDistancePixels = policy.parallaxMinEyeDistancePixels
    }

    /// The evidence before any turn is judged.
    var initialEvidence: ParallaxEvidence {
        ParallaxEvidence(status: enabled ? .notEvaluated : .off, residual: nil, threshold: threshold,
                         framesUsed: 0, framesUnreliable: 0, frameIndex: nil)
    }

    /// A new turn run starts.
    mutating func startRun() {
        residuals.removeAll(keepingCapacity: true)
        unreliable = 0
    }

    /// A frame of the current turn run.
    mutating func add(_ face: FaceObservation) {
        if let r = face.planarResidual, (face.eyeDistancePixels ?? 0) >= minEyeDistancePixels {
            residuals.append(r)
        } else {
            unreliable += 1
        }
    }

    /// The judgement of the run that credits a turn on frame `frameIndex`.
    func judge(frameIndex: Int) -> ParallaxEvidence {
        guard enabled else { return initialEvidence }
        guard let largest = residuals.max() else {
            return ParallaxEvidence(status: .notEvaluated, residual: nil, threshold: threshold, framesUsed: 0,
                                    framesUnreliable: unreliable, frameIndex: frameIndex)
        }
        return ParallaxEvidence(status: largest < threshold ? .flat : .depth, residual: largest, threshold: threshold,
                                framesUsed: residuals.count, framesUnreliable: unreliable, frameIndex: frameIndex)
    }
}
