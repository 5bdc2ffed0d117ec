import CFaceTracking

/// Global motion of the image outside the face between two frames: what a rotating camera
/// does to the background.
public struct BackgroundMotion: Sendable, Equatable {
    /// False when the background had too little texture to tell.
    public var isValid: Bool
    /// Background points tracked and fitted.
    public var points: Int
    /// Points consistent with the fitted motion.
    public var inliers: Int
    /// Translation, pixels.
    public var dx: Double
    public var dy: Double
    /// In-plane rotation, degrees.
    public var rotationDegrees: Double
    /// Scale change (1 = none).
    public var scale: Double

    /// Estimates the motion from `previous` to `current` outside `excluding` (pixels) with
    /// sparse Lucas-Kanade optical flow and a RANSAC similarity fit, on grey copies downscaled
    /// to at most `maxSide` pixels (`ft_background_motion`).
    /// The same on frames already reduced by `Image.reducedGray(maxSide:into:)` with factor
    /// `scale` (`ft_background_motion_reduced`): reduce each frame once and keep it for the next.
    public static func estimate(reducedFrom previous: Image, to current: Image, scale: Double,
                                excluding box: Rect?) throws(FaceTrackingError) -> BackgroundMotion {
        var error = ft_error()
        var m = ft_motion()
        let b = box ?? Rect(x: 0, y: 0, width: 0, height: 0)
        try check(ft_background_motion_reduced(previous.handle, current.handle, scale, b.x, b.y, b.width, b.height, &m, &error), &error)
        return BackgroundMotion(isValid: m.valid != 0, points: Int(m.points), inliers: Int(m.inliers), dx: m.dx, dy: m.dy,
                                rotationDegrees: m.rotation_degrees, scale: m.scale)
    }

    public static func estimate(from previous: Image, to current: Image, excluding box: Rect?,
                                maxSide: Int = 320) throws(FaceTrackingError) -> BackgroundMotion {
        var error = ft_error()
        var m = ft_motion()
        let b = box ?? Rect(x: 0, y: 0, width: 0, height: 0)
        try check(ft_background_motion(previous.handle, current.handle, b.x, b.y, b.width, b.height, Int32(maxSide), &m, &error), &error)
        return BackgroundMotion(isValid: m.valid != 0, points: Int(m.points), inliers: Int(m.inliers), dx: m.dx, dy: m.dy,
                                rotationDegrees: m.rotation_degrees, scale: m.scale)
    }
}
