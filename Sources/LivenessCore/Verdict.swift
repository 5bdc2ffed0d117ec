/// Why a session failed.
public enum FailureReason: String, Sendable, Codable {
    /// No face was tracked on any frame. Takes precedence over `timeout` and `inputEnded`.
    case noFace
    /// The scan cap passed (measured from the autoshot) before both actions were done.
    case timeout
    /// A recording ended before a verdict.
    case inputEnded
    /// A stream was closed before a verdict.
    case cancelled
    /// The input could not be used (reported by front ends).
    case invalidInput
    /// Not a live face in front of a camera: a turn credited on a flat picture (the parallax
    /// check), or a picture that stayed unchanged (the frozen-input check). The evidence says
    /// which (`Evidence.parallax`, `Evidence.frozen`).
    case presentationAttack
    /// Prompted mode: a prompt was answered with a turn to the other side, a turn when a blink
    /// was asked, a turn begun before the prompt could be seen, or not within its response
    /// window (`PromptOutcome`); or the head turned while no prompt was open. The report's
    /// `prompts` says which.
    case challengeNotFollowed
    /// The service stopped while the stream was open — a crash, `kill -9`, a power loss — and
    /// the session was ended on its next start, or by another instance on the same store
    /// (docs/store.md). Nothing was judged to the end: the frames went with the process.
    case interrupted
}

/// The outcome of a session.
public enum VerdictStatus: String, Sendable, Codable {
    /// Both actions were credited.
    case passed
    /// See the verdict's `reason`.
    case failed
}

/// The verdict, given once per session.
public struct Verdict: Sendable, Equatable, Codable {
    /// Passed or failed.
    public var status: VerdictStatus
    /// The failure reason; `nil` when passed.
    public var reason: FailureReason?
    /// Timestamp in microseconds of the frame that decided it, or of the last frame seen when the
    /// input ended (0 if there was none).
    public var timestampMicroseconds: Int64
    /// The deciding frame's index; `nil` when decided by `finish(_:)`.
    public var frameIndex: Int?

    /// Creates a verdict.
    public init(status: VerdictStatus, reason: FailureReason?, timestampMicroseconds: Int64, frameIndex: Int?) {
        self.status = status
        self.reason = reason
        self.timestampMicroseconds = timestampMicroseconds
        self.frameIndex = frameIndex
    }
}
