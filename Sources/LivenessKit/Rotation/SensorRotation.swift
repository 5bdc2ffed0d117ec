import FaceTracking
import LivenessCore

/// Device rotation from motion samples: the angular speed of a frame is the mean |ω| of the
/// samples in the interval since the previous frame (for the first frame, the 100 ms before
/// it). A frame whose interval holds no sample borrows the nearest sample within 100 ms.
///
/// **A motion file must cover every frame judged.** A frame with no sample within 100 ms is an
/// error (`InputError`, so the input's verdict is `invalidInput` with the reason), never a frame
/// of unknown rotation: an unknown rotation is credited (spec §3), so a sidecar whose samples
/// lie elsewhere on the clock (times around 1e13 s, all negative, or stopping early) would
/// otherwise switch the rotation check off for the frames it does not cover. Without a sidecar
/// the rotation is estimated from the video instead (`RotationChoice`).
public final class SensorRotation: RotationProvider {
    /// How far from a frame's time the nearest sample may lie, seconds.
    public static let nearestSampleSeconds = 0.1

    private let samples: [MotionSamples.Sample]
    private let name: String
    private var previousSeconds: Double?
    private var firstTimestamp: Int64?
    private var cursor = 0
    private var frames = 0
    /// Frames whose own interval held no sample and that used the nearest one within 100 ms.
    public private(set) var framesUsingNearestSample = 0

    /// - Throws: `InputError` when `samples` holds no sample.
    public init(samples: MotionSamples) throws(InputError) {
        self.samples = samples.samples
        name = samples.path ?? "motion samples"
        guard !self.samples.isEmpty else { throw InputError(path: name, problem: "the motion file holds no samples") }
    }

    /// The frame's rotation from the samples.
    /// - Throws: `InputError` naming the frame when no sample lies within 100 ms of it.
    public func rotation(for frame: Image, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation {
        let first = firstTimestamp ?? timestampMicroseconds
        if firstTimestamp == nil { firstTimestamp = timestampMicroseconds }
        let index = frames
        frames += 1
        let t = (Double(timestampMicroseconds) - Double(first)) / 1e6
        let from = previousSeconds ?? (t - Self.nearestSampleSeconds)
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
           abs(samples[nearest].seconds - t) <= Self.nearestSampleSeconds {
            framesUsingNearestSample += 1
            return DeviceRotation(degreesPerSecond: samples[nearest].degreesPerSecond, source: .sensor)
        }
        let span = "\(samples[0].seconds) s to \(samples[samples.count - 1].seconds) s"
        throw InputError(path: name, problem:
            "frame \(index) at \(Self.seconds(t)) s has no motion sample within 100 ms (the samples span \(span) on the video's clock, 0 = the first frame); a motion file must cover every frame judged")
    }

    public func didObserve(_ measurement: FrameMeasurement) {}

    /// A note when some frames borrowed the nearest sample (a sidecar sampled slower than the video).
    public var summary: String? {
        framesUsingNearestSample == 0 ? nil
            : "\(framesUsingNearestSample) of \(frames) frames had no motion sample in their own interval and used the nearest one within 100 ms"
    }

    private static func seconds(_ t: Double) -> String {
        let micros = (t * 1e6).rounded() / 1e6
        return "\(micros)"
    }
}
