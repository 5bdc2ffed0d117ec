/// What the client shows the user. Emitted (as `LivenessEvent.hud`) on every change.
public enum HUDState: Sendable, Equatable {
    /// No face is tracked.
    case noFace
    /// A face is tracked but its centre lies outside the guide circle.
    case outsideGuide
    /// The face is inside the guide; `done` of `total` actions are complete. Before the scan
    /// (settle, framing) a face in the guide also shows progress, with `done == 0`.
    case progress(done: Int, total: Int)
    /// Prompted mode: the face is in view and no prompt is open; the next prompt waits until the
    /// face is frontal, eyes open, and still.
    case holdStill
    /// Prompted mode: the step the user is asked to do now.
    case prompt(PromptStep)
    /// After the snapshot.
    case verifying

    /// The user-facing text, exactly as the spec fixes it.
    public var text: String {
        switch self {
        case .noFace: return "Position your face in the circle"
        case .outsideGuide: return "Move your face into the frame"
        case .progress: return "Almost there, keep going…"
        case .holdStill: return "Look straight at the camera"
        case let .prompt(step): return step.text
        case .verifying: return "Verifying…"
        }
    }

    /// A stable machine name: `noFace`, `outsideGuide`, `progress`, `holdStill`, `prompt`, `verifying`.
    public var name: String {
        switch self {
        case .noFace: return "noFace"
        case .outsideGuide: return "outsideGuide"
        case .progress: return "progress"
        case .holdStill: return "holdStill"
        case .prompt: return "prompt"
        case .verifying: return "verifying"
        }
    }
}
