import CFaceTracking
#if canImport(Glibc)
import Glibc
#endif

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

/// Finds and follows the primary face in a stream of frames: detect once, then fit landmarks in
/// the previous frame's box, confirm with HOG near the box every few frames, re-detect when the
/// face is lost. The decisions are `TrackingPolicy`'s (a value); the detector, the landmark fits
/// and the measurements are the shim's (`ft_detector_*`, `ft_fit_landmarks`,
/// `ft_measure_face`). One tracker per stream; not thread-safe.
public final class FaceTracker {
    /// The shared landmark model.
    public let model: LandmarkModel
    public let configuration: TrackerConfiguration
    private var policy: TrackingPolicy
    private var primitives: ShimPrimitives
    /// The frame's grey copy when the caller gives none.
    private let ownGray = Image()
    /// The picture area (the frame less its padding) of the last frame measured, pixels.
    private var picture: [Int32] = [0, 0, 0, 0]

    public init(model: LandmarkModel, configuration: TrackerConfiguration = .init()) throws(FaceTrackingError) {
        guard configuration.minFaceFraction > 0.01 && configuration.minFaceFraction <= 1 else {
            throw FaceTrackingError(kind: .argument, message: "tracker: minFaceFraction \(configuration.minFaceFraction) not in 0.01...1")
        }
        self.model = model
        self.configuration = configuration
        policy = TrackingPolicy(configuration: configuration)
        primitives = ShimPrimitives(detector: try FaceDetector(model: model))
    }

    /// Forgets the tracked face; the next frame runs a full detection.
    public func reset() { policy.reset() }

    /// Finds or tracks the primary face on `frame` (BGR) and measures it, searching every frame
    /// that has no tracked face. The frame is only borrowed for the call.
    public func process(_ frame: Image) throws(FaceTrackingError) -> FrameMeasurement {
        try measure(frame, gray: nil, timestampMilliseconds: nil)
    }

    /// The same for a frame of a stream at `timestampMilliseconds` (media time): without a
    /// tracked face, searches are paced by the configuration's intervals, so that frames without
    /// a face cost little whatever the frame rate.
    public func process(_ frame: Image, timestampMilliseconds: Double) throws(FaceTrackingError) -> FrameMeasurement {
        try measure(frame, gray: nil, timestampMilliseconds: timestampMilliseconds)
    }

    /// The same, given `gray`, the frame's grey copy (`Image.gray(into:)`), instead of converting
    /// the frame again; the results are the same. `gray` is only read, and may be read by another
    /// thread at the same time.
    public func process(_ frame: Image, gray: Image?, timestampMilliseconds: Double) throws(FaceTrackingError) -> FrameMeasurement {
        try measure(frame, gray: gray, timestampMilliseconds: timestampMilliseconds)
    }

    private func measure(_ frame: Image, gray given: Image?, timestampMilliseconds: Double?) throws(FaceTrackingError) -> FrameMeasurement {
        if let t = timestampMilliseconds, !t.isFinite {
            throw FaceTrackingError(kind: .argument, message: "process: timestamp is not finite")
        }
        guard !frame.isEmpty, frame.channels == 3 else {
            throw FaceTrackingError(kind: .argument, message: "process: empty or non-BGR frame")
        }
        let gray: Image
        if let given {
            guard given.channels == 1, given.width == frame.width, given.height == frame.height else {
                throw FaceTrackingError(kind: .argument, message: "process: the grey image is not a one-channel image of the frame's size")
            }
            gray = given
        } else {
            try frame.gray(into: ownGray)
            gray = ownGray
        }
        primitives.begin(gray)
        defer { primitives.end() }
        let step = try policy.step(width: frame.width, height: frame.height, timestampMilliseconds: timestampMilliseconds,
                                   using: &primitives)
        var measurement = FrameMeasurement(face: nil, faceCount: step.faceCount, source: step.source, candidates: step.candidates,
                                           detectMilliseconds: primitives.detectMilliseconds,
                                           landmarksMilliseconds: primitives.landmarksMilliseconds, poseMilliseconds: 0)
        if let face = step.face {
            let start = ShimPrimitives.now()
            measurement.face = try measureFace(face, on: gray)
            measurement.poseMilliseconds = ShimPrimitives.now() - start
        }
        return measurement
    }

