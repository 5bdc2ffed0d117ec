/// Where a frame's device angular speed came from.
public enum RotationSource: String, Sendable, Codable {
    /// Integrated from the device's gyroscope samples over the frame interval.
    case sensor
    /// Estimated from the motion of the background in the video.
    case video
    /// Neither was possible: the frame is credited and counted as `rotationUnknown`.
    case unknown
}

/// The device's angular speed over the interval since the previous frame.
public struct DeviceRotation: Sendable, Equatable {
    /// Angular speed in degrees per second (a norm, never negative), or `nil` when unknown.
    public var degreesPerSecond: Double?
    /// Where `degreesPerSecond` came from.
    public var source: RotationSource

    /// - Parameters:
    ///   - degreesPerSecond: angular speed in °/s, `nil` when unknown.
    ///   - source: where it came from.
    public init(degreesPerSecond: Double?, source: RotationSource) {
        self.degreesPerSecond = degreesPerSecond
        self.source = source
    }

    /// No rotation information for this frame (`degreesPerSecond == nil`, source `.unknown`).
    public static let unknown = DeviceRotation(degreesPerSecond: nil, source: .unknown)
}

/// The eye signal of one frame, in one of two forms.
public enum EyeSignal: Sendable, Equatable {
    /// Eye aspect ratios (EAR, dimensionless, typically 0.2–0.35 open and < 0.15 closed) of the
    /// dlib 68-landmark model, for the subject's own left and right eye. The engine converts
    /// them into closures against the session's open-eye baseline (see `EyeClosureEstimator`).
    case aspectRatio(left: Double, right: Double)
    /// Closures already on the spec's 0…1 scale (0 open, 1 closed), e.g. ARKit's
    /// `eyeBlinkLeft/Right`, subject's own left and right. Used as given, no conditioning.
    case closure(left: Double, right: Double)
}

/// A rectangle in pixels, origin top-left of the frame: a face's bounding box here, and any region
/// in the FaceTracking overlay, where it is called `Rect`.
public struct FaceBox: Sendable, Equatable, Hashable, Codable {
    /// Left edge in pixels.
    public var x: Double
    /// Top edge in pixels.
    public var y: Double
    /// Width in pixels.
    public var width: Double
    /// Height in pixels.
    public var height: Double

    /// Creates a box from its top-left corner and size, all in pixels.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// The face-tracking data of the one face the session follows on a frame.
public struct FaceObservation: Sendable, Equatable {
    /// Face anchor (mean of the stable landmarks) x, normalised 0…1 of the frame width, origin left.
    public var centerX: Double
    /// Face anchor y, normalised 0…1 of the frame height, origin top.
    public var centerY: Double
    /// The eye signal: raw aspect ratios (conditioned by the engine) or ready closures (used as is).
    public var eyes: EyeSignal
    /// Camera-relative head yaw in degrees against the camera's axes; positive when the subject
    /// turns to their own left.
    public var yawDegrees: Double
    /// Head yaw in degrees against the line of sight from the head to the camera, if known
    /// (positive to the subject's own left). Camera rotation and the face's position in the frame
    /// do not change it; the machine uses it to tell a head turn from a camera that turned
    /// (`LivenessPolicy.yawSwayDegrees`). `nil`: the turn is measured on `yawDegrees` alone.
    public var lineOfSightYawDegrees: Double?
    /// Camera-relative head pitch in degrees, if known (informational).
    public var pitchDegrees: Double?
    /// Camera-relative head roll in degrees, if known (informational).
    public var rollDegrees: Double?
    /// Face box in pixels, if known; copied into still captures.
    public var box: FaceBox?
    /// Distance between the eye centres in pixels, if known (quality signal, informational).
    public var eyeDistancePixels: Double?
    /// `true` when `yawDegrees` is already filtered by its source (ARKit): the engine then uses it
    /// as given, without its median filter. Baseline subtraction still applies.
    public var yawIsFiltered: Bool
    /// Parallax residual of this frame's landmarks against the session's frontal reference frame
    /// (dimensionless: a fraction of the eye-centre distance; see `ParallaxCheck`), or `nil` when
    /// not measured (no landmarks, as in ARKit traces; no reference yet; no fit).
    public var planarResidual: Double?
    /// Vertical-edge share (0…1) of the patch around the subject's left eye, from the frame's
    /// pixels (`FaceTracking.EyeEdges`), or `nil` when not measured (ARKit traces, traces
    /// written before the column). The blink rule reads it against the eye's own recent level
    /// (`EyeEdgeBaseline`).
    public var eyeEdgeLeft: Double?
    /// The same for the subject's right eye.
    public var eyeEdgeRight: Double?

