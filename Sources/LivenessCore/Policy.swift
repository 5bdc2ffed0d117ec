/// Every threshold of the liveness check in one value. Defaults are the spec's numbers (and, for
/// the signal conditioning, the values measured on real footage; see `EyeClosureEstimator` and
/// `YawMedianFilter`). A report records the policy it was judged with.
///
/// `Codable`: decoding accepts a partial object; every absent key keeps its default, so a policy
/// file may contain only the values it overrides.
public struct LivenessPolicy: Sendable, Equatable, Codable {
    // MARK: Phases

    /// Seconds after the first frame that are not used for the autoshot (spec: 0.3 s).
    public var settleSeconds: Double = 0.3
    /// Seconds of framing after which the autoshot is taken anyway, marked fallback (spec: 2.5 s).
    public var framingTimeoutSeconds: Double = 2.5
    /// Consecutive in-guide framing frames needed for a framed autoshot, taken on the last (spec: 3).
    public var framedFramesRequired: Int = 3
    /// Scan cap in seconds, measured from the autoshot's timestamp (spec: 20 s).
    public var scanCapSeconds: Double = 20

    // MARK: Actions

    /// Mean closure of the two eyes (0…1) that credits a blink on one credited frame (spec: 0.22).
    public var blinkClosureThreshold: Double = 0.22
    /// Absolute relative yaw in degrees that counts towards a turn (spec: 7.5°).
    public var turnYawDegrees: Double = 7.5
    /// Consecutive credited frames at or beyond `turnYawDegrees`, same direction, to credit a turn (spec: 2).
    public var turnHeldFrames: Int = 2
    /// Device angular speed in °/s at or above which a frame is not credited (spec: 10 °/s).
    public var rotationLimitDegreesPerSecond: Double = 10

    // MARK: Guide circle

    /// Guide circle centre x, normalised 0…1 of the frame width (spec: 0.5).
    public var guideCenterX: Double = 0.5
    /// Guide circle centre y, normalised 0…1 of the frame height (spec: 0.5).
    public var guideCenterY: Double = 0.5
    /// Guide radius as a fraction of the frame's shorter side (spec: 0.3). Without a frame size
    /// it is compared in normalised units.
    public var guideRadius: Double = 0.3

    // MARK: Eye conditioning (`.aspectRatio` input only; see `EyeClosureEstimator`)

