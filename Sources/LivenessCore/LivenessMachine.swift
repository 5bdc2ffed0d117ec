/// The liveness check of the spec as a pure value: feed it observations, it returns what happened.
///
/// It never reads a clock (time is the observations' timestamps), never touches pixels (a still is
/// an event naming a frame) and performs no I/O, so offline analysis, trace replay and a live
/// stream drive the very same machine and reach the same verdict.
///
/// Decisions the spec leaves open, fixed here:
/// * **Settle** covers frames with `t − t₀ < settleSeconds`; framing starts at `t₀ + settleSeconds`
///   and only framing frames count towards the in-guide run.
/// * **Fallback** is taken on the first framing frame with `t ≥ t₀ + settleSeconds +
///   framingTimeoutSeconds` unless that frame completes the in-guide run (then it is framed), even
///   when no face is tracked on it (the still then has no box).
/// * **The autoshot frame starts the scan and is evaluated**: it may be credited and may count
///   towards an action.
/// * **The cap**: a frame with `t − autoshot ≥ scanCapSeconds` decides the timeout and is *not*
///   evaluated for actions (so 19.9 s after the autoshot can still pass, 20.0 s cannot).
/// * **Turn signal**: relative yaw against the baseline taken at the autoshot; when observations
///   carry a line-of-sight yaw, camera-axis and line-of-sight yaw are combined (`TurnYaw`) so
///   that a camera that turns or an image that slides cannot make a turn by itself.
/// * **Turn runs** count consecutive credited frames beyond the threshold *in the same direction*;
///   any non-credited frame, a frame below the threshold or a change of sign restarts the run.
/// * **Parallax**: the run that credits the turn is judged by `ParallaxCheck` on the residuals
///   its frames carry; a flat run fails the session with `presentationAttack` on that frame
///   (the turn is not credited).
/// * **Frozen input**: `FrozenCheck` runs on every frame before the verdict, in any phase; a
///   picture unchanged for `frozenSeconds` fails the session with `presentationAttack` on the
///   frame that completes the run (not credited: `frozenInput`). **Looped input**: `LoopCheck`
///   likewise, on a moving stretch that repeats an earlier one for `loopSeconds` (`loopedInput`).
///   **Recaptured input**: `RecaptureCheck` likewise, on a window of `recaptureWindowSeconds` in
///   which the face is enclosed by a screen's or a print's border (`recapturedInput`). With
///   both actions done, the pass waits while the followed face has 1–3 enclosure measurements
///   (`RecaptureCheck.holdsPass`: a few frames of a newly followed face at most); the snapshot
///   is the frame that passes. **Discontinuous input**: `ContinuityCheck` fails the session two
///   frames after a frame whose face region jumped between still neighbours (a slideshow, a cut;
///   `discontinuousInput`); the pass waits while one of the last two frames may be such a jump.
/// * **Counts**: `framesRotationUnknown` counts credited scan frames with unknown rotation;
///   `framesRotating` counts scan frames with a face refused for rotation.
/// * **noFace precedence** applies to `timeout` and `inputEnded`; an explicit `cancelled` or
///   `invalidInput` is reported as given.
/// * **HUD before the scan**: a face in the guide shows `progress(done: 0, total: 2)`; a face
///   outside always shows `outsideGuide`.
/// * Frames after the verdict are still checked for increasing timestamps, then counted only.
public struct LivenessMachine: Sendable {
    /// The policy the session is judged with.
    public let policy: LivenessPolicy
    /// The drawn challenge order (seeded; recorded in the evidence, never shown to the user).
    public var challenge: [Action] { evidence.challenge }
    /// The verdict, once given.
    public private(set) var verdict: Verdict?
    /// Everything found so far.
    public private(set) var evidence: Evidence
    /// The current phase.
    public private(set) var phase: Phase = .settle
    /// The last HUD state emitted, `nil` before the first frame.
    public private(set) var hud: HUDState?

