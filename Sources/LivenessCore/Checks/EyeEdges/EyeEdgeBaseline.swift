/// The two eyes' own recent vertical-edge shares (`FaceObservation.eyeEdges`), and how a frame's
/// shares compare with them: the pixel side of the blink rule.
///
/// The landmark eyelids (and so the closure) can close on an open eye: glare on glasses, a broad
/// smile, a look up or down move the fitted lids while the iris stays in view. An open eye's
/// iris gives vertical edges, a closed eye's lash line a horizontal one, so a real closure lowers
/// the eye patch's vertical-edge share well under its open level. The share depends on the face,
/// the glasses and the light, so each eye is read against its own recent level: the
/// `percentile` (0…1) of its shares over the tracked frames of the trailing `windowSeconds`,
/// current frame excluded (open eyes fill most of any few seconds). The frame's **relative edge
/// share** is the mean over the two eyes of share / level; a closure whose relative share is
/// above `LivenessPolicy.eyeEdgeMaxRatio` (0.75 by default: measured on the shared clips'
/// labelled blinks, docs/blinks.md) is not a blink.
public struct EyeEdgeBaseline: Sendable, Equatable {
    /// Whether the eye-edge check keeps a frame from counting as closed, whatever its closure:
    /// the check is on (`policy.eyeEdgeCheck`), both eyes were measured (`left`, `right`), and
    /// their relative share (`update`'s result) is above `policy.eyeEdgeMaxRatio` — or not known
    /// yet (the eyes' levels need `eyeEdgeMinimumFrames` frames): a closure the pixels cannot
    /// confirm does not count. Frames without measurements are judged on the closure alone.
    public static func vetoes(left: Double?, right: Double?, relative: Double?, policy: LivenessPolicy) -> Bool {
        guard policy.eyeEdgeCheck != 0, left != nil, right != nil else { return false }
        return relative.map { $0 > policy.eyeEdgeMaxRatio } ?? true
    }

    private var left = TimedWindow<Double>()
    private var right = TimedWindow<Double>()
    private let windowMicros: Int64
    private let percentile: Double
    private let minimumFrames: Int
    private var scratch: [Double] = []

    /// - Parameters:
    ///   - windowSeconds: length of the trailing window of shares, seconds.
    ///   - percentile: percentile (0…1) of an eye's window taken as its level.
    ///   - minimumFrames: shares an eye's window needs before it has a level.
    public init(windowSeconds: Double, percentile: Double, minimumFrames: Int) {
        windowMicros = max(0, microseconds(windowSeconds))
        self.percentile = percentile
        self.minimumFrames = max(1, minimumFrames)
    }

    /// The frame's relative edge share against the levels before it (nil while either eye has
    /// fewer than `minimumFrames` shares in its window, a level of 0, or an eye not measured),
    /// then the frame's shares join the windows. Dimensionless: about 1 for an open eye.
    public mutating func update(left l: Double?, right r: Double?, timestampMicroseconds t: Int64) -> Double? {
        left.drop(olderThan: windowMicros, now: t)
        right.drop(olderThan: windowMicros, now: t)
        var relative: Double?
        if let l, let r, let levelLeft = level(left), let levelRight = level(right), levelLeft > 0, levelRight > 0 {
            relative = (l / levelLeft + r / levelRight) / 2
        }
        if let l, l.isFinite { left.append(l, at: t) }
        if let r, r.isFinite { right.append(r, at: t) }
        return relative
    }

    private mutating func level(_ window: TimedWindow<Double>) -> Double? {
        guard window.count >= minimumFrames else { return nil }
        scratch = window.values
        return OrderStatistics.quantile(sorting: &scratch, percentile)
    }
}
