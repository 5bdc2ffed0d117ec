import CFaceTracking

/// How far a face's 68 landmarks are from being a flat picture of a reference frame's landmarks.
///
/// A flat photo or screen, however it is tilted, swung or moved in front of the camera, maps its
/// landmarks from one frame to another by a single homography (a plane seen by a pinhole
/// camera), so the best homography leaves only landmark noise. A real head that turns moves its
/// nose, eye corners and jaw at depths 20–70 mm apart, which no homography explains.
///
/// `residual` fits that homography robustly (`ft_planar_residual`: OpenCV findHomography with
/// least median of squares) and returns the 75th percentile of the per-point errors divided by
/// the frame's eye-centre distance: dimensionless, a fraction of the inter-ocular distance.
/// The percentile ignores up to a quarter of the points (a few landmarks that jumped, the eyelids
/// of a blink). Measured values are in docs/presentation-attacks.md.
public enum FaceParallax {
    /// The percentile (0…1) of the per-point errors that is the residual.
    public static let percentile = 0.75

    /// Each point's distance in pixels from the image of its reference point under the best
    /// homography between the two sets.
    /// - Throws: `.argument` when the sets differ in size, hold fewer than 8 points or non-finite
    ///   coordinates; `.decode` when no homography fits (degenerate points).
    public static func pointErrors(reference: [Point], points: [Point]) throws(FaceTrackingError) -> [Double] {
        guard reference.count == points.count else {
            throw FaceTrackingError(kind: .argument, message: "planar residual: \(reference.count) reference points for \(points.count) points")
        }
        let from = reference.flatMap { [$0.x, $0.y] }
        let to = points.flatMap { [$0.x, $0.y] }
        var errors = [Double](repeating: 0, count: points.count)
        var error = ft_error()
        let status = from.withUnsafeBufferPointer { f in
            to.withUnsafeBufferPointer { t in
                errors.withUnsafeMutableBufferPointer { e in
                    ft_planar_residual(f.baseAddress, t.baseAddress, Int32(clamping: points.count), e.baseAddress, &error)
                }
            }
        }
        try check(status, &error)
        return errors
    }

    /// The parallax residual of `landmarks` (68, pixels) against `reference` (the same face's 68
    /// landmarks on the frontal reference frame): the `percentile` of the per-point homography
    /// errors divided by the eye-centre distance of `landmarks`. Dimensionless (fraction of the
    /// inter-ocular distance).
    /// - Throws: `.argument` for a count other than 68, non-finite points or a zero eye distance;
    ///   `.decode` when no homography fits.
    public static func residual(reference: [Point], landmarks: [Point]) throws(FaceTrackingError) -> Double {
        guard reference.count == 68, landmarks.count == 68 else {
            throw FaceTrackingError(kind: .argument, message: "planar residual: expected 68 landmarks, got \(reference.count) and \(landmarks.count)")
        }
        let eyes = eyeDistance(landmarks)
        guard eyes.isFinite, eyes > 0 else {
            throw FaceTrackingError(kind: .argument, message: "planar residual: the eye centres coincide")
        }
        let errors = try pointErrors(reference: reference, points: landmarks).sorted()
        return interpolatedPercentile(errors, percentile) / eyes
    }

    /// Distance in pixels between the centres of landmarks 36–41 and 42–47.
    static func eyeDistance(_ p: [Point]) -> Double {
        func centre(_ r: Range<Int>) -> Point {
            Point(x: r.map { p[$0].x }.reduce(0, +) / Double(r.count), y: r.map { p[$0].y }.reduce(0, +) / Double(r.count))
        }
        let a = centre(36..<42), b = centre(42..<48)
        return ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }

    /// The `q` percentile (0…1) of ascending `sorted` values, linear between ranks.
    static func interpolatedPercentile(_ sorted: [Double], _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let low = Int(position.rounded(.down))
        let high = min(low + 1, sorted.count - 1)
        let fraction = position - Double(low)
        return sorted[low] + (sorted[high] - sorted[low]) * fraction
    }
}