    private let guide: GuideCircle
    private var firstTimestamp: Int64?
    private var lastTimestamp: Int64?
    private var lastFrameIndex: Int?
    private var inGuideRun = 0
    private var autoshotTimestamp: Int64?
    /// The blink rule's closures, eye edges and episode.
    private var blink: BlinkSignals
    private var yawFilter: YawMedianFilter
    private var yawBaseline: YawBaseline
    // The same conditioning for the line-of-sight yaw (`TurnYaw`).
    private var sightFilter: YawMedianFilter
    private var sightBaseline: YawBaseline
    private var turnRun = 0
    private var turnRunSign = 0
    private var parallax: ParallaxCheck
    private var frozen: FrozenCheck
    private var loop: LoopCheck
    private var recapture: RecaptureCheck
    private var continuity: ContinuityCheck
    private var blinkDone = false
    private var turnDone = false
    private var everTracked = false
    // Prompted mode (`ChallengeMode.prompted`): the challenge, whether the last credited frame
    // with a closure had its eyes closed (a blink is credited on the closing edge), and whether
    // the current turn run was already credited (each run credits once).
    private var prompts: PromptedChallenge?
    private var turnRunCredited = false

    /// Creates a session.
    /// - Parameters:
    ///   - policy: thresholds; defaults are the spec's. `challengeMode` chooses passive or prompted.
    ///   - seed: seed of the challenge order generator (SplitMix64), recorded in the evidence.
    ///   - plan: prompted mode only: the prompts (drawn from a cryptographic source by a live
    ///     service, or read from a prompt log). `nil` draws them from `seed` (`analyze`, tests).
    public init(policy: LivenessPolicy = .init(), seed: UInt64, plan: ChallengePlan? = nil) {
        self.policy = policy
        var rng = SeededGenerator(seed: seed)
        let order: [Action] = rng.next() & 1 == 0 ? [.blink, .turnHead] : [.turnHead, .blink]
        evidence = Evidence(seed: seed, challenge: order, policy: policy)
        if policy.challengeMode == .prompted {
            let drawn = plan ?? ChallengePlan.draw(steps: policy.promptSteps, maxDelaySeconds: policy.promptMaxDelaySeconds,
                                                   source: .seed, using: &rng)
            prompts = PromptedChallenge(plan: drawn, policy: policy)
            evidence.promptedChallenge = prompts!.evidence
        }
        guide = GuideCircle(policy: policy)
        blink = BlinkSignals(policy: policy)
        yawFilter = YawMedianFilter(windowSeconds: policy.yawMedianWindowSeconds)
        yawBaseline = YawBaseline(windowSeconds: policy.yawBaselineWindowSeconds)
        sightFilter = YawMedianFilter(windowSeconds: policy.yawMedianWindowSeconds)
        sightBaseline = YawBaseline(windowSeconds: policy.yawBaselineWindowSeconds)
        parallax = ParallaxCheck(policy: policy)
        frozen = FrozenCheck(policy: policy)
        loop = LoopCheck(policy: policy)
        recapture = RecaptureCheck(policy: policy)
        continuity = ContinuityCheck(policy: policy)
    }

    /// The prompted challenge's state (prompted mode only): the plan and the prompts shown.
    public var promptedChallenge: PromptedChallenge? { prompts }

    private var actionsDone: Int { (blinkDone ? 1 : 0) + (turnDone ? 1 : 0) }
    private var actionsTotal: Int { Action.allCases.count }

