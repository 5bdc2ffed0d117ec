/// How a prompted step ended.
public enum PromptOutcome: String, Sendable, Codable {
    /// Shown; no answer yet (the session ended or the step is still open).
    case pending
    /// The prompted action began inside the response window and was credited.
    case followed
    /// A turn in the other direction was credited while the step was prompted.
    case wrongDirection
    /// A turn was credited while a blink was prompted.
    case wrongAction
    /// The turn that answered began sooner after the prompt than a person can react
    /// (`promptMinReactionSeconds`): it was started before the prompt could be seen.
    case anticipated
    /// No answer began within `promptResponseSeconds` of the prompt.
    case missed

    /// Whether the outcome fails the session.
    public var failsSession: Bool { self != .pending && self != .followed }
}

/// One prompt of a session, for the report and the prompt log.
public struct PromptRecord: Sendable, Equatable, Codable {
    /// The step's position in the plan, from 0.
    public var index: Int
    /// What was asked.
    public var step: PromptStep
    /// When the prompt was shown: the timestamp (µs) of the frame on which it was issued.
    public var promptMicroseconds: Int64
    /// That frame's index.
    public var promptFrameIndex: Int
    /// When the answer began (µs): for a turn, the first frame of the stretch turned by at least
    /// half of `turnYawDegrees` that led to the credited turn; for a blink, the credited frame.
    /// `nil` without an answer.
    public var responseMicroseconds: Int64?
    /// The frame that credited the answer (or the wrong action), `nil` without one.
    public var responseFrameIndex: Int?
    /// Seconds from the prompt to the answer's beginning, `nil` without one.
    public var reactionSeconds: Double? {
        responseMicroseconds.map { Double($0 - promptMicroseconds) / 1_000_000 }
    }
    /// How the step ended.
    public var outcome: PromptOutcome

    /// Creates a prompt record.
    public init(index: Int, step: PromptStep, promptMicroseconds: Int64, promptFrameIndex: Int,
                responseMicroseconds: Int64? = nil, responseFrameIndex: Int? = nil, outcome: PromptOutcome = .pending) {
        self.index = index
        self.step = step
        self.promptMicroseconds = promptMicroseconds
        self.promptFrameIndex = promptFrameIndex
        self.responseMicroseconds = responseMicroseconds
        self.responseFrameIndex = responseFrameIndex
        self.outcome = outcome
    }

    private enum CodingKeys: String, CodingKey {
        case index, step, promptMicroseconds, promptFrameIndex, responseMicroseconds, responseFrameIndex, reactionSeconds, outcome
    }

    /// Encodes every key, absent values as `null`, with the derived `reactionSeconds`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(index, forKey: .index)
        try c.encode(step, forKey: .step)
        try c.encode(promptMicroseconds, forKey: .promptMicroseconds)
        try c.encode(promptFrameIndex, forKey: .promptFrameIndex)
        try c.encodeOrNull(responseMicroseconds, forKey: .responseMicroseconds)
        try c.encodeOrNull(responseFrameIndex, forKey: .responseFrameIndex)
        try c.encodeOrNull(reactionSeconds, forKey: .reactionSeconds)
        try c.encode(outcome, forKey: .outcome)
    }

    /// Decodes a record (`reactionSeconds` is derived and ignored).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        index = try c.decode(Int.self, forKey: .index)
        step = try c.decode(PromptStep.self, forKey: .step)
        promptMicroseconds = try c.decode(Int64.self, forKey: .promptMicroseconds)
        promptFrameIndex = try c.decode(Int.self, forKey: .promptFrameIndex)
        responseMicroseconds = try c.decodeIfPresent(Int64.self, forKey: .responseMicroseconds)
        responseFrameIndex = try c.decodeIfPresent(Int.self, forKey: .responseFrameIndex)
        outcome = try c.decode(PromptOutcome.self, forKey: .outcome)
    }
}

/// The challenge of a session, for the report (`challenge`).
public struct ChallengeEvidence: Sendable, Equatable, Codable {
    /// `passive` or `prompted`.
    public var mode: ChallengeMode
    /// The planned steps (prompted only; empty when passive). Steps after the last shown prompt
    /// were never shown to the user.
    public var steps: [PromptStep]
    /// `random` (drawn by the engine or the service), `log` (a capture client's prompt log), or
    /// `none` (passive).
    public var source: String
    /// Every prompt shown, in order, with its answer.
    public var prompts: [PromptRecord]
    /// A turn credited while no prompt was open (it failed the session), `nil` when none was.
    public var unpromptedTurn: PromptedChallenge.UnpromptedTurn?

    /// Creates challenge evidence.
    public init(mode: ChallengeMode, steps: [PromptStep], source: String, prompts: [PromptRecord],
                unpromptedTurn: PromptedChallenge.UnpromptedTurn? = nil) {
        self.mode = mode
        self.steps = steps
        self.source = source
        self.prompts = prompts
        self.unpromptedTurn = unpromptedTurn
    }
}
