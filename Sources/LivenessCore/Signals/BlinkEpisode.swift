/// One closure of the eyes from its first closed frame until the eyes have reopened: a blink
/// event, credited at most once.
///
/// A frame is **closed** when its mean closure reaches `blinkClosureThreshold` and the eye-edge
/// check does not see open eyes (`FrameAssessment.eyesClosed(threshold:)`); the first closed
/// frame after open eyes starts an episode. The landmark closure of a long or slow closure can
/// fall back under the threshold for a frame or two while the eyes stay shut (glasses: the
/// fitted lids jump), so the episode ends only after `reopenFrames` consecutive frames that
/// **look open**: closure under the threshold and the eyes' relative edge share
/// (`EyeEdgeBaseline`) at least `reopenRatio` (or unknown). A frame whose closure is high but
/// whose edges show open eyes neither continues nor ends an episode. Without a face the episode
/// ends. The blink is credited on the episode's first credited closed frame.
public struct BlinkEpisode: Sendable, Equatable {
    /// Whether an episode is open (the eyes count as closed) after the latest frame.
    public private(set) var closed = false
    private var credited = false
    private var openFrames = 0
    private let reopenRatio: Double
    private let reopenFrames: Int

    /// - Parameters:
    ///   - reopenRatio: relative edge share (dimensionless, about 1 open) from which a frame under
    ///     the closure threshold looks open.
    ///   - reopenFrames: consecutive open-looking frames that end an episode (at least 1).
    public init(reopenRatio: Double, reopenFrames: Int) {
        self.reopenRatio = reopenRatio
        self.reopenFrames = max(1, reopenFrames)
    }

    /// Takes one frame with a face: `closedNow` (the frame is closed), `closureBelow` (its
    /// closure is under the threshold, or unknown), `edgeRelative` (its relative edge share, if
    /// measured) and `credited` (it may count towards an action). Returns true when the frame
    /// credits a blink: the episode's first credited closed frame.
    public mutating func update(closedNow: Bool, closureBelow: Bool, edgeRelative: Double?, credited frameCredited: Bool) -> Bool {
        if closedNow {
            if !closed {
                closed = true
                credited = false
            }
            openFrames = 0
            if frameCredited, !credited {
                credited = true
                return true
            }
            return false
        }
        guard closed else { return false }
        let looksOpen = closureBelow && (edgeRelative.map { $0 >= reopenRatio } ?? true)
        openFrames = looksOpen ? openFrames + 1 : 0
        if openFrames >= reopenFrames {
            closed = false
            openFrames = 0
        }
        return false
    }

    /// A frame without a face: any episode ends.
    public mutating func reset() {
        closed = false
        credited = false
        openFrames = 0
    }
}