    /// Length in seconds of the trailing window of tracked frames whose EAR percentile is the fast
    /// open-eye baseline estimate.
    public var eyeBaselineWindowSeconds: Double = 1.0
    /// Percentile (0…1) of the window's EAR taken as the fast open-eye baseline estimate.
    public var eyeBaselinePercentile: Double = 0.75
    /// Time constant in seconds with which the held open-eye baseline falls towards a lower fast
    /// estimate (it rises at once): each frame it closes the fraction min(1, Δt / this) of the gap.
    /// Keeps the baseline on the open eye through runs of closures. 0 uses the fast estimate alone.
    public var eyeBaselineHoldSeconds: Double = 3.0
    /// Tracked frames the baseline window must hold before any closure is reported (warm-up).
    public var eyeWarmupFrames: Int = 5
    /// Seconds before the frame (current frame excluded) whose highest EAR, when below the
    /// baseline, is the reference a dip is measured from: a dip must develop within this time.
    /// 0 measures against the baseline alone.
    public var eyeDipReferenceSeconds: Double = 0.18
    /// Relative EAR dip (1 − EAR/reference) that is subtracted before scaling (a dead zone for squints).
    public var eyeClosureDeadZone: Double = 0.06
    /// Relative EAR dip, beyond the dead zone, that maps to closure 1.
    public var eyeClosureScale: Double = 1.0
    /// Relative EAR dip (1 − EAR/baseline) below which an eye counts as open: a dip counts only
    /// within `eyeMaxDipSeconds` of the eye's last open frame.
    public var eyeDipOnsetLevel: Double = 0.2
    /// Seconds a dip may have lasted (since the eye was last open) and still count as a blink.
    /// Longer dips (looking down, frowning, slow closures) report closure 0. 0 disables the rule.
    public var eyeMaxDipSeconds: Double = 0.45
    /// Seconds over which a dip must persist: each eye's closure is the minimum of its closures in
    /// this trailing window (an erosion). 0.045 s spans two frames at 25–30 fps and one at ≤ 20 fps.
    public var eyeDipConfirmSeconds: Double = 0.045
    /// Relative EAR dip (1 − EAR/reference) at or above which a frame's closure counts without
    /// confirmation (a fully closed eye on a single frame). Above 1 disables it.
    public var eyeDeepDipLevel: Double = 0.5
    /// Degrees by which the head pitch must fall below the median pitch of the trailing
    /// `eyeNodWindowSeconds` for the frame to count as a nod: its dip is not a blink, and the eye
    /// must be seen open again before a dip counts. 0 disables the rule.
    public var eyeNodPitchDegrees: Double = 6
    /// Seconds before the frame (current frame excluded) whose median pitch the nod rule compares with.
    public var eyeNodWindowSeconds: Double = 0.3
    /// Relative change of the eye distance from the previous tracked frame above which the
    /// landmark fit is taken to have jumped: no closure until the eye is seen open again.
    /// 0 disables the rule.
    public var eyeFitJumpRatio: Double = 0.25
    /// Eye-centre distance in pixels under which the eyes are too small for a closure to be read:
    /// no closure until the eye is seen open again at a size that resolves it. At 15 px the eye is
    /// about 6 px from corner to corner (0.41 of the eye-centre distance, median over lp-d14's
    /// frames) — the least the eye-edge patch measures — and its open lids about 2 px apart, so
    /// a pixel of landmark error reads as a half-closed eye. Measured on the shared clips at a
    /// third of their size (docs/blinks.md): 17 of 28 false blinks are under it, and 2 of 105 real
    /// ones. 0 disables the rule.
    public var eyeMinimumDistancePixels: Double = 15
    /// The eye-edge check of the blink rule, 1 on (the default) or 0 off: a frame whose closure
    /// reaches `blinkClosureThreshold` is not a closed frame when the eyes' own pixels still show
    /// open eyes (`FaceObservation.eyeEdges`, read by `EyeEdgeBaseline`): glare on glasses, a
    /// smile or a look up moving the fitted eyelids. Frames without pixel measurements (ARKit
    /// traces) are judged on the closure alone.
    public var eyeEdgeCheck: Int = 1
    /// Relative vertical-edge share of the eyes (the frame's shares over their own recent levels,
    /// dimensionless, about 1 open) above which a closure is not a blink. Measured on the shared
    /// clips' labelled blinks (docs/blinks.md): closed frames of real blinks 0.4–0.65, the false
    /// closures behind glare and smiles 0.75–1.3.
    public var eyeEdgeMaxRatio: Double = 0.75
    /// Seconds of an eye's recent shares its open level is taken from.
    public var eyeEdgeWindowSeconds: Double = 4
    /// Percentile (0…1) of an eye's recent shares taken as its open level.
    public var eyeEdgePercentile: Double = 0.75
    /// Shares an eye's window needs before it has a level; until then closures are judged on the
    /// closure alone.
    public var eyeEdgeMinimumFrames: Int = 8
    /// Relative edge share (`EyeEdgeBaseline`, about 1 open) from which a frame whose closure is
    /// under `blinkClosureThreshold` looks open again (`BlinkEpisode`).
    public var eyeReopenRatio: Double = 0.7
    /// Consecutive open-looking frames that end a blink episode: one closure of the eyes is one
    /// blink even when its landmark closure falls back under the threshold for a frame.
    public var eyeReopenFrames: Int = 2
    /// Mean closure (0…1) at or under which a frame's landmark lids count as back open for the end
    /// of a blink episode (`BlinkEpisode`): the lids at their open level, up to the landmark noise
    /// (0.02: nine in ten open frames of the shared clips stay at or under it, docs/blinks.md). A
    /// lid still part-way down (a closure under the blink threshold but above this) keeps the
    /// episode open: behind glasses the fitted lids of one long closure can rise half-way for a
    /// frame or two.
    public var eyeReopenClosure: Double = 0.02
    /// The onset of a blink, judged against the moment before it: a closed frame starts a blink
    /// episode only when the eyes' vertical-edge shares have fallen to at most this ratio
    /// (dimensionless) of their median over the open frames of the last `eyeEdgeOnsetSeconds`
    /// (`BlinkEpisode`). A real closure hides the iris within a frame or two; landmark lids that
    /// close on an open eye (glare varying with the head's pose, a look down) leave the shares
    /// where they were. Measured on the shared clips' labelled blinks (docs/blinks.md): real
    /// blinks 0.28–0.64, the false closures 0.74 and 1.12. With `eyeEdgeCheck` 0 it is off too.
    public var eyeEdgeOnsetRatio: Double = 0.7
    /// Seconds before a closure whose open frames give the eyes' reference shares for
    /// `eyeEdgeOnsetRatio` (at least two such frames; fewer: the onset is not judged).
    public var eyeEdgeOnsetSeconds: Double = 0.5
    /// A slow closure seen by the pixels: a frame also counts as closed when its mean closure
    /// against the open-eye baseline alone (`EyeClosureEstimator.againstBaseline`, without the
    /// reference window) reaches `eyeSlowClosureThreshold` and the eyes' relative edge share
    /// (`EyeEdgeBaseline`, about 1 open) is at most this. Lids that come down over more than the
    /// reference window (0.18 s) read shallow against their own recent level; the edge share says
    /// whether the iris is hidden. The onset rule (`eyeEdgeOnsetRatio`) applies as to any closed
    /// frame. Measured on the shared clips' labelled blinks (docs/blinks.md): every value from 0.5
    /// to 0.6 finds the same two slow closures (their first frames read 0.49 and 0.52) and no
    /// false one; 0.65 lets a look down through. 0, or `eyeEdgeCheck` 0: off (frames without
    /// pixels, ARKit traces, are never judged by it).
    public var eyeSlowClosureEdgeRatio: Double = 0.55
    /// The mean closure (0…1) against the open-eye baseline alone that a slow closure must reach
    /// (`eyeSlowClosureEdgeRatio`): deeper than the blink threshold, since this reading lacks the
    /// reference window that keeps lids lowered over a longer time (a look down, a frown) shallow.
    /// The two slow closures of the shared clips reach 0.38 and 0.46; a look down while the head
    /// comes back from a turn 0.23 (docs/blinks.md); 0.26–0.34 all give the same events there.
    public var eyeSlowClosureThreshold: Double = 0.3

