import FaceTracking
import XCTest

/// `EyeEdges` on pictures whose edges run one way only, where the share is known without
/// computing it: stripes along the columns have no vertical derivative at all (share 1), stripes
/// along the rows no horizontal one (share 0), and the patch is levelled on the eye's corners
/// first, so an eye lying on its side sees the picture turned.
final class EyeEdgesTests: XCTestCase {
    /// The grey copy of a 240 × 240 picture of 6-pixel stripes: `alongColumns` makes each column one grey
    /// level (edges between columns, vertical), else each row.
    private func stripes(alongColumns: Bool) throws -> Image {
        var bytes = [UInt8](repeating: 0, count: 240 * 240)
        for y in 0..<240 {
            for x in 0..<240 {
                let k = alongColumns ? x : y
                bytes[y * 240 + x] = (k / 6) % 2 == 0 ? 60 : 190
            }
        }
        let picture = try bytes.withUnsafeBytes { try Image(pixels: $0, width: 240, height: 240, bytesPerRow: 240, format: .gray) }
        let grey = Image()
        try picture.gray(into: grey)  // the grey copy the engine measures
        return grey
    }

    /// 68 landmarks at the centre, with the eyes' corners where given.
    private func landmarks(right: (Point, Point), left: (Point, Point)) -> [Point] {
        var p = [Point](repeating: Point(x: 120, y: 120), count: 68)
        p[36] = right.0; p[39] = right.1
        p[42] = left.0; p[45] = left.1
        return p
    }

    func testLevelEyesOnColumnStripesSeeOnlyVerticalEdges() throws {
        let image = try stripes(alongColumns: true)
        let level = landmarks(right: (Point(x: 60, y: 120), Point(x: 100, y: 120)),
                              left: (Point(x: 140, y: 120), Point(x: 180, y: 120)))
        let e = try EyeEdges.measure(gray: image, landmarks: level)
        XCTAssertEqual(e.left ?? -1, 1, accuracy: 1e-9)
        XCTAssertEqual(e.right ?? -1, 1, accuracy: 1e-9)
    }

    func testLevelEyesOnRowStripesSeeOnlyHorizontalEdges() throws {
        let image = try stripes(alongColumns: false)
        let level = landmarks(right: (Point(x: 60, y: 120), Point(x: 100, y: 120)),
                              left: (Point(x: 140, y: 120), Point(x: 180, y: 120)))
        let e = try EyeEdges.measure(gray: image, landmarks: level)
        XCTAssertEqual(e.left ?? -1, 0, accuracy: 1e-9)
        XCTAssertEqual(e.right ?? -1, 0, accuracy: 1e-9)
    }

    func testAnEyeOnItsSideIsLevelledFirst() throws {
        // Corners one above the other: levelled, the picture's row stripes run across the patch.
        let image = try stripes(alongColumns: false)
        let upright = landmarks(right: (Point(x: 80, y: 100), Point(x: 80, y: 140)),
                                left: (Point(x: 160, y: 100), Point(x: 160, y: 140)))
        let e = try EyeEdges.measure(gray: image, landmarks: upright)
        XCTAssertEqual(e.left ?? -1, 1, accuracy: 1e-6)
        XCTAssertEqual(e.right ?? -1, 1, accuracy: 1e-6)
    }

    func testCornersTooCloseOrBadInputs() throws {
        let image = try stripes(alongColumns: true)
        let tiny = landmarks(right: (Point(x: 60, y: 120), Point(x: 63, y: 120)),
                             left: (Point(x: 140, y: 120), Point(x: 180, y: 120)))
        let e = try EyeEdges.measure(gray: image, landmarks: tiny)
        XCTAssertNil(e.right)
        XCTAssertNotNil(e.left)
        XCTAssertThrowsError(try EyeEdges.measure(gray: image, landmarks: Array(tiny.prefix(60))))
        var bad = tiny
        bad[42] = Point(x: .nan, y: 0)
        XCTAssertThrowsError(try EyeEdges.measure(gray: image, landmarks: bad))
        let colour = try Image(width: 64, height: 64, color: Color(red: 10, green: 20, blue: 30))
        XCTAssertThrowsError(try EyeEdges.measure(gray: colour, landmarks: tiny))
    }
}