    /// Creates a face observation. Defaults: open eyes given as closures (0, 0), frontal yaw 0°,
    /// no line-of-sight yaw, no pitch/roll/box/eye distance, yaw not pre-filtered, no residual,
    /// no eye edges.
    public init(
        centerX: Double,
        centerY: Double,
        eyes: EyeSignal = .closure(left: 0, right: 0),
        yawDegrees: Double = 0,
        lineOfSightYawDegrees: Double? = nil,
        pitchDegrees: Double? = nil,
        rollDegrees: Double? = nil,
        box: FaceBox? = nil,
        eyeDistancePixels: Double? = nil,
        yawIsFiltered: Bool = false,
        planarResidual: Double? = nil,
        eyeEdgeLeft: Double? = nil,
        eyeEdgeRight: Double? = nil
    ) {
        self.centerX = centerX
        self.centerY = centerY
        self.eyes = eyes
        self.yawDegrees = yawDegrees
        self.lineOfSightYawDegrees = lineOfSightYawDegrees
        self.pitchDegrees = pitchDegrees
        self.rollDegrees = rollDegrees
        self.box = box
        self.eyeDistancePixels = eyeDistancePixels
        self.yawIsFiltered = yawIsFiltered
        self.planarResidual = planarResidual
        self.eyeEdgeLeft = eyeEdgeLeft
        self.eyeEdgeRight = eyeEdgeRight
    }
}

/// Everything the state machine learns about one frame. It never sees pixels.
public struct Observation: Sendable, Equatable {
    /// 0-based index of the frame in its input.
    public var frameIndex: Int
    /// Presentation timestamp in microseconds; must increase strictly from frame to frame.
    public var timestampMicroseconds: Int64
    /// The tracked face, or `nil` when no face is tracked on this frame (an observation, not an error).
    public var face: FaceObservation?
    /// Number of faces found on the frame (informational; the machine follows `face`).
    public var faceCount: Int
    /// Device angular speed over the interval since the previous frame.
    public var deviceRotation: DeviceRotation
    /// Frame width in pixels, if known; with `frameHeight` the guide circle is tested in pixels.
    public var frameWidth: Int?
    /// Frame height in pixels, if known.
    public var frameHeight: Int?
    /// Mean absolute difference in grey levels (0…255) between this frame's small grey thumbnail
    /// and the previous frame's, for the frozen-input check (`FrozenCheck`); `nil` when not
    /// measured (the first frame, ARKit traces, traces written before the column).
    public var frameDifference: Double?
    /// The earlier frame of the session this frame repeats most closely, for the looped-input
    /// check (`LoopCheck`); `nil` when not measured.
    public var repetition: Repetition?
    /// How enclosed the face is by a straight border (a screen's or a print's edge), for the
    /// recapture check (`RecaptureCheck`): the weaker of the consistent brightness step below the
    /// chin and the second strongest of the other three sides' (`FaceEnclosure.enclosure`), grey
    /// levels (0…255); `nil` when not measured (the front end measures some frames with a face,
    /// ARKit traces carry none).
    public var borderEnclosure: Double?

    /// Creates an observation. `faceCount` defaults to 1 when `face` is given, else 0.
    public init(
        frameIndex: Int,
        timestampMicroseconds: Int64,
        face: FaceObservation?,
        faceCount: Int? = nil,
        deviceRotation: DeviceRotation = .unknown,
        frameWidth: Int? = nil,
        frameHeight: Int? = nil,
        frameDifference: Double? = nil,
        repetition: Repetition? = nil,
        borderEnclosure: Double? = nil
    ) {
        self.frameIndex = frameIndex
        self.timestampMicroseconds = timestampMicroseconds
        self.face = face
        self.faceCount = faceCount ?? (face == nil ? 0 : 1)
        self.deviceRotation = deviceRotation
        self.frameWidth = frameWidth
        self.frameHeight = frameHeight
        self.frameDifference = frameDifference
        self.repetition = repetition
        self.borderEnclosure = borderEnclosure
    }
}

/// How a frame repeats an earlier frame of its session (measured by the front end over a fixed
/// subject region's grey thumbnail; docs/presentation-attacks.md).
public struct Repetition: Sendable, Equatable {
    /// How far back the earlier frame lies, seconds.
    public var lagSeconds: Double
    /// Mean absolute difference from that frame, grey levels (0…255).
    public var difference: Double
    /// Mean absolute difference from the frame `motionSpanSeconds` earlier, grey levels: how
    /// much the picture moved.
    public var motion: Double

    /// The span over which `motion` is measured, seconds.
    public static let motionSpanSeconds = 0.5

    /// Creates a repetition measurement.
    public init(lagSeconds: Double, difference: Double, motion: Double) {
        self.lagSeconds = lagSeconds
        self.difference = difference
        self.motion = motion
    }
}
