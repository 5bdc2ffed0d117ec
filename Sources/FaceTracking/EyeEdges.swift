import CFaceTracking

/// How much of the edge energy around each eye runs vertically, 0…1 (`ft_eye_edges`).
///
/// An open eye shows its iris, whose sides are vertical edges against the white of the eye; a
/// closed eye shows the lid and the lash line, one horizontal edge. Each eye's patch (its
/// corners levelled, 1.4 eye widths across and 0.7 down, sampled to 48 × 24 pixels and smoothed
/// with the 3 × 3 binomial kernel, so that sensor noise does not pull it towards 0.5) gives
/// Σ|∂/∂x| / (Σ|∂/∂x| + Σ|∂/∂y|) of its Sobel derivatives over the inner 32 × 16 pixels. The
/// value depends on the face and the light, so it is read against the same eye's own recent
/// values (`LivenessCore.EyeEdgeBaseline`); the landmark eyelids can close on an open eye behind
/// glare, glasses or a smile, where these pixels do not follow them.
public struct EyeEdges: Sendable, Equatable {
    /// The subject's left eye (landmarks 42–47), 0…1; nil when its corners are under 6 px apart.
    public var left: Double?
    /// The subject's right eye (landmarks 36–41), 0…1; nil when its corners are under 6 px apart.
    public var right: Double?

    public init(left: Double?, right: Double?) {
        self.left = left
        self.right = right
    }

    /// Measures the eyes of the face whose 68 landmarks (pixels of `gray`) are `landmarks`.
    /// - Throws: `.argument` for a count other than 68, a non-finite eye landmark or an image
    ///   that is not grey.
    public static func measure(gray: Image, landmarks: [Point]) throws(FaceTrackingError) -> EyeEdges {
        guard landmarks.count == 68 else {
            throw FaceTrackingError(kind: .argument, message: "eye edges: expected 68 landmarks, got \(landmarks.count)")
        }
        var flat = [Double](repeating: 0, count: 136)
        for (i, p) in landmarks.enumerated() {
            flat[2 * i] = p.x
            flat[2 * i + 1] = p.y
        }
        var left = 0.0, right = 0.0
        var error = ft_error()
        try check(ft_eye_edges(gray.handle, flat, &left, &right, &error), &error)
        return EyeEdges(left: left >= 0 ? left : nil, right: right >= 0 ? right : nil)
    }
}
