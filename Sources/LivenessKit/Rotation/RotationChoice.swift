/// Where a session's device rotation comes from: the same choice for `trace` and `analyze`, so
/// that a trace replays to the analysis's verdict.
public enum RotationChoice {
    /// Motion samples when a sidecar is given; otherwise the estimate from the video's background
    /// (unless disabled, or for a still image); otherwise none (every frame `unknown`).
    public static func provider(motionPath: String?, estimateFromVideo: Bool, source: FrameSource) throws(InputError) -> RotationProvider? {
        if let motionPath { return try SensorRotation(samples: try MotionSamples.load(motionPath)) }
        if estimateFromVideo && source.kind == .video { return VideoRotationEstimator(width: source.width, height: source.height) }
        return nil
    }
}
