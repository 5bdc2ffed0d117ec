import FaceTracking
import LivenessCore

/// Device rotation of a stream: from the gyroscope samples pushed with the frames when there are
/// any near a frame, otherwise estimated from the video's background (as for a file without a
/// sidecar). A frame's angular speed is the mean |ω| of the samples since the previous frame; a
/// frame without one borrows the nearest sample within 100 ms; failing that the video estimate
/// decides, so that a client that stops sending samples never switches the rotation check off.
final class StreamRotation: RotationProvider {
    private var samples: [MotionSample] = []
    private var previousFrame: Int64?
    private var video: VideoRotationEstimator?
    /// Frames whose rotation came from samples, and from the video estimate.
    private(set) var framesFromSensor = 0
    private(set) var framesFromVideo = 0

    /// - Parameter video: the background estimate used when no sample is near a frame (nil: unknown).
    init(video: VideoRotationEstimator?) { self.video = video }

    /// Sets the background estimate (once the frame size is known).
    func setVideo(_ estimator: VideoRotationEstimator?) { video = estimator }

    /// Adds samples (in any order; kept sorted, at most the last 2 s).
    func add(_ new: [MotionSample]) {
        guard !new.isEmpty else { return }
        samples += new
        samples.sort { $0.timestampMicroseconds < $1.timestampMicroseconds }
        if let last = samples.last?.timestampMicroseconds {
            samples.removeAll { last - $0.timestampMicroseconds > 2_000_000 }
        }
    }

    func rotation(for frame: Image, timestampMicroseconds t: Int64) throws(InputError) -> DeviceRotation {
        try rotation(for: frame, gray: nil, timestampMicroseconds: t)
    }

    func rotation(for frame: Image, gray: Image?, timestampMicroseconds t: Int64) throws(InputError) -> DeviceRotation {
        let from = previousFrame ?? (t - 100_000)
        previousFrame = t
        // The video estimate sees every frame, so that its previous frame is always the last one.
        let estimate = try video?.rotation(for: frame, gray: gray, timestampMicroseconds: t)
        let within = samples.filter { $0.timestampMicroseconds > from && $0.timestampMicroseconds <= t }
        if !within.isEmpty {
            framesFromSensor += 1
            return DeviceRotation(degreesPerSecond: within.map(\.degreesPerSecond).reduce(0, +) / Double(within.count),
                                  source: .sensor)
        }
        if let nearest = samples.min(by: { abs($0.timestampMicroseconds - t) < abs($1.timestampMicroseconds - t) }),
           abs(nearest.timestampMicroseconds - t) <= 100_000 {
            framesFromSensor += 1
            return DeviceRotation(degreesPerSecond: nearest.degreesPerSecond, source: .sensor)
        }
        framesFromVideo += 1
        return estimate ?? .unknown
    }

    func didObserve(_ measurement: FrameMeasurement) { video?.didObserve(measurement) }
}
