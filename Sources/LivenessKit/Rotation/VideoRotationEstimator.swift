import FaceTracking
import LivenessCore

/// Device rotation estimated from the video: the global motion of the background (the image
/// outside the face and the body below it) between consecutive frames, by sparse optical flow
/// and a RANSAC similarity fit (`BackgroundMotion`), turned into an angular speed with the
/// focal length the pose uses (the frame's longer side in pixels):
/// |ω| = sqrt((dx/f)² + (dy/f)² + roll²) / Δt. A camera panning by θ shifts the background by
/// about f·θ pixels; rolling rotates it in the image plane. When the background has too little
/// texture the frame's rotation is unknown (credited and counted as such, per the spec).
public final class VideoRotationEstimator: RotationProvider {
    private let focal: Double
    private let width: Double, height: Double
    private var previous = Image()
    private var current = Image()
    private var hasPrevious = false
    private var previousMicroseconds: Int64?
    private var faceBox: Rect?
    /// Frames with an estimate, and frames without one (no texture, or the first frame).
    public private(set) var framesEstimated = 0
    public private(set) var framesUnknown = 0
    /// Downscaled side used for the flow, pixels.
    public var maxSide = 256
    /// Below this share of the frame left as background (a face filling a cropped frame), the
    /// rotation is unknown: hair and shoulders moving with the head would read as rotation.
    public var minimumBackgroundFraction = 0.2

    public init(width: Int, height: Int) {
        focal = Double(max(width, height))
        self.width = Double(width)
        self.height = Double(height)
    }

    public func rotation(for frame: Image, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation {
        try rotation(for: frame, gray: nil, timestampMicroseconds: timestampMicroseconds)
    }

    /// The estimate, reducing the frame's grey copy when given (the same result as converting
    /// the frame here, one full-size conversion less).
    public func rotation(for frame: Image, gray: Image?, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation {
        guard let scale = reduce(frame, gray: gray) else { return .unknown }
        return estimate(scale: scale, timestampMicroseconds: timestampMicroseconds)
    }

    /// Frames whose estimate was skipped because neither they nor the frame before showed a face
    /// (`prepareDeferred`): no frame without a face is credited, so no estimate is needed.
    public private(set) var framesSkipped = 0
    private var pending: (scale: Double, timestampMicroseconds: Int64)?

    /// When the previous frame had no face, only reduces the frame (cheap) and leaves the flow
    /// (about 9 M instructions at 720p) until `resolveDeferred(hasFace:)` says whether the frame
    /// shows a face; otherwise returns false and estimates nothing. Waiting changes no estimate:
    /// the flow's inputs (the two reduced frames, and no face to mask out) are the same later.
    public func prepareDeferred(for frame: Image, gray: Image?, timestampMicroseconds: Int64) throws(InputError) -> Bool {
        guard faceBox == nil else { return false }
        if let scale = reduce(frame, gray: gray) {
            pending = (scale, timestampMicroseconds)
        } else {
            pending = nil
        }
        return true
    }

    /// The estimate of the frame `prepareDeferred` kept, once the tracker has measured it: the
    /// flow when it shows a face, `.unknown` (counted as skipped) when it does not.
    public func resolveDeferred(hasFace: Bool) throws(InputError) -> DeviceRotation {
        guard let p = pending else { return .unknown }  // the reduction failed (counted there)
        pending = nil
        guard hasFace else {
            framesSkipped += 1
            keepCurrent(timestampMicroseconds: p.timestampMicroseconds)
            return .unknown
        }
        return estimate(scale: p.scale, timestampMicroseconds: p.timestampMicroseconds)
    }

    /// Reduces the frame (its grey copy when given) into `current`; the factor, or nil (counted
    /// as unknown, and the next frame has no previous one) when it cannot be reduced.
    private func reduce(_ frame: Image, gray: Image?) -> Double? {
        do {
            return try (gray ?? frame).reducedGray(maxSide: maxSide, into: current)
        } catch {
            framesUnknown += 1
            hasPrevious = false
            return nil
        }
    }

    /// `current` becomes the next frame's previous.
    private func keepCurrent(timestampMicroseconds: Int64) {
        swap(&previous, &current)
        hasPrevious = true
        previousMicroseconds = timestampMicroseconds
    }

    /// The flow from `previous` to the reduced `current` (factor `scale`), outside the head.
    private func estimate(scale: Double, timestampMicroseconds: Int64) -> DeviceRotation {
        // Each frame is reduced to a small grey image once, and kept as the next frame's previous.
        defer { keepCurrent(timestampMicroseconds: timestampMicroseconds) }
        let excluded = excludedRegion()
        guard hasPrevious, let before = previousMicroseconds, timestampMicroseconds > before,
              previous.width == current.width, previous.height == current.height,
              backgroundFraction(excluding: excluded) >= minimumBackgroundFraction
        else {
            framesUnknown += 1
            return .unknown
        }
        let motion: BackgroundMotion
        do {
            motion = try BackgroundMotion.estimate(reducedFrom: previous, to: current, scale: scale, excluding: excluded)
        } catch {
            framesUnknown += 1
            return .unknown
        }
        guard motion.isValid else {
            framesUnknown += 1
            return .unknown
        }
        framesEstimated += 1
        let seconds = Double(timestampMicroseconds - before) / 1e6
        let pan = (motion.dx * motion.dx + motion.dy * motion.dy).squareRoot() / focal
        let roll = motion.rotationDegrees * .pi / 180
        let radiansPerSecond = (pan * pan + roll * roll).squareRoot() / seconds
        return DeviceRotation(degreesPerSecond: radiansPerSecond * 180 / .pi, source: .video)
    }

    public func didObserve(_ measurement: FrameMeasurement) {
        faceBox = measurement.face?.box
    }

    /// The head (the face box widened by one face width each side and raised by most of a face
    /// height for the hair) and everything below it down to the bottom of the frame (the body
    /// moves with the head; it is not background).
    private func excludedRegion() -> Rect? {
        guard let b = faceBox else { return nil }
        let x0 = max(0, b.x - 1.0 * b.width), x1 = min(width, b.x + 2.0 * b.width)
        let y0 = max(0, b.y - 0.8 * b.height)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, height - y0))
    }

    /// Share of the frame left as background once `excluded` is taken out.
    private func backgroundFraction(excluding excluded: Rect?) -> Double {
        guard let e = excluded else { return 1 }
        return 1 - (e.width * e.height) / (width * height)
    }

    /// A warning when the rotation could not be estimated on most frames.
    public var summary: String? {
        let total = framesEstimated + framesUnknown
        guard total > 0, framesUnknown * 2 > total else { return nil }
        return "device rotation could not be estimated from the background on \(framesUnknown) of \(total) frames (too little background texture, or the face fills the frame): rotation is unknown there, and such frames may count towards the actions (frames.rotationUnknown counts those credited)"
    }
}
