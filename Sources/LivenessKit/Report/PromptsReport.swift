import LivenessCore

/// The report's `prompts`: the challenge mode and, in prompted mode, every prompt shown with its
/// answer (`PromptedChallenge`, docs/prompted-challenge.md). Times are seconds on the input's
/// clock, like every time of the report.
public struct PromptsReport: Sendable, Equatable, Codable {
    /// `passive` or `prompted`.
    public var mode: ChallengeMode
    /// Prompted: where the plan came from (`seed`, `random`, `log`); `nil` when passive.
    @NullWhenAbsent public var source: String?
    /// Prompted: the planned steps (`turnLeft`, `turnRight`, `blink`); empty when passive.
    public var steps: [PromptStep]
    /// Every prompt shown, in order.
    public var shown: [Shown]
    /// A turn credited while no prompt was open (it fails the session); `nil` when none was.
    @NullWhenAbsent public var unpromptedTurn: UnpromptedTurn?

    /// A turn made while no prompt was open.
    public struct UnpromptedTurn: Sendable, Equatable, Codable {
        /// The frame that credited it.
        public var frame: Int
        /// Its time, s.
        public var seconds: Double
        /// `left` or `right` (the subject's own).
        public var direction: TurnDirection
    }

    /// One prompt shown to the user.
    public struct Shown: Sendable, Equatable, Codable {
        /// Its position in `steps`, from 0.
        public var index: Int
        /// What was asked.
        public var step: PromptStep
        /// When it was shown, s.
        public var seconds: Double
        /// The frame it was shown on.
        public var frame: Int
        /// When the answer began, s; `nil` without one.
        @NullWhenAbsent public var responseSeconds: Double?
        /// The frame that credited the answer (or the wrong action); `nil` without one.
        @NullWhenAbsent public var responseFrame: Int?
        /// `responseSeconds − seconds`; `nil` without an answer.
        @NullWhenAbsent public var reactionSeconds: Double?
        /// `pending`, `followed`, `wrongDirection`, `wrongAction`, `anticipated` or `missed`.
        public var outcome: PromptOutcome

        private enum CodingKeys: String, CodingKey {
            case index, step, seconds, frame, responseSeconds, responseFrame, reactionSeconds, outcome
        }

    }

    private enum CodingKeys: String, CodingKey { case mode, source, steps, shown, unpromptedTurn }

    /// The report of `evidence`, times rounded as the report rounds them.
    public init(_ evidence: ChallengeEvidence) {
        let q = NumberFormat.quantized
        mode = evidence.mode
        source = evidence.mode == .passive ? nil : evidence.source
        steps = evidence.steps
        shown = evidence.prompts.map { p in
            Shown(index: p.index, step: p.step, seconds: Double(p.promptMicroseconds) / 1e6, frame: p.promptFrameIndex,
                  responseSeconds: p.responseMicroseconds.map { Double($0) / 1e6 }, responseFrame: p.responseFrameIndex,
                  reactionSeconds: p.reactionSeconds.map(q), outcome: p.outcome)
        }
        unpromptedTurn = evidence.unpromptedTurn.map {
            UnpromptedTurn(frame: $0.frameIndex, seconds: Double($0.timestampMicroseconds) / 1e6, direction: $0.direction)
        }
    }
}
