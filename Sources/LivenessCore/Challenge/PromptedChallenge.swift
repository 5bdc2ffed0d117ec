/// The prompted challenge's decisions (`ChallengeMode.prompted`): when to show each prompt, and
/// whether what the user did answers it. A value; time is the frames' timestamps.
///
/// The rules (docs/prompted-challenge.md):
/// * **When a prompt is shown.** A planned step with a delay is shown once the face has been
///   *ready* — on credited frames, turned by less than half of `turnYawDegrees` from the frontal
///   baseline (blinks do not matter) — for `promptStillSeconds` plus
///   the step's random delay without a break. A logged step is shown on the first scan frame at
///   or after its logged time. One prompt is open at a time.
/// * **What answers it.** A turn answers when its run of `turnHeldFrames` frames beyond
///   `turnYawDegrees` is credited; it *began* on the first frame of the stretch turned by at
///   least half of `turnYawDegrees`, same direction, that led to it. The stretch is found on the
///   median-filtered yaw (a single noisy frame never starts one) and then extended back over the
///   frames, at most `yawMedianWindowSeconds` earlier, whose *unfiltered* yaw already was past
///   that half turn without a break: the filter delays a turn by about half its window, and the
///   onset must be the head's, not the filter's. A blink answers on the
///   credited frame its closure reaches the threshold.
/// * **Outcomes.** The prompted action begun within `promptMinReactionSeconds` …
///   `promptResponseSeconds` of the prompt is `followed`. A turn to the other side is
///   `wrongDirection`, a turn during a blink prompt `wrongAction`, a prompted turn begun sooner
///   than `promptMinReactionSeconds` `anticipated`; no answer begun within
///   `promptResponseSeconds` is `missed`. Each of these fails the session
///   (`FailureReason.challengeNotFollowed`).
/// * **Unprompted turns fail.** A turn credited while no prompt is open (before the first, between
///   two) fails the session too (`ChallengeEvidence.unpromptedTurn`). Otherwise a recording that
///   blinks and then turns one way after every pause would pass every blink prompt and half of the
///   turn prompts; with the rule, a recording's fixed next action matches a step with chance 1/3.
///   A live user is asked to look straight at the camera between prompts (`HUDState.holdStill`).
/// * **What is ignored.** Blinks during a turn prompt, blinks sooner than
///   `promptMinReactionSeconds` after a blink prompt, and blinks while no prompt is open: people
///   blink on their own every few seconds, most of all when they move their eyes, so a blink
///   proves nothing there and must not fail a live user.
public struct PromptedChallenge: Sendable {
    /// What a frame tells the challenge.
    public struct Frame: Sendable {
        /// The frame's timestamp in microseconds.
        public var timestampMicroseconds: Int64
        /// The frame's index.
        public var frameIndex: Int
        /// Whether the machine credited the frame (a face, the scan, no rotation).
        public var credited: Bool
        /// The relative yaw in degrees (positive = subject's left), `nil` when unknown.
        public var relativeYawDegrees: Double?
        /// The same relative yaw before the median filter, in degrees (`nil`: unknown, or the
        /// source filters its yaw itself). Used only to date a turn's onset.
        public var unfilteredRelativeYawDegrees: Double?
        /// Mean closure of both eyes 0…1, `nil` when unknown.
        public var eyeClosureMean: Double?
        /// The frame credited a blink: its closure reached the threshold, the credited frame before
        /// it with a closure did not.
        public var blinkCredited: Bool
        /// The direction of the turn whose held run completed on this frame, if any.
        public var turnCredited: TurnDirection?