    // MARK: Yaw conditioning (unfiltered yaw only)

    /// Length in seconds (inclusive) of the trailing median filter over raw yaw.
    public var yawMedianWindowSeconds: Double = 0.2
    /// Seconds up to and including the autoshot whose raw yaw median is the frontal baseline.
    public var yawBaselineWindowSeconds: Double = 0.5
    /// Degrees of disagreement between the line-of-sight yaw and the camera-axis yaw (each
    /// relative to its baseline) put down to the head moving sideways; the rest is put down to
    /// the camera rotating or the face's image moving, and removed. 0 measures the turn on the
    /// line-of-sight yaw alone; a camera that only rotates moves the turn signal by at most
    /// this much. Used only when observations carry a line-of-sight yaw. See docs/head-pose.md.
    public var yawSwayDegrees: Double = 3

    // MARK: Presentation attacks (see docs/presentation-attacks.md)

    /// The parallax check, 1 on (default) or 0 off: a turn credited on a face whose landmarks a
    /// single homography explains (a flat photo or screen, swung or moved) fails the session with
    /// `presentationAttack`. See `ParallaxCheck`.
    public var parallaxCheck: Int = 1
    /// Parallax residual (fraction of the inter-ocular distance, `FaceObservation.planarResidual`)
    /// below which a credited turn is taken to be a flat picture. Calibrated on the real labelled
    /// turns and the generated flat attacks (docs/presentation-attacks.md).
    public var parallaxMinResidual: Double = 0.034
    /// Eye-centre distance in pixels below which a frame's landmarks are too coarse for the
    /// parallax check: such frames do not decide either way.
    public var parallaxMinEyeDistancePixels: Double = 30
    /// The frozen-input check, 1 on (the default) or 0 off: a face region that stays unchanged
    /// for `frozenSeconds` (a frozen decoder, an injected still) fails the session with
    /// `presentationAttack`. See `FrozenCheck` and docs/presentation-attacks.md.
    public var frozenCheck: Int = 1
    /// Mean absolute difference in grey levels (`Observation.frameDifference`) at or below which
    /// a frame counts as unchanged from the previous one. Calibrated on the real clips (frozen
    /// 0.0013–0.0016, a camera's duplicated frames 0.0000–0.1 for at most 0.44 s).
    public var frozenMaxDifference: Double = 0.1
    /// Seconds a run of unchanged frames must last to be frozen input.
    public var frozenSeconds: Double = 1.5
    /// The looped-input check, 1 on (the default) or 0 off: a moving stretch of the picture that
    /// repeats an earlier one for `loopSeconds` (a recording played in a loop) fails the session
    /// with `presentationAttack`. See `LoopCheck` and docs/presentation-attacks.md.
    public var loopCheck: Int = 1
    /// Mean absolute difference in grey levels (`Repetition.difference`) at or below which a
    /// frame counts as a repeat of the earlier frame (H.264 at CRF 28 replays a stretch to within
    /// 0.7–0.9 on the generated looped case; docs/presentation-attacks.md).
    public var loopMaxDifference: Double = 1.2
    /// Change over half a second in grey levels (`Repetition.motion`) a repeated stretch must
    /// reach somewhere to count (a still picture repeats itself trivially).
    public var loopMinMotion: Double = 0.5
    /// How many times its difference from the stretch it repeats a repeated stretch must have
    /// moved (a live subject holding still moves about as much as it differs from earlier frames).
    public var loopMinMotionRatio: Double = 3
    /// Seconds a moving repeated stretch must last to be a loop.
    public var loopSeconds: Double = 2.0
    /// The recapture check, 1 on (the default) or 0 off: a face enclosed by a straight border on
    /// three or four sides (a screen's or a print's edge) for three quarters of the frames of a
    /// `recaptureWindowSeconds` window fails the session with `presentationAttack`. See
    /// `RecaptureCheck` and docs/presentation-attacks.md.
    public var recaptureCheck: Int = 1
    /// Border strength in grey levels (`Observation.borderEnclosure`: the border below the face and two more sides)
    /// from which a frame's face counts as enclosed. Calibrated on the real clips: every window of
    /// the live clips reads 0, the two real screen replays 100 (docs/presentation-attacks.md).
    public var recaptureMinEnclosure: Double = 25
    /// Seconds of measurements the recapture check judges at once.
    public var recaptureWindowSeconds: Double = 1.0
    /// The continuity check, 1 on (the default) or 0 off: a frame whose face region jumps between
    /// still neighbours (a slideshow of photos, a cut) fails the session with
    /// `presentationAttack`. See `ContinuityCheck` and docs/presentation-attacks.md.
    public var continuityCheck: Int = 1
    /// Least change of the face region in one frame (`Observation.frameDifference`, grey levels)
    /// that can be a jump. Calibrated on the real clips: a slideshow's cuts change it by 31–58,
    /// live frames that change 10 or more move among neighbours that move too.
    public var cutMinDifference: Double = 10
    /// How many times the largest change of its three frames before and two after a frame's
    /// change must be to be a jump (live clips: at most 4.6; a slideshow's cuts: 25–62).
    public var cutMinRatio: Double = 8

