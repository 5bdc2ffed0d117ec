import LivenessCore

/// One record of a trace: everything observed and decided on one frame, frames without a face
/// included. Field names are the CSV header names and the JSONL keys.
public struct TraceRecord: Sendable, Equatable {
    /// 0-based frame index in the input.
    public var frame: Int
    /// Seconds since the input's first frame.
    public var seconds: Double
    /// True when a face was tracked.
    public var face: Bool
    /// Faces found on the frame.
    public var faces: Int
    /// Primary face box, pixels.
    public var box: FaceBox?
    /// Face anchor, normalised 0...1.
    public var faceCenterX: Double?
    public var faceCenterY: Double?
    /// Eye aspect ratios, the subject's own eyes.
    public var earLeft: Double?
    public var earRight: Double?
    /// Head pose, degrees (yaw > 0: the subject's own left); yaw against the camera's axes.
    public var yawDegrees: Double?
    /// Head yaw against the line of sight from the head to the camera, degrees.
    public var lineOfSightYawDegrees: Double?
    public var pitchDegrees: Double?
    public var rollDegrees: Double?
    /// Eye centre distance, pixels.
    public var eyeDistancePixels: Double?
    /// Eye closures 0...1 derived by the core (nil before the core runs or without a face).
    public var eyeClosureLeft: Double?
    public var eyeClosureRight: Double?
    /// Yaw relative to the session's frontal baseline, degrees.
    public var relativeYawDegrees: Double?
    /// Device angular speed over the frame interval, °/s, and where it came from.
    public var deviceRotationDegreesPerSecond: Double?
    public var rotationSource: RotationSource
    /// Whether the frame could count towards an action, and why not.
    public var credited: Bool?
    public var notCreditedReason: String?
    /// Phase and HUD state after the frame.
    public var phase: String?
    public var hud: String?
    /// Parallax residual against the autoshot frame's landmarks, a fraction of the eye distance
    /// (`FaceObservation.planarResidual`); `nil` without a face or before the autoshot.
    public var planarResidual: Double?
    /// Mean absolute grey-level difference of the frame's thumbnail from the previous frame's
    /// (`Observation.frameDifference`); `nil` on the first frame.
    public var frameDifference: Double?
    /// The earlier frame this one repeats most closely (`Observation.repetition`): lag in
    /// seconds, difference and own motion in grey levels; `nil` when not measured.
    public var repeatLagSeconds: Double?
    public var repeatDifference: Double?
    public var repeatMotion: Double?
    /// How enclosed the face is by a screen's or a print's border, grey levels
    /// (`Observation.borderEnclosure`); `nil` on frames not measured.
    public var borderEnclosure: Double?
    /// Vertical-edge shares (0…1) of the patches around the subject's left and right eye
    /// (`FaceObservation.eyeEdgeLeft/Right`); `nil` without a face or after the verdict.
    public var eyeEdgeLeft: Double?
    public var eyeEdgeRight: Double?
    /// The two shares against their own recent levels (`FrameAssessment.eyeEdgeRelative`);
    /// `nil` before the levels exist.
    public var eyeEdgeRelative: Double?
    /// Whether the eye-edge check judged the eyes open whatever their closure
    /// (`FrameAssessment.eyesOpenByEdges`); `nil` when the machine did not judge the frame.
    public var eyesOpenByEdges: Bool?
    /// Mean closure of the eyes against the open-eye baseline alone
    /// (`FrameAssessment.eyeClosureAgainstBaseline`, the slow-closure rule's reading); `nil`
    /// without a face or during warm-up.
    public var eyeClosureBaseline: Double?
    /// Whether a blink episode is open after the frame (`FrameAssessment.eyesClosedEpisode`):
    /// the frames of one closure of the eyes, from its first closed frame until they look open again.
    public var eyesClosed: Bool?
    /// The 68 landmarks, pixels (only with `--landmarks`).
    public var landmarks: [Double]?
    /// Frame size in pixels (needed to replay a trace against the guide circle).
    public var frameWidth: Int
    public var frameHeight: Int

    public init(frame: Int, seconds: Double, frameWidth: Int, frameHeight: Int) {
        self.frame = frame
        self.seconds = seconds
        self.frameWidth = frameWidth
        self.frameHeight = frameHeight
        face = false
        faces = 0
        rotationSource = .unknown
    }
}
