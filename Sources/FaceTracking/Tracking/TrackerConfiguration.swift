import LivenessCore

/// How a `FaceTracker` finds and follows the primary face: the one set of tracker defaults.
public struct TrackerConfiguration: Sendable, Equatable {
    /// The guide circle the primary face is chosen by: of several faces, the one whose centre is
    /// nearest the circle's centre (its radius plays no part in tracking). Defaults to the
    /// default policy's circle; `FrameProcessor` sets the session policy's.
    public var guide = GuideCircle(policy: LivenessPolicy())
    /// Smallest face to look for, as a fraction of the frame's shorter side (0.01 < f ≤ 1); sets
    /// the detection scale (HOG needs faces of about 80 px in the scanned image).
    public var minFaceFraction = 0.12
    /// HOG score threshold; 0 is dlib's default, higher rejects more.
    public var detectionThreshold = 0.0
    /// Frames between HOG confirmations of a tracked face.
    public var verifyInterval = 5
    /// True: detect once, then track with landmarks; false: detect on every frame.
    public var track = true
    /// Without a tracked face, milliseconds of media time between searches for large faces
    /// (at least 30% of the shorter side) and between full searches down to `minFaceFraction`
    /// (`process(_:timestampMilliseconds:)` only). 0 searches on every frame. A search costs
    /// the same at any frame size (the frame is scaled for an 80 px face): the coarse pass about
    /// 100 M instructions, the fine one about 5 times that; these defaults keep a frame without
    /// a face within twice a tracked frame's cost (docs/speed.md). A face of 30% of the shorter
    /// side or more is found within 8 frames of appearing at 30 fps, a smaller one within 30.
    /// Ignored when `track` is false (every frame is searched).
    public var searchCoarseIntervalMilliseconds = 250.0
    public var searchFineIntervalMilliseconds = 1000.0

    public init() {}

    /// The search intervals in force, milliseconds: 0 when every frame is detected.
    var searchIntervals: (coarse: Double, fine: Double) {
        track ? (searchCoarseIntervalMilliseconds, searchFineIntervalMilliseconds) : (0, 0)
    }
}