    // MARK: Prompted challenge (see `PromptedChallenge` and docs/prompted-challenge.md)

    /// `passive` (the spec: a blink and a turn in any order, the default) or `prompted` (one
    /// prompt at a time from an unpredictable sequence; only the prompted action, begun in its
    /// response window, counts). A policy file writes the name or 0/1.
    public var challengeMode: ChallengeMode = .passive
    /// Steps of a drawn prompted plan (each a left turn, a right turn or a blink; every plan holds
    /// a blink and a turn).
    public var promptSteps: Int = 3
    /// Seconds after a prompt within which the answer must begin.
    public var promptResponseSeconds: Double = 3.0
    /// Seconds after a prompt before which a turn cannot be an answer: a person cannot see a
    /// prompt and begin to turn sooner (visual reaction times are 0.2 s and more).
    public var promptMinReactionSeconds: Double = 0.15
    /// Seconds the face must be frontal (turned by less than half of `turnYawDegrees`) on credited
    /// frames before a prompt is shown.
    public var promptStillSeconds: Double = 0.3
    /// Largest random delay in seconds added after `promptStillSeconds` before each drawn prompt,
    /// so that a recording cannot know when a prompt comes.
    public var promptMaxDelaySeconds: Double = 1.0

    /// The spec's defaults.
    public init() {}

