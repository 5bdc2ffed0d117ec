/// The session's frontal yaw baseline (spec §4): the median raw yaw of the tracked frames in the
/// `yawBaselineWindowSeconds` (default 0.5 s) up to and including the autoshot. Landmark yaw has a
/// per-person bias larger than the 7.5° turn threshold, so turns are measured relative to this.
/// If no face was tracked in that window, the first tracked frame of the scan fixes the baseline.
public struct YawBaseline: Sendable, Equatable {
    private let windowMicros: Int64
    private var recent = TimedWindow<Double>()
    /// The baseline in degrees, once fixed.
    public private(set) var degrees: Double?

    /// Creates an empty baseline collector for a window of `windowSeconds`.
    public init(windowSeconds: Double) { windowMicros = microseconds(windowSeconds) }

    /// Records a tracked frame's raw yaw (degrees) before the baseline is fixed.
    public mutating func record(yawDegrees: Double, timestampMicroseconds t: Int64) {
        guard degrees == nil else { return }
        recent.append(yawDegrees, at: t)
        recent.drop(olderThan: windowMicros, now: t)
    }

    /// Fixes the baseline from the frames recorded within the window before `timestampMicroseconds`
    /// (the autoshot's); leaves it unset when there were none.
    public mutating func fix(atTimestampMicroseconds t: Int64) {
        guard degrees == nil else { return }
        recent.drop(olderThan: windowMicros, now: t)
        if recent.count > 0 { degrees = OrderStatistics.median(recent.values) }
        recent = TimedWindow<Double>()
    }

    /// Fixes the baseline to `yawDegrees` if it is not yet fixed (first tracked frame of the scan).
    public mutating func fixIfUnset(yawDegrees: Double) {
        if degrees == nil { degrees = yawDegrees }
    }
}
