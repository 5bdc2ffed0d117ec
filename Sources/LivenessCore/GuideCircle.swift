/// The guide circle test of the spec (§6).
///
/// With a known frame size the test is done in pixels: the circle's radius is
/// `guideRadius × min(width, height)` and the face centre's normalised coordinates are scaled by
/// the frame's width and height, so the guide is a true circle on screen. Without a frame size the
/// test is done in normalised units (radius `guideRadius`). A centre exactly on the rim is inside.
public struct GuideCircle: Sendable, Equatable, Codable {
    /// Centre x, normalised 0…1 of the frame width.
    public var centerX: Double
    /// Centre y, normalised 0…1 of the frame height.
    public var centerY: Double
    /// Radius as a fraction of the shorter frame side.
    public var radius: Double

    /// The guide circle of a policy.
    public init(policy: LivenessPolicy) {
        centerX = policy.guideCenterX
        centerY = policy.guideCenterY
        radius = policy.guideRadius
    }

    /// Whether the normalised point (`x`, `y`) lies in the circle on a `width` × `height` pixel frame.
    public func contains(x: Double, y: Double, width: Int?, height: Int?) -> Bool {
        if let w = width, let h = height, w > 0, h > 0 {
            let dx = (x - centerX) * Double(w)
            let dy = (y - centerY) * Double(h)
            let r = radius * Double(min(w, h))
            return dx * dx + dy * dy <= r * r
        }
        let dx = x - centerX, dy = y - centerY
        return dx * dx + dy * dy <= radius * radius
    }
}
