import FaceTracking
import LivenessCore

/// Device rotation from motion samples: the angular speed of a frame is the mean |ω| of the
/// samples in the interval since the previous frame (for the first frame, the 100 ms before
/// it). A frame whose interval holds no sample borrows the nearest sample within 100 ms;
/// failing that its rotation is unknown.
public final class SensorRotation: RotationProvider {
    private let samples: [MotionSamples.Sample]
    private var previousSeconds: Double?
    private var firstTimestamp: Int64?
    private var cursor = 0
    /// Frames that had no sample near them.
    public private(set) var framesWithoutSamples = 0

    public init(samples: MotionSamples) throws(InputError) {
        self.samples = samples.samples
        guard !self.samples.isEmpty else { throw InputError(path: "motion samples", problem: "no samples") }
    }

    public func rotation(for frame: Image, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation {
        let first = firstTimestamp ?? timestampMicroseconds
        if firstTimestamp == nil { firstTimestamp = timestampMicroseconds }
        let t = Double(timestampMicroseconds - first) / 1e6
        let from = previousSeconds ?? (t - 0.1)
        previousSeconds = t
        while cursor < samples.count && samples[cursor].seconds <= from { cursor += 1 }
        var sum = 0.0, count = 0
        var i = cursor
        while i < samples.count && samples[i].seconds <= t {
            sum += samples[i].degreesPerSecond
            count += 1
            i += 1
        }
        if count > 0 { return DeviceRotation(degreesPerSecond: sum / Double(count), source: .sensor) }
        // No sample in the interval: the nearest one within 100 ms.
        let candidates = [cursor - 1, cursor].filter { $0 >= 0 && $0 < samples.count }
        if let nearest = candidates.min(by: { abs(samples[$0].seconds - t) < abs(samples[$1].seconds - t) }),
           abs(samples[nearest].seconds - t) <= 0.1 {
            return DeviceRotation(degreesPerSecond: samples[nearest].degreesPerSecond, source: .sensor)
        }
        framesWithoutSamples += 1
        return .unknown
    }

    public func didObserve(_ measurement: FrameMeasurement) {}

    /// A warning when samples were missing for some frames.
    public var summary: String? {
        framesWithoutSamples == 0 ? nil : "\(framesWithoutSamples) frames had no motion sample within 100 ms; their rotation is unknown"
    }
}
