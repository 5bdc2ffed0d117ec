import FaceTracking
import LivenessCore
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

    /// A drawn eye, 40 px from corner to corner at (60, 60) and (100, 60) on a 160 × 120 skin
    /// field of grey 150: open, an almond of sclera (215) with a dark iris disc (60, radius 8)
    /// under a lid line; closed, only the lash line (70) just under the corners' line. Then
    /// uniform noise of ±`noise` grey levels from a seeded generator, as a dim, noisy camera
    /// gives. The generator knows which eye is open.
    private func drawnEye(open: Bool, noise: Int, seed: UInt64) throws -> Image {
        let w = 160, h = 120, cx = 80.0, cy = 60.0
        var bytes = [UInt8](repeating: 0, count: w * h)
        var state = seed &* 6364136223846793005 &+ 1442695040888963407
        for y in 0..<h {
            for x in 0..<w {
                let dx = Double(x) - cx, dy = Double(y) - cy
                var v = 150.0
                if open {
                    if (dx / 20) * (dx / 20) + (dy / 6.8) * (dy / 6.8) <= 1 { v = 215 }
                    if dx * dx + dy * dy <= 8.8 * 8.8 { v = 60 }
                    if abs(dx) <= 20, abs(Double(y) - (cy - 6.8)) <= 1 { v = 70 }
                } else if abs(dx) <= 20, abs(Double(y) - (cy + 2)) <= 1 {
                    v = 70
                }
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let r = Int((state >> 33) % UInt64(2 * noise + 1)) - noise
                bytes[y * w + x] = UInt8(max(0, min(255, Int(v) + r)))
            }
        }
        let picture = try bytes.withUnsafeBytes { try Image(pixels: $0, width: w, height: h, bytesPerRow: w, format: .gray) }
        let grey = Image()
        try picture.gray(into: grey)
        return grey
    }

    func testANoisyClosedEyeStillReadsClosedAgainstTheOpenOne() throws {
        // Noise gives horizontal and vertical derivatives alike and pulls every share towards
        // 0.5; the patch is smoothed before its derivatives so that a closed eye still reads
        // well under the open one, at most the onset ratio a blink needs (0.7). Measured: at ±40
        // grey levels these closed eyes read 0.51–0.59 of the open ones; without the smoothing
        // 0.69–0.78, three of the five over the onset ratio.
        let corners = (Point(x: 60, y: 60), Point(x: 100, y: 60))
        let eyes = landmarks(right: corners, left: corners)
        let onset = LivenessPolicy().eyeEdgeOnsetRatio
        for noise in [0, 15, 30, 40] {
            for seed in UInt64(1)...5 {
                let open = try XCTUnwrap(try EyeEdges.measure(gray: drawnEye(open: true, noise: noise, seed: seed), landmarks: eyes).right)
                let closed = try XCTUnwrap(try EyeEdges.measure(gray: drawnEye(open: false, noise: noise, seed: seed + 100), landmarks: eyes).right)
                XCTAssertGreaterThan(open, 0.3, "noise \(noise), seed \(seed): the open eye's iris sides")
                XCTAssertLessThanOrEqual(closed / open, onset, "noise \(noise), seed \(seed): closed \(closed), open \(open)")
            }
        }
    }
}
