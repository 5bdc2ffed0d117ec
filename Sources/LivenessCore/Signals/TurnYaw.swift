/// The turn signal: the head's yaw relative to the session's baseline, from two measurements
/// that a moving camera and a moving head affect differently.
///
/// * Camera-axis yaw (the face's forward axis against the optical axis) changes by the angle
///   the line of sight sweeps when the camera rotates or the face's image slides across the
///   frame (a panning phone, a photo moved sideways), with no head rotation; a head that
///   moves sideways without turning leaves it unchanged.
/// * Line-of-sight yaw (the forward axis against the line from the head's turning point to the
///   camera) is unchanged by camera rotation and image position, but changes when the head
///   moves sideways without turning (by the angle its line of sight sweeps: 2 cm at 35 cm ≈ 3.3°).
///
/// Both change by the same amount when the head turns about its pivot. Their difference is the
/// sweep of the line of sight; up to `swayDegrees` of it is put down to the head swaying and
/// kept (the camera-axis yaw is used), the rest to the camera or the image moving and removed
/// (the line-of-sight yaw is used, offset by `swayDegrees`). A rotating camera therefore moves
/// the signal by at most `swayDegrees`, whatever its angle.
public enum TurnYaw {
    /// The turn signal in degrees from the camera-axis and line-of-sight yaws, each already
    /// relative to its own baseline (degrees): `lineOfSight − clamp(lineOfSight − cameraAxis, ±swayDegrees)`.
    public static func relative(cameraAxis: Double, lineOfSight: Double, swayDegrees: Double) -> Double {
        let sweep = lineOfSight - cameraAxis
        let sway = max(0, swayDegrees)
        return lineOfSight - min(max(sweep, -sway), sway)
    }
}