    /// Observes one frame.
    ///
    /// - Throws: `LivenessError.nonIncreasingTimestamp` when the timestamp does not exceed the
    ///   previous accepted frame's, `LivenessError.timestampOutOfRange` beyond
    ///   ±`timestampLimitMicroseconds`, `LivenessError.nonFiniteValue` for NaN/infinite numbers.
    ///   A rejected frame changes nothing.
    /// - Returns: the frame's assessment and the events it caused (none after the verdict).
    public mutating func observe(_ o: Observation) throws -> LivenessStep {
        try validate(o)
        let t = o.timestampMicroseconds
        lastTimestamp = t
        lastFrameIndex = o.frameIndex

        guard verdict == nil else {
            evidence.framesIgnoredAfterVerdict += 1
            return LivenessStep(frame: assessment(o, phase: .done, notCredited: .afterVerdict), events: [])
        }

        var events: [LivenessEvent] = []
        evidence.framesRead += 1
        if o.face != nil {
            evidence.framesTracked += 1
            everTracked = true
        }

        // Signals run on every tracked frame, whatever the phase (the eye baseline warms up early).
        var frame = assessment(o, phase: phase, notCredited: nil)
        let yaw = readSignals(of: o, into: &frame)
        let rawYaw = yaw.camera, rawSight = yaw.sight

        // Frozen, looped, recaptured or cut input, in any phase: decided before the frame is evaluated.
        if let reason = inputAttack(in: o) {
            frame.notCreditedReason = reason
            decide(Verdict(status: .failed, reason: .presentationAttack, timestampMicroseconds: t,
                           frameIndex: o.frameIndex), into: &events)
            frame.hud = hud ?? .noFace
            return LivenessStep(frame: frame, events: events)
        }

        // Settle -> framing -> autoshot -> scan.
        advancePhase(on: o, inGuide: frame.inGuide == true, yaw: yaw, into: &events)
        frame.phase = phase

        guard phase == .scan, let autoshot = autoshotTimestamp else {
            frame.notCreditedReason = .notScanning
            _ = observeBlinkEpisode(&frame, face: o.face, timestampMicroseconds: o.timestampMicroseconds)
            emitHUD(for: frame, into: &events)
            frame.hud = hud!
            return LivenessStep(frame: frame, events: events)
        }

        // The cap: decided before the frame is evaluated.
        if t - autoshot >= microseconds(policy.scanCapSeconds) {
            frame.notCreditedReason = .capReached
            decide(Verdict(status: .failed, reason: everTracked ? .timeout : .noFace,
                           timestampMicroseconds: t, frameIndex: o.frameIndex), into: &events)
            frame.hud = hud ?? .noFace
            return LivenessStep(frame: frame, events: events)
        }

        // Crediting.
        assessCredit(of: o, yaw: yaw, into: &frame)

        let blinkNow = observeBlinkEpisode(&frame, face: o.face, timestampMicroseconds: o.timestampMicroseconds)
        if prompts != nil {
            var unfiltered: Double?
            if o.face != nil, let y = rawYaw, let base = yawBaseline.degrees {
                unfiltered = y - base
                if let s = rawSight, let sightBase = sightBaseline.degrees {
                    unfiltered = TurnYaw.relative(cameraAxis: y - base, lineOfSight: s - sightBase,
                                                  swayDegrees: policy.yawSwayDegrees)
                }
            }
            return promptedStep(o, frame: frame, unfilteredRelativeYaw: unfiltered, blink: blinkNow, events: events)
        }

        if frame.credited {
            if !blinkDone, blinkNow, let mean = frame.eyeClosureMean {
                blinkDone = true
                credit(ActionEvidence(action: .blink, frameIndex: o.frameIndex, timestampMicroseconds: t,
                                      value: mean, direction: nil), into: &events)
            }
            if let rel = frame.relativeYawDegrees, abs(rel) >= policy.turnYawDegrees {
                let sign = rel > 0 ? 1 : -1
                turnRun = sign == turnRunSign ? turnRun + 1 : 1
                turnRunSign = sign
                if turnRun == 1 { parallax.startRun() }
                if let face = o.face { parallax.add(face) }
            } else {
                turnRun = 0
                turnRunSign = 0
            }
            if !turnDone, turnRun >= max(1, policy.turnHeldFrames), let rel = frame.relativeYawDegrees {
                // The parallax check: a turn a single homography explains is a flat picture.
                evidence.parallax = parallax.judge(frameIndex: o.frameIndex)
                if evidence.parallax.status == .flat {
                    decide(Verdict(status: .failed, reason: .presentationAttack, timestampMicroseconds: t,
                                   frameIndex: o.frameIndex), into: &events)
                    frame.hud = hud ?? .noFace
                    return LivenessStep(frame: frame, events: events)
                }
                turnDone = true
                credit(ActionEvidence(action: .turnHead, frameIndex: o.frameIndex, timestampMicroseconds: t,
                                      value: rel, direction: rel > 0 ? .left : .right), into: &events)
            }
        } else {
            turnRun = 0
            turnRunSign = 0
        }

        if blinkDone && turnDone && !recapture.holdsPass && !continuity.holdsPass {
            pass(on: o, into: &events)
        } else {
            emitHUD(for: frame, into: &events)
        }
        frame.hud = hud!
        return LivenessStep(frame: frame, events: events)
    }

