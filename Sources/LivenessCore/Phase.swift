/// The session phases, in order.
public enum Phase: String, Sendable, Codable {
    /// The first `settleSeconds` after the first frame: not used for the autoshot.
    case settle
    /// Waiting for the face to sit in the guide circle (or the framing timeout).
    case framing
    /// From the autoshot: both actions are watched, up to the scan cap.
    case scan
    /// After the snapshot, before the verdict is final.
    case verifying
    /// A verdict exists; further frames are counted, not processed.
    case done
}