        /// Creates a frame record.
        public init(timestampMicroseconds: Int64, frameIndex: Int, credited: Bool, relativeYawDegrees: Double?,
                    unfilteredRelativeYawDegrees: Double? = nil,
                    eyeClosureMean: Double?, blinkCredited: Bool, turnCredited: TurnDirection?) {
            self.timestampMicroseconds = timestampMicroseconds
            self.frameIndex = frameIndex
            self.credited = credited
            self.relativeYawDegrees = relativeYawDegrees
            self.unfilteredRelativeYawDegrees = unfilteredRelativeYawDegrees
            self.eyeClosureMean = eyeClosureMean
            self.blinkCredited = blinkCredited
            self.turnCredited = turnCredited
        }
    }

    /// A turn credited while no prompt was open.
    public struct UnpromptedTurn: Sendable, Equatable, Codable {
        /// The frame that credited it.
        public var frameIndex: Int
        /// Its timestamp, µs.
        public var timestampMicroseconds: Int64
        /// The side the head turned to.
        public var direction: TurnDirection
    }

    /// What happened to the prompts on a frame.
    public enum Event: Sendable, Equatable {
        /// A prompt was shown.
        case shown(PromptRecord)
        /// A prompt was answered, or missed; the record holds the outcome.
        case answered(PromptRecord)
    }

    /// The plan.
    public let plan: ChallengePlan
    /// Every prompt shown so far, the open one last.
    public private(set) var prompts: [PromptRecord] = []

    private let policy: LivenessPolicy
    private var readySinceMicroseconds: Int64?
    private var onsetMicroseconds: Int64?
    private var onsetSign = 0
    /// The recent credited frames' unfiltered yaw (µs, degrees), oldest first, `nil` where a frame
    /// was not credited or had none: at most `yawMedianWindowSeconds` of them.
    private var recentYaw: [(t: Int64, yaw: Double?)] = []

    /// Creates the challenge of `plan`, judged with `policy`'s thresholds.
    public init(plan: ChallengePlan, policy: LivenessPolicy) {
        self.plan = plan
        self.policy = policy
    }

    /// The open prompt's step, `nil` between prompts.
    public var openStep: PromptStep? {
        guard let last = prompts.last, last.outcome == .pending else { return nil }
        return last.step
    }

    /// Every step was shown and followed.
    public var isComplete: Bool {
        prompts.count == plan.steps.count && prompts.allSatisfy { $0.outcome == .followed }
    }

    /// A turn credited while no prompt was open, if one was: it failed the session.
    public private(set) var unpromptedTurn: UnpromptedTurn?

    /// A prompt's outcome, or an unprompted turn, failed the session.
    public var hasFailed: Bool { unpromptedTurn != nil || prompts.contains { $0.outcome.failsSession } }

    /// How many steps were followed.
    public var followedCount: Int { prompts.filter { $0.outcome == .followed }.count }

    /// The evidence for the report.
    public var evidence: ChallengeEvidence {
        ChallengeEvidence(mode: .prompted, steps: plan.steps, source: plan.source.rawValue, prompts: prompts,
                          unpromptedTurn: unpromptedTurn)
    }

    /// Observes one scan frame before the verdict; returns what happened to the prompts.
    public mutating func observe(_ f: Frame) -> [Event] {
        guard !hasFailed, !isComplete else { return [] }
        let t = f.timestampMicroseconds
        trackOnset(f)
        var events: [Event] = []
        if let answer = answer(f) {
            prompts[prompts.count - 1] = answer
            events.append(.answered(answer))
            if answer.outcome.failsSession { return events }
        } else if let direction = f.turnCredited, openStep == nil {
            unpromptedTurn = UnpromptedTurn(frameIndex: f.frameIndex, timestampMicroseconds: t, direction: direction)
            return events
        }
        if openStep == nil, prompts.count < plan.steps.count, shouldShow(f) {
            let record = PromptRecord(index: prompts.count, step: plan.steps[prompts.count],
                                      promptMicroseconds: promptTime(at: t), promptFrameIndex: f.frameIndex)
            prompts.append(record)
            readySinceMicroseconds = nil
            events.append(.shown(record))
        }
        return events
    }

    // MARK: - Rules