    /// Moves the phases on at `o`: the first frame starts the settle, the settle's end starts the
    /// framing (the yaw baselines record meanwhile), and the framing ends with the autoshot on the
    /// `framedFramesRequired`-th frame in a row with the face in the guide (`inGuide`), or at the
    /// framing timeout (the fallback), which starts the scan. Appends the events.
    private mutating func advancePhase(on o: Observation, inGuide: Bool, yaw: YawReadings, into events: inout [LivenessEvent]) {
        let t = o.timestampMicroseconds
        if firstTimestamp == nil {
            firstTimestamp = t
            phase = .settle
            events.append(.phase(.settle))
        }
        let framingStart = firstTimestamp! + microseconds(policy.settleSeconds)
        if phase == .settle, t >= framingStart {
            phase = .framing
            events.append(.phase(.framing))
        }
        if phase == .settle || phase == .framing, let y = yaw.camera {
            yawBaseline.record(yawDegrees: y, timestampMicroseconds: t)
            if let s = yaw.sight { sightBaseline.record(yawDegrees: s, timestampMicroseconds: t) }
        }

        // Framing -> autoshot -> scan.
        if phase == .framing {
            inGuideRun = inGuide ? inGuideRun + 1 : 0
            let framed = inGuideRun >= max(1, policy.framedFramesRequired)
            if framed || t - framingStart >= microseconds(policy.framingTimeoutSeconds) {
                let still = StillCapture(frameIndex: o.frameIndex, timestampMicroseconds: t, box: o.face?.box, framed: framed)
                evidence.autoshot = still
                autoshotTimestamp = t
                yawBaseline.fix(atTimestampMicroseconds: t)
                sightBaseline.fix(atTimestampMicroseconds: t)
                evidence.yawBaselineDegrees = yawBaseline.degrees
                events.append(.autoshot(still))
                phase = .scan
                events.append(.phase(.scan))
            }
        }
    }

    /// Whether a scan frame is credited, and its yaw relative to the baselines: a frame with a
    /// face is credited unless the device rotates at or above the limit; the counts go into the
    /// evidence.
    private mutating func assessCredit(of o: Observation, yaw: YawReadings, into frame: inout FrameAssessment) {
        if o.face != nil, let filtered = frame.filteredYawDegrees {
            if let y = yaw.camera { yawBaseline.fixIfUnset(yawDegrees: y) }
            if let s = yaw.sight { sightBaseline.fixIfUnset(yawDegrees: s) }
            if evidence.yawBaselineDegrees == nil { evidence.yawBaselineDegrees = yawBaseline.degrees }
            frame.relativeYawDegrees = yawBaseline.degrees.map { filtered - $0 }
            if let cameraAxis = frame.relativeYawDegrees, let sight = yaw.filteredSight, let base = sightBaseline.degrees {
                frame.relativeYawDegrees = TurnYaw.relative(cameraAxis: cameraAxis, lineOfSight: sight - base,
                                                            swayDegrees: policy.yawSwayDegrees)
            }
            if let dps = o.deviceRotation.degreesPerSecond, dps >= policy.rotationLimitDegreesPerSecond {
                frame.notCreditedReason = .rotating
                evidence.framesRotating += 1
            } else {
                frame.credited = true
                evidence.framesCredited += 1
                if o.deviceRotation.degreesPerSecond == nil { evidence.framesRotationUnknown += 1 }
            }
        } else {
            frame.notCreditedReason = .noFace
        }
    }

    /// A frame's yaw readings, degrees: against the camera's axes and the line of sight, as
    /// measured, and the line of sight filtered (the camera-axis yaw's filtered value is the
    /// assessment's `filteredYawDegrees`).
    private struct YawReadings {
        var camera: Double?
        var sight: Double?
        var filteredSight: Double?
    }

