import CFaceTracking

/// A head pose fitted to 68 landmarks (`ft_estimate_pose`): solvePnP (SQPnP) of the rigid
/// points (eye corners, nose) against a generic face, with the focal length taken as the
/// frame's longer side in pixels and the principal point at the frame's centre. The tracker
/// measures every face with the same code; this entry point fits a pose to given landmarks.
///
/// Two yaws, both in degrees and positive when the subject turns to their own left:
/// * `yawDegrees` is against the camera's optical axis. A face looking straight at the camera
///   from off the axis reads the angle of its line of sight, so it changes when the camera
///   rotates or the face's image moves across the frame without any head rotation.
/// * `lineOfSightYawDegrees` is against the line from the head's turning point (on the
///   midline, 100 mm behind the nose tip) to the camera centre. A camera rotating about its
///   centre rotates the face's axes and that line together and leaves it unchanged.
public struct HeadPose: Sendable, Equatable {
    /// Yaw against the camera's axes, degrees.
    public var yawDegrees: Double
    /// Yaw against the line of sight from the head's turning point to the camera, degrees.
    public var lineOfSightYawDegrees: Double
    /// Pitch against the camera's axes, degrees; positive when the subject looks up.
    public var pitchDegrees: Double
    /// Roll against the camera's axes, degrees; positive when the head tilts towards the
    /// subject's left shoulder.
    public var rollDegrees: Double
    /// RMS reprojection error of the fit, pixels.
    public var errorPixels: Double

    /// Fits the pose of the face whose 68 landmarks (pixels, iBUG 300-W order) lie in a frame
    /// of `width` × `height` pixels.
    /// - Throws: `.argument` for a landmark count other than 68, a non-positive frame size or a
    ///   non-finite coordinate; `.decode` when no pose fits.
    public init(landmarks: [Point], width: Int, height: Int) throws(FaceTrackingError) {
        guard landmarks.count == 68 else {
            throw FaceTrackingError(kind: .argument, message: "pose: expected 68 landmarks, got \(landmarks.count)")
        }
        let xy = landmarks.flatMap { [$0.x, $0.y] }
        var pose = ft_pose()
        var error = ft_error()
        let status = xy.withUnsafeBufferPointer { ft_estimate_pose($0.baseAddress, Int32(clamping: width), Int32(clamping: height), &pose, &error) }
        try check(status, &error)
        yawDegrees = pose.yaw_degrees
        lineOfSightYawDegrees = pose.line_of_sight_yaw_degrees
        pitchDegrees = pose.pitch_degrees
        rollDegrees = pose.roll_degrees
        errorPixels = pose.error_px
    }
}
