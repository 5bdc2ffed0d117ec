import CFaceTracking
import Glibc

/// The border of a screen or a print around a face, if there is one: on each side of the face,
/// the straight line with the strongest consistent step in brightness across it
/// (`ft_face_enclosure`).
///
/// A face shown to the camera on a phone, a monitor or a print sits inside the picture's border:
/// the screen's edge, its bezel, the letterbox bars of a video, the paper's edge — straight lines
/// close around the face, one of them below the chin, cutting the body off. A live subject's
/// body goes on below the face, and the room behind the head has edges but rarely a straight,
/// uniform one on three sides of it. Texture (hair, curtains, a patterned wall) gives steps of
/// changing sign along a line: `consistency` tells a border from texture.
public struct FaceEnclosure: Sendable, Equatable {
    /// One side's best line.
    public struct Side: Sendable, Equatable {
        /// Mean step in brightness across the line, grey levels (0…255); 0 when no line could be measured.
        public var contrast: Double
        /// Share (0…1) of the line's samples whose step has the mean's sign and at least 0.3 of its size.
        public var consistency: Double
        /// Distance of the line from the face centre, face widths.
        public var distanceFaceWidths: Double
        /// The line's tilt from the face's own axes, degrees.
        public var tiltDegrees: Double

        /// The side's border strength: `contrast` when the line is consistent along at least
        /// `FaceEnclosure.minimumConsistency` of its length, else 0 (texture, not a border). Grey levels.
        public var strength: Double { consistency >= FaceEnclosure.minimumConsistency ? contrast * consistency : 0 }

        init(_ s: ft_border_side) {
            contrast = s.contrast
            consistency = s.consistency
            distanceFaceWidths = s.distance_face_widths
            tiltDegrees = s.tilt_degrees
        }
    }

    /// Beside the face on the image's left, 0.6–2.6 face widths from its centre.
    public var imageLeft: Side
    /// Beside the face on the image's right.
    public var imageRight: Side
    /// Above the face, 0.75–2.6 face widths over its centre.
    public var above: Side
    /// Below the chin, 1.0–3.2 face widths under the centre, across the neck and body.
    public var below: Side

    /// A line whose steps agree along less than this share of its length is texture (measured on
    /// the shared clips: screen and phone borders read 0.9–1.0, hair and curtains below 0.8).
    public static let minimumConsistency = 0.8

    /// The four sides' strengths, grey levels: image left, image right, above, below.
    public var strengths: [Double] { [imageLeft.strength, imageRight.strength, above.strength, below.strength] }

    /// How enclosed the face is, grey levels: the border below the chin and the second strongest
    /// of the other three sides, whichever is weaker. A face reads enclosed only inside a frame
    /// that runs under it (a screen's or a print's bottom edge cuts the body off, where a live
    /// subject's neck and body go on) and on at least two more sides: never by a door or a window
    /// behind a live subject (its sides and top, no bottom), nor by one edge of the room.
    public var enclosure: Double {
        let others = [imageLeft.strength, imageRight.strength, above.strength].sorted(by: >)
        return min(below.strength, others[1])
    }

    /// Measures the face of centre (`centerX`, `centerY`) pixels, width `faceWidth` pixels, whose
    /// eye line is at `eyeLineDegrees` (from the image-left eye to the image-right one, positive
    /// clockwise), on `gray`: a frame's grey copy (`Image.gray(into:)`, whose reductions make this
    /// cheap), or a BGR image (converted first).
    /// - Throws: `.argument` for an empty image, a face narrower than 8 px or non-finite values.
    public static func measure(gray: Image, centerX: Double, centerY: Double, faceWidth: Double,
                               eyeLineDegrees: Double) throws(FaceTrackingError) -> FaceEnclosure {
        var out = ft_enclosure()
        var error = ft_error()
        try check(ft_face_enclosure(gray.handle, centerX, centerY, faceWidth, eyeLineDegrees, &out, &error), &error)
        return FaceEnclosure(imageLeft: Side(out.image_left), imageRight: Side(out.image_right),
                             above: Side(out.above), below: Side(out.below))
    }

    /// Measures the face whose 68 landmarks (pixels) are `landmarks` and box is `box`: centred on
    /// the box, as wide as it, levelled by the line through the eye centres (landmarks 36–41, 42–47).
    /// - Throws: `.argument` for a count other than 68 or a degenerate face.
    public static func measure(gray: Image, box: Rect, landmarks: [Point]) throws(FaceTrackingError) -> FaceEnclosure {
        guard landmarks.count == 68 else {
            throw FaceTrackingError(kind: .argument, message: "face enclosure: expected 68 landmarks, got \(landmarks.count)")
        }
        func centre(_ r: Range<Int>) -> Point {
            Point(x: r.map { landmarks[$0].x }.reduce(0, +) / Double(r.count),
                  y: r.map { landmarks[$0].y }.reduce(0, +) / Double(r.count))
        }
        // 36–41 is the subject's right eye, on the image's left in an unmirrored picture; the
        // line's angle is taken left to right on the image either way.
        var a = centre(36..<42), b = centre(42..<48)
        if a.x > b.x { swap(&a, &b) }
        let degrees = atan2Degrees(b.y - a.y, b.x - a.x)
        let c = box.center
        return try measure(gray: gray, centerX: c.x, centerY: c.y, faceWidth: box.width, eyeLineDegrees: degrees)
    }

    private static func atan2Degrees(_ y: Double, _ x: Double) -> Double {
        guard x != 0 || y != 0 else { return 0 }
        return atan2(y, x) * 180 / .pi
    }
}
