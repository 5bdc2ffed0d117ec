import CFaceTracking

/// How a `FaceTracker` finds and follows the primary face.
public struct TrackerConfiguration: Sendable, Equatable {
    /// Guide circle centre, normalised 0...1: the primary face is the one nearest it.
    public var guideCenterX = 0.5
    public var guideCenterY = 0.5
    /// Guide radius as a fraction of the frame's shorter side.
    public var guideRadius = 0.3
    /// Smallest face to look for, as a fraction of the frame's shorter side; sets the
    /// detection scale (HOG needs faces of about 80 px in the scanned image).
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
    public var searchCoarseIntervalMilliseconds = 250.0
    public var searchFineIntervalMilliseconds = 1000.0

    public init() {}

    var c: ft_tracker_config {
        var config = ft_tracker_config_default()
        config.guide_center_x = guideCenterX
        config.guide_center_y = guideCenterY
        config.guide_radius = guideRadius
        config.min_face_fraction = minFaceFraction
        config.detection_threshold = detectionThreshold
        config.verify_interval = Int32(verifyInterval)
        config.track = track ? 1 : 0
        config.search_coarse_interval_ms = track ? searchCoarseIntervalMilliseconds : 0
        config.search_fine_interval_ms = track ? searchFineIntervalMilliseconds : 0
        return config
    }
}

/// A face found by the HOG detector, in frame pixels, with its detection score.
public struct FaceCandidate: Sendable, Equatable {
    public var box: Rect
    /// HOG score; higher is more face-like.
    public var score: Double

    init(_ c: ft_candidate) {
        box = Rect(x: c.x, y: c.y, width: c.w, height: c.h)
        score = c.score
    }
}

/// How the face on a frame was obtained.
public enum FaceSource: String, Sendable {
    /// No face.
    case none
    /// A full-frame HOG detection.
    case detected
    /// Landmarks fitted in the previous frame's box.
    case tracked
    /// Tracked, and HOG confirmed the face near its box on this frame.
    case verified
}

/// The measured face on one frame: everything the liveness core needs and more.
public struct FaceMeasurement: Sendable, Equatable {
    /// The primary face box in pixels (dlib detector convention).
    public var box: Rect
    /// The face anchor (mean of the nose bridge and eye corners), normalised 0...1.
    public var center: Point
    /// Eye aspect ratio of the subject's own left eye (landmarks 42-47).
    public var eyeAspectRatioLeft: Double
    /// Eye aspect ratio of the subject's own right eye (landmarks 36-41).
    public var eyeAspectRatioRight: Double
    /// Head yaw in degrees against the camera's axes; positive when the subject turns to their
    /// own left. Changes when the camera rotates or the face moves across the frame.
    public var yawDegrees: Double
    /// Head yaw in degrees against the line of sight from the head's turning point to the
    /// camera; positive to the subject's own left. Unchanged by camera rotation (see `HeadPose`).
    public var lineOfSightYawDegrees: Double
    /// Head pitch in degrees; positive when the subject looks up.
    public var pitchDegrees: Double
    /// Head roll in degrees; positive when the head tilts towards the subject's left shoulder.
    public var rollDegrees: Double
    /// Distance between the two eye centres, pixels.
    public var eyeDistancePixels: Double
    /// RMS reprojection error of the pose fit, pixels.
    public var poseErrorPixels: Double
    /// The 68 landmarks, pixels (iBUG 300-W order).
    public var landmarks: [Point]
}

/// Everything measured on one frame.
public struct FrameMeasurement: Sendable, Equatable {
    /// The primary face, or nil when none is tracked.
    public var face: FaceMeasurement?
    /// Faces found on the frame (carried over from the latest detection on tracked frames).
    public var faceCount: Int
    /// How the face was obtained.
    public var source: FaceSource
    /// Detections run on this frame (empty when the frame was only tracked).
    public var candidates: [FaceCandidate]
    /// Time spent on this frame detecting, fitting landmarks and solving the pose, milliseconds.
    public var detectMilliseconds: Double
    public var landmarksMilliseconds: Double
    public var poseMilliseconds: Double
}

/// Finds and follows the primary face in a stream of frames: detect once, then fit landmarks
/// in the previous frame's box, confirm with HOG near the box every few frames, re-detect when
/// the face is lost (`ft_tracker_new`, `ft_tracker_process`). One tracker per stream; not
/// thread-safe.
public final class FaceTracker {
    private let handle: OpaquePointer
    /// The shared landmark model.
    public let model: LandmarkModel
    public let configuration: TrackerConfiguration
    private var raw = ft_observation()

