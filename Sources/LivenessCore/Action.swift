/// The two actions of the scan. Both are watched on every frame, in whatever order the user does them.
public enum Action: String, Sendable, Codable, CaseIterable {
    /// Mean eye closure reaches the threshold on one credited frame.
    case blink
    /// Relative yaw beyond the threshold held on consecutive credited frames.
    case turnHead
}

/// Which way the head turned, from the subject's own point of view (mirroring does not matter).
public enum TurnDirection: String, Sendable, Codable {
    /// The subject turned to their own left (positive relative yaw).
    case left
    /// The subject turned to their own right (negative relative yaw).
    case right
}
