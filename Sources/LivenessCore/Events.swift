/// A still the front end should keep: the machine names the frame, the owner of the pixels saves it.
public struct StillCapture: Sendable, Equatable, Codable {
    /// Index of the frame to keep.
    public var frameIndex: Int
    /// Its timestamp in microseconds.
    public var timestampMicroseconds: Int64
    /// The face box in pixels on that frame, if a face was tracked and its box known.
    public var box: FaceBox?
    /// For the autoshot: `true` when framed (face in the guide), `false` for the timeout fallback.
    /// Always `true` for the snapshot.
    public var framed: Bool

    /// Creates a still capture record.
    public init(frameIndex: Int, timestampMicroseconds: Int64, box: FaceBox?, framed: Bool) {
        self.frameIndex = frameIndex
        self.timestampMicroseconds = timestampMicroseconds
        self.box = box
        self.framed = framed
    }
}

/// The frame and measured value that credited an action.
public struct ActionEvidence: Sendable, Equatable, Codable {
    /// Which action.
    public var action: Action
    /// The crediting frame's index (for a turn, the last frame of the held run).
    public var frameIndex: Int
    /// The crediting frame's timestamp in microseconds.
    public var timestampMicroseconds: Int64
    /// Blink: mean eye closure (0…1). Turn: relative yaw in degrees (signed; positive = subject's left).
    public var value: Double
    /// Turn: the subject's direction. Blink: `nil`.
    public var direction: TurnDirection?

    /// Creates an action evidence record.
    public init(action: Action, frameIndex: Int, timestampMicroseconds: Int64, value: Double, direction: TurnDirection?) {
        self.action = action
        self.frameIndex = frameIndex
        self.timestampMicroseconds = timestampMicroseconds
        self.value = value
        self.direction = direction
    }
}

/// What happened on a frame, in the order it happened.
///
/// Order within one frame: phase changes, `autoshot`, `promptAnswered`, `actionCredited`,
/// `promptShown`, `hud`; on the frame that
/// completes the second action: `snapshot`, `phase(.verifying)`, `hud(.verifying)`,
/// `verdict(.passed)`, `phase(.done)`. A failing frame ends with `verdict`, `phase(.done)`.
public enum LivenessEvent: Sendable, Equatable {
    /// The HUD changed (also emitted for the first frame).
    case hud(HUDState)
    /// A new phase started.
    case phase(Phase)
    /// Keep this frame as the autoshot.
    case autoshot(StillCapture)
    /// An action was credited.
    case actionCredited(ActionEvidence)
    /// A prompted step's prompt is shown from this frame on (`ChallengeMode.prompted`).
    case promptShown(PromptRecord)
    /// A prompted step was answered or missed; the record holds the outcome.
    case promptAnswered(PromptRecord)
    /// Keep this frame as the snapshot.
    case snapshot(StillCapture)
    /// The verdict; nothing follows but `phase(.done)`.
    case verdict(Verdict)
}