    public init(model: LandmarkModel, configuration: TrackerConfiguration = .init()) throws(FaceTrackingError) {
        var error = ft_error()
        var handle: OpaquePointer?
        var config = configuration.c
        try check(ft_tracker_new(model.handle, &config, &handle, &error), &error)
        guard let handle else { throw FaceTrackingError(kind: .internal, message: "no tracker handle") }
        self.handle = handle
        self.model = model
        self.configuration = configuration
    }

    deinit { ft_tracker_free(handle) }

    /// Forgets the tracked face; the next frame runs a full detection (`ft_tracker_reset`).
    public func reset() { ft_tracker_reset(handle) }

    /// Finds or tracks the primary face on `frame` and measures it, searching every frame that
    /// has no tracked face (`ft_tracker_process`). The frame is only borrowed for the call.
    public func process(_ frame: Image) throws(FaceTrackingError) -> FrameMeasurement {
        var error = ft_error()
        try check(ft_tracker_process(handle, frame.handle, &raw, &error), &error)
        return FrameMeasurement(raw, width: Double(frame.width), height: Double(frame.height))
    }

    /// The same for a frame of a stream at `timestampMilliseconds` (media time): without a
    /// tracked face, searches are paced by the configuration's intervals, so that frames without
    /// a face cost little whatever the frame rate (`ft_tracker_process_at`).
    public func process(_ frame: Image, timestampMilliseconds: Double) throws(FaceTrackingError) -> FrameMeasurement {
        var error = ft_error()
        try check(ft_tracker_process_at(handle, frame.handle, timestampMilliseconds, &raw, &error), &error)
        return FrameMeasurement(raw, width: Double(frame.width), height: Double(frame.height))
    }

    /// The same, given `gray`, the frame's grey copy (`Image.gray(into:)`), instead of converting
    /// the frame again; the results are the same (`ft_tracker_process_gray_at`). `gray` is only
    /// read, and may be read by another thread at the same time.
    public func process(_ frame: Image, gray: Image?, timestampMilliseconds: Double) throws(FaceTrackingError) -> FrameMeasurement {
        var error = ft_error()
        try check(ft_tracker_process_gray_at(handle, frame.handle, gray?.handle, timestampMilliseconds, &raw, &error), &error)
        return FrameMeasurement(raw, width: Double(frame.width), height: Double(frame.height))
    }
}

extension FrameMeasurement {
    init(_ o: ft_observation, width: Double, height: Double) {
        var candidates: [FaceCandidate] = []
        withUnsafeBytes(of: o.candidates) { raw in
            let all = raw.bindMemory(to: ft_candidate.self)
            for i in 0..<Int(o.candidate_count) { candidates.append(FaceCandidate(all[i])) }
        }
        self.candidates = candidates
        faceCount = Int(o.faces)
        detectMilliseconds = o.detect_ms
        landmarksMilliseconds = o.landmarks_ms
        poseMilliseconds = o.pose_ms
        switch o.source {
        case FT_SOURCE_DETECTED: source = .detected
        case FT_SOURCE_TRACKED: source = .tracked
        case FT_SOURCE_VERIFIED: source = .verified
        default: source = .none
        }
        guard o.face != 0 else {
            face = nil
            return
        }
        var points: [Point] = []
        points.reserveCapacity(68)
        withUnsafeBytes(of: o.landmarks) { raw in
            let xy = raw.bindMemory(to: Double.self)
            for i in 0..<68 { points.append(Point(x: xy[2 * i], y: xy[2 * i + 1])) }
        }
        face = FaceMeasurement(
            box: Rect(x: o.box_x, y: o.box_y, width: o.box_w, height: o.box_h),
            center: Point(x: o.center_x, y: o.center_y),
            eyeAspectRatioLeft: o.ear_left, eyeAspectRatioRight: o.ear_right,
            yawDegrees: o.yaw_degrees, lineOfSightYawDegrees: o.line_of_sight_yaw_degrees, pitchDegrees: o.pitch_degrees, rollDegrees: o.roll_degrees,
            eyeDistancePixels: o.eye_distance_px, poseErrorPixels: o.pose_error_px, landmarks: points)
    }
}
