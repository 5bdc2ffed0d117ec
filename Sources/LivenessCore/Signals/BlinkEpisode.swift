/// One closure of the eyes from its first closed frame until the eyes have reopened: a blink
/// event, credited at most once.
///
/// A frame is **closed** when its mean closure reaches `blinkClosureThreshold` (or, a slow
/// closure, its closure against the open-eye baseline does while the eyes' edges read closed) and
/// the eye-edge check does not see open eyes (`BlinkSignals.Reading.isClosed`); the first closed
/// frame after open eyes starts an episode. The landmark closure of a long or slow closure can
/// fall back under the threshold for a frame or two while the eyes stay shut (glasses: the
/// fitted lids jump), so the episode ends only after `reopenFrames` consecutive frames that
/// **look open**: the lids back at their open level (`lidsOpen`: closure at most
/// `LivenessPolicy.eyeReopenClosure`, 0) and the eyes' relative edge share (`EyeEdgeBaseline`)
/// at least `reopenRatio` (or unknown). A frame whose closure is high but
/// whose edges show open eyes neither continues nor ends an episode. Without a face the episode
/// ends. The blink is credited on the episode's first credited closed frame.
///
/// **The onset** (`onsetRatio`): a closed frame starts an episode only when the eyes'
/// vertical-edge shares have dropped against the moment just before: the mean over the two eyes
/// of share / (the eye's median share over the open frames of the last `onsetSeconds`) is at
/// most `onsetRatio`. A real closure hides the iris within a frame or two, whatever the eyes'
/// level over the last seconds; landmark lids that close on an open eye (glare that comes and
/// goes with the head's pose, a look down) leave the shares where they were. With fewer than two
/// open frames in that time, or shares not measured, the onset is not judged.
public struct BlinkEpisode: Sendable, Equatable {
    /// Whether an episode is open (the eyes count as closed) after the latest frame.
    public private(set) var closed = false
    private var credited = false
    private var openFrames = 0
    private let reopenRatio: Double
    private let reopenFrames: Int
    private let onsetRatio: Double?
    private let onsetMicros: Int64
    /// The eyes' vertical-edge shares on one open frame.
    private struct OpenShares: Sendable, Equatable {
        var t: Int64
        var left: Double
        var right: Double
    }
    /// The recent open frames' shares.
    private var recentOpen: [OpenShares] = []

    /// - Parameters:
    ///   - reopenRatio: relative edge share (dimensionless, about 1 open) from which a frame under
    ///     the closure threshold looks open.
    ///   - reopenFrames: consecutive open-looking frames that end an episode (at least 1).
    ///   - onsetRatio: the most an onset may keep of the eyes' edge shares just before it
    ///     (dimensionless); nil: the onset is not judged.
    ///   - onsetSeconds: how far back the open frames of that reference go, seconds.
    public init(reopenRatio: Double, reopenFrames: Int, onsetRatio: Double? = nil, onsetSeconds: Double = 0.5) {
        self.reopenRatio = reopenRatio
        self.reopenFrames = max(1, reopenFrames)
        self.onsetRatio = onsetRatio
        onsetMicros = max(0, microseconds(onsetSeconds))
    }

    /// The episode rule of a policy: its reopening, and its onset when the eye-edge check is on.
    public init(policy: LivenessPolicy) {
        self.init(reopenRatio: policy.eyeReopenRatio, reopenFrames: policy.eyeReopenFrames,
                  onsetRatio: policy.eyeEdgeCheck != 0 ? policy.eyeEdgeOnsetRatio : nil, onsetSeconds: policy.eyeEdgeOnsetSeconds)
    }

    /// Takes one frame with a face: `closedNow` (the frame is closed), `closureBelow` (its
    /// closure is under the threshold, or unknown), `edgeRelative` (its relative edge share, if
    /// measured), the eyes' vertical-edge shares `edgeLeft` and `edgeRight` (if measured) at
    /// `timestampMicroseconds`, `lidsOpen` (the lids are back at their open level; nil: as
    /// `closureBelow`) and `credited` (it may count towards an action). Returns true when the
    /// frame credits a blink: the episode's first credited closed frame.
    public mutating func update(closedNow: Bool, closureBelow: Bool, edgeRelative: Double?, edgeLeft: Double? = nil,
                                edgeRight: Double? = nil, timestampMicroseconds t: Int64 = 0, lidsOpen: Bool? = nil,
                                credited frameCredited: Bool) -> Bool {
        recentOpen.removeAll { t - $0.t > onsetMicros }
        let blink = step(closedNow: closedNow && (closed || onsetDrops(left: edgeLeft, right: edgeRight)),
                         lidsOpen: lidsOpen ?? closureBelow, edgeRelative: edgeRelative, credited: frameCredited)
        if !closed, closureBelow, let l = edgeLeft, let r = edgeRight, l.isFinite, r.isFinite {
            recentOpen.append(OpenShares(t: t, left: l, right: r))
        }
        return blink
    }

    /// Whether the shares have dropped enough against the recent open frames for an onset (true
    /// when the onset is not judged).
    private func onsetDrops(left: Double?, right: Double?) -> Bool {
        guard let onsetRatio, let left, let right, recentOpen.count >= 2 else { return true }
        var lefts = recentOpen.map(\.left), rights = recentOpen.map(\.right)
        let referenceLeft = OrderStatistics.quantile(sorting: &lefts, 0.5)
        let referenceRight = OrderStatistics.quantile(sorting: &rights, 0.5)
        guard referenceLeft > 0, referenceRight > 0 else { return true }
        return (left / referenceLeft + right / referenceRight) / 2 <= onsetRatio
    }

    private mutating func step(closedNow: Bool, lidsOpen: Bool, edgeRelative: Double?, credited frameCredited: Bool) -> Bool {
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
        let looksOpen = lidsOpen && (edgeRelative.map { $0 >= reopenRatio } ?? true)
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
        recentOpen.removeAll()
    }
}
