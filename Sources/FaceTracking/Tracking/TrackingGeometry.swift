#if canImport(Glibc)
import Glibc
#endif

/// A region of a frame in whole pixels (a scan's region; the detector clips it to the frame).
package struct PixelRegion: Sendable, Equatable {
    package var x: Int
    package var y: Int
    package var width: Int
    package var height: Int

    package init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The whole of a `width` × `height` frame.
    package static func whole(width: Int, height: Int) -> PixelRegion { PixelRegion(x: 0, y: 0, width: width, height: height) }

    /// The pixel region a rectangle starts in, as C's conversion to `int` makes it (towards zero);
    /// non-finite or huge values are clamped, where C's conversion would be undefined.
    package init(truncating rect: Rect) {
        func int(_ value: Double) -> Int { value.isFinite ? Int(max(-1e9, min(1e9, value))) : 0 }
        self.init(x: int(rect.x), y: int(rect.y), width: int(rect.width), height: int(rect.height))
    }
}

/// Rectangle arithmetic as OpenCV 4.6's `cv::Rect2d` does it, operation for operation, so that
/// the tracking decisions are the same to the last bit as when they were made in C++.
enum RectArithmetic {
    static func isEmpty(_ r: Rect) -> Bool { r.width <= 0 || r.height <= 0 }

    static func area(_ r: Rect) -> Double { r.width * r.height }

    /// `a & b` (OpenCV's `operator&=` for rectangles): the overlap, or a zero rectangle.
    static func intersection(_ a: Rect, _ b: Rect) -> Rect {
        let zero = Rect(x: 0, y: 0, width: 0, height: 0)
        if isEmpty(a) || isEmpty(b) { return zero }
        let xMin = a.x < b.x ? a : b, xMax = a.x < b.x ? b : a
        let yMin = a.y < b.y ? a : b, yMax = a.y < b.y ? b : a
        if (xMin.x < 0 && xMin.x + xMin.width < xMax.x) || (yMin.y < 0 && yMin.y + yMin.height < yMax.y) { return zero }
        let result = Rect(x: xMax.x, y: yMax.y,
                          width: min(xMin.width - (xMax.x - xMin.x), xMax.width),
                          height: min(yMin.height - (yMax.y - yMin.y), yMax.height))
        return isEmpty(result) ? zero : result
    }

    /// Intersection over union; 0 when both are empty.
    static func overlap(_ a: Rect, _ b: Rect) -> Double {
        let inter = area(intersection(a, b))
        let union = area(a) + area(b) - inter
        return union > 0 ? inter / union : 0
    }

    /// Whether `r` holds the point (x, y): left and top edges in, right and bottom edges out.
    static func contains(_ r: Rect, x: Double, y: Double) -> Bool {
        r.x <= x && x < r.x + r.width && r.y <= y && y < r.y + r.height
    }

    /// The bounding box of 68 landmarks.
    static func bounds(of points: [Point]) -> Rect {
        var x0 = points[0].x, x1 = points[0].x, y0 = points[0].y, y1 = points[0].y
        for p in points.dropFirst() {
            x0 = min(x0, p.x)
            x1 = max(x1, p.x)
            y0 = min(y0, p.y)
            y1 = max(y1, p.y)
        }
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// The scales of a search for faces not yet tracked.
enum DetectionLadder {
    /// HOG windows are 80x80: a face is found when it is at least ~80 px in the scanned image.
    static let hogFacePixels = 80.0
    /// dlib's HOG pyramid shrinks the image by 5/6 per level.
    static let pyramidStep = 5.0 / 6.0

    /// Scales at which to scan a whole `width` × `height` frame for faces of at least
    /// `minFraction` of the shorter side: a coarse pass for the large faces of a selfie (30% of
    /// the shorter side and more) first, then the fine pass when its scale is more than 1.25
    /// times the coarse one.
    static func scales(width: Int, height: Int, minFraction: Double) -> [Double] {
        let shorter = Double(min(width, height))
        let fine = min(2.0, hogFacePixels / max(8.0, minFraction * shorter))
        let coarse = min(fine, hogFacePixels / (0.3 * shorter))
        return fine > coarse * 1.25 ? [coarse, fine] : [coarse]
    }

    /// Pyramid levels the fine pass (scale `fine`) needs when the coarse pass (scale `coarse`)
    /// runs too: those scanned above the coarse scale. Each level finds faces from 80 to 96 px in
    /// its image, so levels down to 1.1 × the coarse scale reach the sizes where the coarse pass's
    /// own first level starts; the levels below, which the coarse pass scans again, are left out.
    static func finePyramidLevels(fine: Double, coarse: Double) -> Int {
        var levels = 0
        var s = fine
        while s > 1.1 * coarse && levels < 64 {
            levels += 1
            s *= pyramidStep
        }
        return max(1, levels)
    }
}