    /// The frame's signals, whatever the phase: each eye's closure (from the aspect ratios against
    /// the open-eye baseline, or as given), the eye edges against their own level, the filtered
    /// yaws and whether the face is in the guide. Written into `frame`; returns the yaw readings.
    private mutating func readSignals(of o: Observation, into frame: inout FrameAssessment) -> YawReadings {
        var yaw = YawReadings()
        guard let face = o.face else { return yaw }
        let t = o.timestampMicroseconds
        let eyes = blink.read(face, timestampMicroseconds: t)
        frame.eyeClosureLeft = eyes.closureLeft
        frame.eyeClosureRight = eyes.closureRight
        frame.eyeClosureAgainstBaseline = eyes.closureAgainstBaseline
        frame.eyeEdgeRelative = eyes.edgeRelative
        frame.eyesOpenByEdges = eyes.openByEdges
        yaw.camera = face.yawDegrees
        frame.filteredYawDegrees = face.yawIsFiltered
            ? face.yawDegrees : yawFilter.update(yawDegrees: face.yawDegrees, timestampMicroseconds: t)
        if let sight = face.lineOfSightYawDegrees {
            yaw.sight = sight
            yaw.filteredSight = face.yawIsFiltered ? sight : sightFilter.update(yawDegrees: sight, timestampMicroseconds: t)
        }
        frame.inGuide = guide.contains(x: face.centerX, y: face.centerY, width: o.frameWidth, height: o.frameHeight)
        return yaw
    }

    /// The input checks that judge every frame (`Checks/`): frozen, looped, recaptured and cut
    /// input. Each sees the frame and records its evidence; the first that finds an attack, in
    /// that order, names the frame's reason (nil: none did).
    private mutating func inputAttack(in o: Observation) -> NotCreditedReason? {
        let t = o.timestampMicroseconds
        let isFrozen = frozen.observe(difference: o.frameDifference, at: t)
        evidence.frozen = frozen.evidence
        let isLooped = loop.observe(o.repetition, at: t)
        evidence.looped = loop.evidence
        let isRecaptured = recapture.observe(enclosure: o.borderEnclosure, box: o.face?.box, hasFace: o.face != nil,
                                             at: t, frameIndex: o.frameIndex)
        evidence.recapture = recapture.evidence
        let isCut = continuity.observe(difference: o.frameDifference, at: t, frameIndex: o.frameIndex)
        evidence.continuity = continuity.evidence
        if isFrozen { return .frozenInput }
        if isLooped { return .loopedInput }
        if isRecaptured { return .recapturedInput }
        if isCut { return .discontinuousInput }
        return nil
    }

    /// Whether the parallax check would read `o`'s `face.planarResidual` if `o` were observed
    /// now: the check is on, the turn is still to be credited, and the frame would be credited
    /// and join a run of frames turned by at least `turnYawDegrees` — the only frames whose
    /// residual it collects. Works on a copy of the machine (a value): nothing changes here.
    ///
    /// Front ends measure the residual (a robust homography fit, about 5 M instructions a frame)
    /// only when this is true; the verdict and the evidence are those of measuring it on every
    /// frame, and a replayed trace carries the same residuals on the frames that matter.
    public func readsPlanarResidual(_ o: Observation) -> Bool {
        // Passive: until the turn is credited. Prompted: while a turn may still answer a prompt.
        let turnsLeft = prompts.map { !$0.isComplete && !$0.hasFailed } ?? !turnDone
        guard policy.parallaxCheck != 0, verdict == nil, turnsLeft, o.face != nil else { return false }
        var probe = self
        guard let step = try? probe.observe(o), step.frame.credited,
              let relative = step.frame.relativeYawDegrees else { return false }
        return abs(relative) >= policy.turnYawDegrees
    }

    /// Ends the session before a verdict: the input ended (`.inputEnded`), the stream was closed
    /// (`.cancelled`) or could not be used (`.invalidInput`). Emits the failed verdict; `timeout`
    /// and `inputEnded` become `noFace` when no face was ever tracked. Returns no events when a
    /// verdict already exists.
    public mutating func finish(_ reason: FailureReason) -> [LivenessEvent] {
        guard verdict == nil else { return [] }
        let r: FailureReason = (reason == .inputEnded || reason == .timeout || reason == .noFace) && !everTracked
            ? .noFace : reason
        var events: [LivenessEvent] = []
        decide(Verdict(status: .failed, reason: r, timestampMicroseconds: lastTimestamp ?? 0, frameIndex: nil),
               into: &events)
        return events
    }

