/// One step of a prompted challenge: what the user is asked to do.
public enum PromptStep: String, Sendable, Codable, CaseIterable {
    /// Turn the head to the subject's own left (positive relative yaw).
    case turnLeft
    /// Turn the head to the subject's own right (negative relative yaw).
    case turnRight
    /// Close and reopen both eyes.
    case blink

    /// The user-facing instruction the HUD shows while the step is prompted.
    public var text: String {
        switch self {
        case .turnLeft: return "Turn your head to the left"
        case .turnRight: return "Turn your head to the right"
        case .blink: return "Blink"
        }
    }

    /// The action the step asks for.
    public var action: Action { self == .blink ? .blink : .turnHead }

    /// The turn direction the step asks for; `nil` for a blink.
    public var direction: TurnDirection? {
        switch self {
        case .turnLeft: return .left
        case .turnRight: return .right
        case .blink: return nil
        }
    }
}
