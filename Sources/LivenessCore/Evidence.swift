/// What the session found, for the report: the actions, the stills, and frame counts.
public struct Evidence: Sendable, Equatable, Codable {
    /// The seed of the challenge generator.
    public var seed: UInt64
    /// The drawn challenge order (not shown to the user; the user may do the actions in any order).
    public var challenge: [Action]
    /// The policy the session was judged with.
    public var policy: LivenessPolicy
    /// Credited actions, in the order they were credited.
    public var actions: [ActionEvidence] = []
    /// The autoshot, once taken.
    public var autoshot: StillCapture?
    /// The snapshot, once taken (passed sessions only).
    public var snapshot: StillCapture?
    /// The frontal yaw baseline in degrees, once taken (around the autoshot).
    public var yawBaselineDegrees: Double?
    /// Frames processed (up to and including the deciding frame).
    public var framesRead: Int = 0
    /// Processed frames with a tracked face.
    public var framesTracked: Int = 0
    /// Scan frames credited.
    public var framesCredited: Int = 0
    /// Scan frames with a face not credited because the device rotated at or above the limit.
    public var framesRotating: Int = 0
    /// Credited scan frames whose rotation was unknown.
    public var framesRotationUnknown: Int = 0
    /// Frames accepted after the verdict: counted, not processed.
    public var framesIgnoredAfterVerdict: Int = 0
    /// The parallax check of the turn (`ParallaxCheck`): off, not evaluated, depth or flat.
    public var parallax: ParallaxEvidence
    /// The frozen-input check (`FrozenCheck`): off, not evaluated, live or frozen.
    public var frozen: FrozenEvidence
    /// The looped-input check (`LoopCheck`): off, not evaluated, live or looped.
    public var looped: LoopEvidence
    /// The recapture check (`RecaptureCheck`): off, not evaluated, live or recaptured.
    public var recapture: RecaptureEvidence
    /// The continuity check (`ContinuityCheck`): off, not evaluated, live or cut.
    public var continuity: ContinuityEvidence
    /// The challenge: passive, or the prompted plan and every prompt shown with its answer.
    public var promptedChallenge: ChallengeEvidence

    /// Creates empty evidence for a session.
    public init(seed: UInt64, challenge: [Action], policy: LivenessPolicy) {
        self.seed = seed
        self.challenge = challenge
        self.policy = policy
        parallax = ParallaxCheck(policy: policy).initialEvidence
        frozen = FrozenCheck(policy: policy).evidence
        looped = LoopCheck(policy: policy).evidence
        recapture = RecaptureCheck(policy: policy).evidence
        continuity = ContinuityCheck(policy: policy).evidence
        promptedChallenge = ChallengeEvidence(mode: .passive, steps: [], source: "none", prompts: [])
    }
}