    /// The frame's part in the current blink episode (`BlinkEpisode`), recorded in
    /// `frame.eyesClosedEpisode`; true when the frame credits a blink (the episode's first
    /// credited closed frame).
    private mutating func observeBlinkEpisode(_ frame: inout FrameAssessment, face: FaceObservation?,
                                              timestampMicroseconds: Int64) -> Bool {
        guard let face else {
            blink.reset()
            return false
        }
        let credits = blink.step(frame.eyeReading, face: face, timestampMicroseconds: timestampMicroseconds,
                                 credited: frame.credited)
        frame.eyesClosedEpisode = blink.episodeOpen
        return credits
    }

    // MARK: - Prompted mode

    /// The crediting and the decision of a scan frame in prompted mode: the challenge shows the
    /// prompts and judges the answers; a followed turn is judged by the parallax check first.
    private mutating func promptedStep(_ o: Observation, frame: FrameAssessment, unfilteredRelativeYaw: Double?,
                                       blink: Bool, events: [LivenessEvent]) -> LivenessStep {
        var frame = frame
        var events = events
        let t = o.timestampMicroseconds
        var turned: TurnDirection?
        if frame.credited, let rel = frame.relativeYawDegrees, abs(rel) >= policy.turnYawDegrees {
            let sign = rel > 0 ? 1 : -1
            turnRun = sign == turnRunSign ? turnRun + 1 : 1
            turnRunSign = sign
            if turnRun == 1 {
                parallax.startRun()
                turnRunCredited = false
            }
            if let face = o.face { parallax.add(face) }
            if turnRun >= max(1, policy.turnHeldFrames), !turnRunCredited {
                turnRunCredited = true
                turned = rel > 0 ? .left : .right
            }
        } else {
            turnRun = 0
            turnRunSign = 0
        }
        let input = PromptedChallenge.Frame(
            timestampMicroseconds: t, frameIndex: o.frameIndex, credited: frame.credited,
            relativeYawDegrees: frame.relativeYawDegrees, unfilteredRelativeYawDegrees: unfilteredRelativeYaw,
            eyeClosureMean: frame.eyeClosureMean,
            blinkCredited: blink, turnCredited: turned)
        var probe = prompts!
        let happened = probe.observe(input)
        for event in happened {
            guard case let .answered(record) = event, record.outcome == .followed, record.step != .blink else { continue }
            // The parallax check: a turn a single homography explains is a flat picture.
            evidence.parallax = parallax.judge(frameIndex: o.frameIndex)
            if evidence.parallax.status == .flat {
                decide(Verdict(status: .failed, reason: .presentationAttack, timestampMicroseconds: t,
                               frameIndex: o.frameIndex), into: &events)
                frame.hud = hud ?? .noFace
                return LivenessStep(frame: frame, events: events)
            }
        }
        prompts = probe
        evidence.promptedChallenge = probe.evidence
        for event in happened {
            switch event {
            case let .answered(record):
                events.append(.promptAnswered(record))
                if record.outcome == .followed {
                    let value = record.step == .blink ? (frame.eyeClosureMean ?? 0) : (frame.relativeYawDegrees ?? 0)
                    if record.step == .blink { blinkDone = true } else { turnDone = true }
                    credit(ActionEvidence(action: record.step.action, frameIndex: o.frameIndex, timestampMicroseconds: t,
                                          value: value, direction: record.step.direction), into: &events)
                }
            case let .shown(record):
                events.append(.promptShown(record))
            }
        }
        if probe.hasFailed {
            decide(Verdict(status: .failed, reason: .challengeNotFollowed, timestampMicroseconds: t,
                           frameIndex: o.frameIndex), into: &events)
            frame.hud = hud ?? .noFace
            return LivenessStep(frame: frame, events: events)
        }
        if probe.isComplete && !recapture.holdsPass && !continuity.holdsPass {
            pass(on: o, into: &events)
        } else {
            emitHUD(for: frame, into: &events)
        }
        frame.hud = hud!
        return LivenessStep(frame: frame, events: events)
    }

    // MARK: - Helpers

    /// The passing frame: the snapshot, `verifying`, the verdict.
    private mutating func pass(on o: Observation, into events: inout [LivenessEvent]) {
        let t = o.timestampMicroseconds
        let still = StillCapture(frameIndex: o.frameIndex, timestampMicroseconds: t, box: o.face?.box, framed: true)
        evidence.snapshot = still
        events.append(.snapshot(still))
        phase = .verifying
        events.append(.phase(.verifying))
        setHUD(.verifying, into: &events)
        decide(Verdict(status: .passed, reason: nil, timestampMicroseconds: t, frameIndex: o.frameIndex), into: &events)
    }

