/// Small order statistics over bounded windows (a few dozen values); sorting a copy is cheaper
/// than maintaining a tree at these sizes.
enum OrderStatistics {
    /// The `p`-quantile (0…1) of `values` by linear interpolation between order statistics
    /// (the "type 7" definition of R and NumPy's default). `p` outside 0…1 is clamped, NaN is
    /// taken as 0.5; an empty `values` gives NaN (never a trap: a policy window of a negative or
    /// zero length can leave a window empty).
    static func quantile(_ values: [Double], _ p: Double) -> Double {
        var copy = values
        return quantile(sorting: &copy, p)
    }

    /// The same, sorting `values` in place: the per-frame filters pass a scratch buffer they
    /// keep, so that no array is allocated per frame.
    static func quantile(sorting s: inout [Double], _ p: Double) -> Double {
        guard !s.isEmpty else { return .nan }
        s.sort()
        let pos = (p.isNaN ? 0.5 : min(max(p, 0), 1)) * Double(s.count - 1)
        let lo = Int(pos.rounded(.down))
        let hi = min(lo + 1, s.count - 1)
        let f = pos - Double(lo)
        return s[lo] + (s[hi] - s[lo]) * f
    }

    /// The median of `values` (mean of the two middle values for an even count). Must not be empty.
    static func median(_ values: [Double]) -> Double { quantile(values, 0.5) }
}

/// A trailing window of timestamped samples, bounded by age and by count.
struct TimedWindow<Value: Sendable & Equatable>: Sendable, Equatable {
    /// Samples, oldest first.
    private(set) var samples: [(t: Int64, value: Value)] = []
    /// Hard bound on the stored samples, whatever the frame rate.
    let maxCount: Int

    init(maxCount: Int = 512) { self.maxCount = maxCount }

    /// Appends a sample.
    mutating func append(_ value: Value, at t: Int64) {
        samples.append((t, value))
        if samples.count > maxCount { samples.removeFirst(samples.count - maxCount) }
    }

    /// Drops samples older than `now - age` (a sample exactly `age` old is kept). A negative
    /// `age` is taken as 0 (only samples at `now` stay); differences saturate instead of trapping.
    mutating func drop(olderThan age: Int64, now: Int64) {
        let age = max(age, 0)
        if let k = samples.firstIndex(where: { sample in
            let (elapsed, overflow) = now.subtractingReportingOverflow(sample.t)
            return overflow ? sample.t > now : elapsed <= age
        }) {
            if k > 0 { samples.removeFirst(k) }
        } else {
            samples.removeAll()
        }
    }

    var values: [Value] { samples.map(\.value) }
    var count: Int { samples.count }

    static func == (a: Self, b: Self) -> Bool {
        a.maxCount == b.maxCount && a.samples.count == b.samples.count
            && zip(a.samples, b.samples).allSatisfy { $0.t == $1.t && $0.value == $1.value }
    }
}