    private var halfTurnDegrees: Double { policy.turnYawDegrees / 2 }

    /// The onset of the current turned stretch: consecutive credited frames whose filtered yaw is
    /// turned by at least half the turn threshold to one side, begun where the unfiltered yaw
    /// first passed it without a break (within the filter's window before the stretch).
    private mutating func trackOnset(_ f: Frame) {
        let t = f.timestampMicroseconds
        let window = microseconds(policy.yawMedianWindowSeconds)
        defer {
            recentYaw.append((t, f.credited ? f.unfilteredRelativeYawDegrees : nil))
            recentYaw.removeAll { t - $0.t > window }
        }
        guard f.credited, let rel = f.relativeYawDegrees, abs(rel) >= halfTurnDegrees else {
            onsetMicroseconds = nil
            onsetSign = 0
            return
        }
        let sign = rel > 0 ? 1 : -1
        guard sign != onsetSign || onsetMicroseconds == nil else { return }
        onsetSign = sign
        onsetMicroseconds = t
        // The filter's lag: walk back over the frames whose unfiltered yaw was already turned.
        guard let now = f.unfilteredRelativeYawDegrees, Double(sign) * now >= halfTurnDegrees else { return }
        for earlier in recentYaw.reversed() {
            guard t - earlier.t <= window, let yaw = earlier.yaw, Double(sign) * yaw >= halfTurnDegrees else { break }
            onsetMicroseconds = earlier.t
        }
    }

    /// The open prompt's record with its outcome when this frame decides it; `nil` otherwise.
    private func answer(_ f: Frame) -> PromptRecord? {
        guard var record = prompts.last, record.outcome == .pending else { return nil }
        let t = f.timestampMicroseconds
        let prompt = record.promptMicroseconds
        let earliest = prompt + microseconds(policy.promptMinReactionSeconds)
        let latest = prompt + microseconds(policy.promptResponseSeconds)
        if let direction = f.turnCredited {
            let began = onsetMicroseconds ?? t
            record.responseMicroseconds = began
            record.responseFrameIndex = f.frameIndex
            switch record.step.direction {
            case nil: record.outcome = .wrongAction
            case let wanted? where wanted != direction: record.outcome = .wrongDirection
            default:
                if began < earliest { record.outcome = .anticipated }
                else if began > latest { record.outcome = .missed }
                else { record.outcome = .followed }
            }
            return record
        }
        if record.step == .blink, f.blinkCredited, t >= earliest, t <= latest {
            record.responseMicroseconds = t
            record.responseFrameIndex = f.frameIndex
            record.outcome = .followed
            return record
        }
        guard t > latest else { return nil }
        // A turn begun inside the window may still complete its held run (within one more window).
        if record.step != .blink, let began = onsetMicroseconds, began <= latest, began >= prompt,
           t <= latest + microseconds(policy.promptResponseSeconds) {
            return nil
        }
        record.outcome = .missed
        return record
    }

    private mutating func shouldShow(_ f: Frame) -> Bool {
        let t = f.timestampMicroseconds
        switch plan.timings[prompts.count] {
        case let .at(timestampMicroseconds):
            return t >= timestampMicroseconds
        case .never:
            return false
        case let .afterReady(delaySeconds):
            // Blinks do not break readiness: someone who blinks every second must still be asked.
            let ready = f.credited && f.relativeYawDegrees.map { abs($0) < halfTurnDegrees } == true
            guard ready else {
                readySinceMicroseconds = nil
                return false
            }
            let since = readySinceMicroseconds ?? t
            readySinceMicroseconds = since
            return t - since >= microseconds(policy.promptStillSeconds + delaySeconds)
        }
    }

    /// A logged prompt is timed as logged (the user saw it then); a drawn one on its frame.
    private func promptTime(at t: Int64) -> Int64 {
        if case let .at(logged) = plan.timings[prompts.count] { return min(logged, t) }
        return t
    }
}