    private enum CodingKeys: String, CodingKey {
        case settleSeconds, framingTimeoutSeconds, framedFramesRequired, scanCapSeconds
        case blinkClosureThreshold, turnYawDegrees, turnHeldFrames, rotationLimitDegreesPerSecond
        case guideCenterX, guideCenterY, guideRadius
        case eyeBaselineWindowSeconds, eyeBaselinePercentile, eyeBaselineHoldSeconds, eyeWarmupFrames
        case eyeDipReferenceSeconds, eyeClosureDeadZone, eyeClosureScale, eyeDipOnsetLevel, eyeMaxDipSeconds
        case eyeDipConfirmSeconds, eyeDeepDipLevel, eyeNodPitchDegrees, eyeNodWindowSeconds, eyeFitJumpRatio
        case eyeMinimumDistancePixels
        case eyeEdgeCheck, eyeEdgeMaxRatio, eyeEdgeWindowSeconds, eyeEdgePercentile, eyeEdgeMinimumFrames
        case eyeReopenRatio, eyeReopenFrames, eyeReopenClosure, eyeEdgeOnsetRatio, eyeEdgeOnsetSeconds, eyeSlowClosureEdgeRatio
        case eyeSlowClosureThreshold
        case yawMedianWindowSeconds, yawBaselineWindowSeconds, yawSwayDegrees
        case parallaxCheck, parallaxMinResidual, parallaxMinEyeDistancePixels
        case frozenCheck, frozenMaxDifference, frozenSeconds
        case loopCheck, loopMaxDifference, loopMinMotion, loopMinMotionRatio, loopSeconds
        case recaptureCheck, recaptureMinEnclosure, recaptureWindowSeconds
        case continuityCheck, cutMinDifference, cutMinRatio
        case challengeMode, promptSteps, promptResponseSeconds, promptMinReactionSeconds, promptStillSeconds
        case promptMaxDelaySeconds
    }