    /// The largest timestamp magnitude the machine accepts, in microseconds (2⁶⁰ µs, about
    /// 36 000 years): with policy durations saturated at 2⁶¹ µs no time arithmetic can overflow.
    public static let timestampLimitMicroseconds: Int64 = 1 << 60

    private func validate(_ o: Observation) throws {
        guard (-Self.timestampLimitMicroseconds...Self.timestampLimitMicroseconds).contains(o.timestampMicroseconds) else {
            throw LivenessError.timestampOutOfRange(frameIndex: o.frameIndex, timestampMicroseconds: o.timestampMicroseconds)
        }
        if let last = lastTimestamp, o.timestampMicroseconds <= last {
            throw LivenessError.nonIncreasingTimestamp(
                frameIndex: o.frameIndex, timestampMicroseconds: o.timestampMicroseconds, previousMicroseconds: last)
        }
        func check(_ v: Double?, _ field: String) throws {
            if let v, !v.isFinite { throw LivenessError.nonFiniteValue(frameIndex: o.frameIndex, field: field) }
        }
        try check(o.deviceRotation.degreesPerSecond, "deviceRotation.degreesPerSecond")
        try check(o.frameDifference, "frameDifference")
        try check(o.repetition?.lagSeconds, "repetition.lagSeconds")
        try check(o.repetition?.difference, "repetition.difference")
        try check(o.repetition?.motion, "repetition.motion")
        try check(o.borderEnclosure, "borderEnclosure")
        guard let f = o.face else { return }
        try check(f.centerX, "face.centerX")
        try check(f.centerY, "face.centerY")
        try check(f.yawDegrees, "face.yawDegrees")
        try check(f.lineOfSightYawDegrees, "face.lineOfSightYawDegrees")
        // Pitch and eye distance feed the blink rule (nods, landmark-fit jumps).
        try check(f.pitchDegrees, "face.pitchDegrees")
        try check(f.eyeDistancePixels, "face.eyeDistancePixels")
        try check(f.planarResidual, "face.planarResidual")
        switch f.eyes {
        case let .aspectRatio(l, r), let .closure(l, r):
            try check(l, "face.eyes.left")
            try check(r, "face.eyes.right")
        }
    }

    private func assessment(_ o: Observation, phase: Phase, notCredited: NotCreditedReason?) -> FrameAssessment {
        FrameAssessment(
            frameIndex: o.frameIndex, timestampMicroseconds: o.timestampMicroseconds,
            eyeClosureLeft: nil, eyeClosureRight: nil, filteredYawDegrees: nil, relativeYawDegrees: nil,
            deviceRotation: o.deviceRotation, credited: false, notCreditedReason: notCredited,
            phase: phase, hud: hud ?? .noFace, inGuide: nil)
    }

    private mutating func emitHUD(for frame: FrameAssessment, into events: inout [LivenessEvent]) {
        let state: HUDState
        switch frame.inGuide {
        case nil: state = .noFace
        case false? where prompts?.openStep == nil: state = .outsideGuide
        case _ where prompts != nil:
            // Prompted: an open prompt stays on screen while the face is tracked (a turn may move
            // it out of the guide); otherwise the user is asked to look straight and hold still.
            state = prompts!.openStep.map { .prompt($0) } ?? .holdStill
        case false?: state = .outsideGuide
        case true?: state = .progress(done: actionsDone, total: actionsTotal)
        }
        setHUD(state, into: &events)
    }

    private mutating func setHUD(_ state: HUDState, into events: inout [LivenessEvent]) {
        if hud != state {
            hud = state
            events.append(.hud(state))
        }
    }

    private mutating func credit(_ e: ActionEvidence, into events: inout [LivenessEvent]) {
        evidence.actions.append(e)
        events.append(.actionCredited(e))
    }

    private mutating func decide(_ v: Verdict, into events: inout [LivenessEvent]) {
        verdict = v
        events.append(.verdict(v))
        phase = .done
        events.append(.phase(.done))
    }
}