    /// The anchor, eyes and head pose of the tracked face (`ft_measure_face`).
    private func measureFace(_ face: TrackedFace, on gray: Image) throws(FaceTrackingError) -> FaceMeasurement {
        var xy = [Double](repeating: 0, count: 2 * face.landmarks.count)
        for (i, p) in face.landmarks.enumerated() {
            xy[2 * i] = p.x
            xy[2 * i + 1] = p.y
        }
        var m = ft_face_measures()
        var error = ft_error()
        let status = xy.withUnsafeBufferPointer { points in
            picture.withUnsafeMutableBufferPointer { area in ft_measure_face(gray.handle, points.baseAddress, area.baseAddress, &m, &error) }
        }
        try check(status, &error)
        return FaceMeasurement(
            box: face.box, center: Point(x: m.center_x, y: m.center_y),
            eyeAspectRatioLeft: m.ear_left, eyeAspectRatioRight: m.ear_right,
            yawDegrees: m.pose.yaw_degrees, lineOfSightYawDegrees: m.pose.line_of_sight_yaw_degrees,
            pitchDegrees: m.pose.pitch_degrees, rollDegrees: m.pose.roll_degrees,
            eyeDistancePixels: m.eye_distance_px, poseErrorPixels: m.pose.error_px, landmarks: face.landmarks)
    }
}

/// The tracking primitives on one frame's grey image through the shim, with the time each kind
/// takes (the policy itself never reads a clock).
private struct ShimPrimitives: TrackingPrimitives {
    let detector: FaceDetector
    private var gray: Image?
    private(set) var detectMilliseconds = 0.0
    private(set) var landmarksMilliseconds = 0.0

    init(detector: FaceDetector) {
        self.detector = detector
    }

    var filterCount: Int { detector.filterCount }

    /// Starts a frame: `gray` is read until `end`.
    mutating func begin(_ gray: Image) {
        self.gray = gray
        detectMilliseconds = 0
        landmarksMilliseconds = 0
    }

    /// Ends the frame: the caller's image is not kept past the call.
    mutating func end() { gray = nil }

    private var frame: Image {
        get throws(FaceTrackingError) {
            guard let gray else { throw FaceTrackingError(kind: .internal, message: "tracking: no frame loaded") }
            return gray
        }
    }

    mutating func scan(_ region: PixelRegion, scale: Double, threshold: Double, search: Bool,
                       pyramidLevels: Int) throws(FaceTrackingError) -> [FaceCandidate] {
        let start = Self.now()
        defer { detectMilliseconds += Self.now() - start }
        return try detector.scan(try frame, region: region, scale: scale, threshold: threshold, search: search, pyramidLevels: pyramidLevels)
    }

    mutating func load(_ region: PixelRegion, scale: Double) throws(FaceTrackingError) -> Bool {
        let start = Self.now()
        defer { detectMilliseconds += Self.now() - start }
        return try detector.load(try frame, region: region, scale: scale)
    }

    mutating func runFilter(_ filter: Int, threshold: Double) throws(FaceTrackingError) {
        let start = Self.now()
        defer { detectMilliseconds += Self.now() - start }
        try detector.runFilter(filter, threshold: threshold)
    }

    mutating func suppressed() throws(FaceTrackingError) -> [FaceCandidate] {
        try detector.suppressed()
    }

    mutating func fit(in box: Rect) throws(FaceTrackingError) -> [Point] {
        let start = Self.now()
        defer { landmarksMilliseconds += Self.now() - start }
        return try detector.model.fitLandmarks(in: try frame, box: box)
    }

    /// A monotonic clock, milliseconds.
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) * 1000 + Double(t.tv_nsec) / 1e6
    }
}