    /// Decodes a possibly partial policy: absent keys keep their defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func take<T: Decodable>(_ key: CodingKeys, _ value: inout T) throws {
            if let v = try c.decodeIfPresent(T.self, forKey: key) { value = v }
        }
        try take(.settleSeconds, &settleSeconds)
        try take(.framingTimeoutSeconds, &framingTimeoutSeconds)
        try take(.framedFramesRequired, &framedFramesRequired)
        try take(.scanCapSeconds, &scanCapSeconds)
        try take(.blinkClosureThreshold, &blinkClosureThreshold)
        try take(.turnYawDegrees, &turnYawDegrees)
        try take(.turnHeldFrames, &turnHeldFrames)
        try take(.rotationLimitDegreesPerSecond, &rotationLimitDegreesPerSecond)
        try take(.guideCenterX, &guideCenterX)
        try take(.guideCenterY, &guideCenterY)
        try take(.guideRadius, &guideRadius)
        try take(.eyeBaselineWindowSeconds, &eyeBaselineWindowSeconds)
        try take(.eyeBaselinePercentile, &eyeBaselinePercentile)
        try take(.eyeBaselineHoldSeconds, &eyeBaselineHoldSeconds)
        try take(.eyeWarmupFrames, &eyeWarmupFrames)
        try take(.eyeDipReferenceSeconds, &eyeDipReferenceSeconds)
        try take(.eyeClosureDeadZone, &eyeClosureDeadZone)
        try take(.eyeClosureScale, &eyeClosureScale)
        try take(.eyeDipOnsetLevel, &eyeDipOnsetLevel)
        try take(.eyeMaxDipSeconds, &eyeMaxDipSeconds)
        try take(.eyeDipConfirmSeconds, &eyeDipConfirmSeconds)
        try take(.eyeDeepDipLevel, &eyeDeepDipLevel)
        try take(.eyeNodPitchDegrees, &eyeNodPitchDegrees)
        try take(.eyeNodWindowSeconds, &eyeNodWindowSeconds)
        try take(.eyeFitJumpRatio, &eyeFitJumpRatio)
        try take(.eyeMinimumDistancePixels, &eyeMinimumDistancePixels)
        try take(.eyeEdgeCheck, &eyeEdgeCheck)
        try take(.eyeEdgeMaxRatio, &eyeEdgeMaxRatio)
        try take(.eyeEdgeWindowSeconds, &eyeEdgeWindowSeconds)
        try take(.eyeEdgePercentile, &eyeEdgePercentile)
        try take(.eyeEdgeMinimumFrames, &eyeEdgeMinimumFrames)
        try take(.eyeReopenRatio, &eyeReopenRatio)
        try take(.eyeReopenFrames, &eyeReopenFrames)
        try take(.eyeReopenClosure, &eyeReopenClosure)
        try take(.eyeEdgeOnsetRatio, &eyeEdgeOnsetRatio)
        try take(.eyeEdgeOnsetSeconds, &eyeEdgeOnsetSeconds)
        try take(.eyeSlowClosureEdgeRatio, &eyeSlowClosureEdgeRatio)
        try take(.eyeSlowClosureThreshold, &eyeSlowClosureThreshold)
        try take(.yawMedianWindowSeconds, &yawMedianWindowSeconds)
        try take(.yawBaselineWindowSeconds, &yawBaselineWindowSeconds)
        try take(.yawSwayDegrees, &yawSwayDegrees)
        try take(.parallaxCheck, &parallaxCheck)
        try take(.parallaxMinResidual, &parallaxMinResidual)
        try take(.parallaxMinEyeDistancePixels, &parallaxMinEyeDistancePixels)
        try take(.frozenCheck, &frozenCheck)
        try take(.frozenMaxDifference, &frozenMaxDifference)
        try take(.frozenSeconds, &frozenSeconds)
        try take(.loopCheck, &loopCheck)
        try take(.loopMaxDifference, &loopMaxDifference)
        try take(.loopMinMotion, &loopMinMotion)
        try take(.loopMinMotionRatio, &loopMinMotionRatio)
        try take(.loopSeconds, &loopSeconds)
        try take(.recaptureCheck, &recaptureCheck)
        try take(.recaptureMinEnclosure, &recaptureMinEnclosure)
        try take(.recaptureWindowSeconds, &recaptureWindowSeconds)
        try take(.continuityCheck, &continuityCheck)
        try take(.cutMinDifference, &cutMinDifference)
        try take(.cutMinRatio, &cutMinRatio)
        try take(.challengeMode, &challengeMode)
        try take(.promptSteps, &promptSteps)
        try take(.promptResponseSeconds, &promptResponseSeconds)
        try take(.promptMinReactionSeconds, &promptMinReactionSeconds)
        try take(.promptStillSeconds, &promptStillSeconds)
        try take(.promptMaxDelaySeconds, &promptMaxDelaySeconds)
    }
}

/// Converts seconds to whole microseconds (rounded to nearest), the machine's time unit.
///
/// Saturating, so that no policy value a caller can construct traps: the result is clamped to
/// ±`maximumDurationMicroseconds` (about 73 000 years) and NaN gives 0. With timestamps limited
/// to ±`LivenessMachine.timestampLimitMicroseconds`, sums and differences of the two never
/// overflow `Int64`.
@inline(__always)
func microseconds(_ seconds: Double) -> Int64 {
    let micros = (seconds * 1_000_000).rounded()
    guard !micros.isNaN else { return 0 }
    if micros >= Double(maximumDurationMicroseconds) { return maximumDurationMicroseconds }
    if micros <= -Double(maximumDurationMicroseconds) { return -maximumDurationMicroseconds }
    return Int64(micros)
}

/// The largest duration the machine computes with, in microseconds (2⁶¹ µs ≈ 73 000 years).
let maximumDurationMicroseconds: Int64 = 1 << 61
