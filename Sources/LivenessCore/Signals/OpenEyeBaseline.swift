/// One eye's open-eye baseline EAR: a fast estimate that a slower, held one backs up.
///
/// * **Fast estimate**: the `eyeBaselinePercentile` (default 75th) percentile of the eye's EAR
///   over the tracked frames of the trailing `eyeBaselineWindowSeconds` (default 1 s), current
///   frame excluded. Blinks are short, so a high percentile ignores them while the window follows
///   smiles, talking and head pose.
/// * **Held baseline** (what is reported): it rises with the fast estimate at once; when the fast
///   estimate is lower, the held value moves towards it by the fraction `min(1, Δt / τ)` of the gap
///   on each frame, `Δt` the time since the previous frame and `τ = eyeBaselineHoldSeconds`
///   (default 3 s). A run of closures that fills more than a quarter of the window pulls the fast
///   estimate down to the closed level within a second; the held baseline keeps most of the open
///   level for several seconds (after 1 s of closed frames it has lost ≈ 28 % of the gap, after
///   2.6 s ≈ 58 %), while a lasting change of the open level (a smile, a new head pose) is
///   followed within a few seconds. `τ = 0` reports the fast estimate alone.
public struct OpenEyeBaseline: Sendable, Equatable {
    private let holdMicros: Int64
    private let percentile: Double
    /// The held baseline EAR after the latest `update`, `nil` before the first.
    public private(set) var value: Double?
    private var lastMicros: Int64?

    /// - Parameters:
    ///   - percentile: percentile (0…1) of the window's EAR taken as the fast estimate.
    ///   - holdSeconds: time constant τ in seconds with which the held baseline falls (0: no hold).
    public init(percentile: Double, holdSeconds: Double) {
        self.percentile = percentile
        holdMicros = max(0, microseconds(holdSeconds))
    }

    /// Updates the baseline from the window's EARs (not empty; current frame excluded) at
    /// `timestampMicroseconds`; returns the held baseline EAR.
    @discardableResult
    public mutating func update(window ears: [Double], timestampMicroseconds t: Int64) -> Double {
        var copy = ears
        return update(sorting: &copy, timestampMicroseconds: t)
    }

    /// The same, sorting `ears` in place (a scratch buffer the caller keeps).
    @discardableResult
    mutating func update(sorting ears: inout [Double], timestampMicroseconds t: Int64) -> Double {
        let fast = OrderStatistics.quantile(sorting: &ears, percentile)
        var held = fast
        if let previous = value, let last = lastMicros, previous > fast, holdMicros > 0 {
            let fraction = min(1, Double(max(0, t - last)) / Double(holdMicros))
            held = previous - (previous - fast) * fraction
        }
        value = held
        lastMicros = t
        return held
    }
}
