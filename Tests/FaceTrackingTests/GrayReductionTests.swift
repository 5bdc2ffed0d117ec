import FaceTracking
import Foundation
import TestSupport
import XCTest

/// The grey copy's reductions by 2, 4, ... (`ft_image_to_gray` makes them; the thumbnails of the
/// frozen and looped-input checks and the rotation estimate's reduction start from them): what
/// they give is checked against averages computed here, pixel by pixel, from the grey image's
/// own bytes — an oracle independent of OpenCV's resize.
final class GrayReductionTests: XCTestCase {
    /// A 720 × 1280 BGR frame whose three channels are equal (so its grey copy is exactly this
    /// pattern): smooth gradients and a low-frequency wave (at most 0.3 grey levels a pixel),
    /// plus a fine ±6 checker that any average over whole 2 × 2 blocks removes and a sample
    /// without averaging would not.
    private func patternFrame(width: Int = 720, height: Int = 1280, phase: Double = 0) throws -> Image {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let smooth = 60 + 0.08 * Double(x) + 0.05 * Double(y) + 20 * sin(Double(x) / 97 + Double(y) / 113 + phase)
                let checker = (x + y) % 2 == 0 ? 6.0 : -6.0
                let v = UInt8(max(0, min(255, (smooth + checker).rounded())))
                let i = (y * width + x) * 3
                bytes[i] = v; bytes[i + 1] = v; bytes[i + 2] = v
            }
        }
        return try bytes.withUnsafeBytes { try Image(pixels: $0, width: width, height: height, bytesPerRow: width * 3, format: .bgr) }
    }

    /// The grey image's pixels, row-major, one byte each.
    private func grayPixels(_ image: Image) -> [UInt8] {
        image.withBGRBytes { bytes, stride in
            var out = [UInt8](repeating: 0, count: image.width * image.height)
            for y in 0..<image.height {
                for x in 0..<image.width { out[y * image.width + x] = bytes[y * stride + x] }
            }
            return out
        }
    }

    /// The mean of `pixels` (an image `width` wide) over columns `x0..<x1`, rows `y0..<y1`.
    private func mean(_ pixels: [UInt8], width: Int, _ x0: Int, _ x1: Int, _ y0: Int, _ y1: Int) -> Double {
        var sum = 0
        for y in y0..<y1 { for x in x0..<x1 { sum += Int(pixels[y * width + x]) } }
        return Double(sum) / Double((x1 - x0) * (y1 - y0))
    }

    func testThumbnailOfAGreyCopyIsTheAreaMeanOfTheRegion() throws {
        let frame = try patternFrame()
        let gray = Image()
        try frame.gray(into: gray)
        let pixels = grayPixels(gray)
        // The frozen check's region at this size (a 400 px face box enlarged 1.25x) and the
        // looped-input check's (the first box enlarged 2x, clipped to the frame).
        for (region, side) in [(Rect(x: 110, y: 390, width: 500, height: 500), 48), (Rect(x: 0, y: 240, width: 720, height: 800), 32)] {
            let thumbnail = Image()
            try gray.thumbnail(of: region, width: side, height: side, into: thumbnail)
            XCTAssertEqual(thumbnail.width, side)
            XCTAssertEqual(thumbnail.height, side)
            let got = grayPixels(thumbnail)
            var worst = 0.0
            for ty in 0..<side {
                for tx in 0..<side {
                    // Each thumbnail pixel's share of the region, rounded to whole pixels.
                    let x0 = Int(region.x) + tx * Int(region.width) / side, x1 = Int(region.x) + (tx + 1) * Int(region.width) / side
                    let y0 = Int(region.y) + ty * Int(region.height) / side, y1 = Int(region.y) + (ty + 1) * Int(region.height) / side
                    worst = max(worst, abs(Double(got[ty * side + tx]) - mean(pixels, width: gray.width, x0, x1, y0, y1)))
                }
            }
            // Within rounding (each level and the result round to whole grey levels) and the
            // level's grid, which may start up to 3 pixels off the region's edge (0.3 grey
            // levels a pixel here; the checks compare thumbnails of one region, on one grid).
            XCTAssertLessThanOrEqual(worst, 2.0, "thumbnail \(side) of \(region): worst difference \(worst) grey levels")
        }
    }

    func testReducedGrayOfAGreyCopyIsTheBlockMean() throws {
        let frame = try patternFrame()
        let gray = Image()
        try frame.gray(into: gray)
        let pixels = grayPixels(gray)
        let reduced = Image()
        let scale = try gray.reducedGray(maxSide: 256, into: reduced)
        XCTAssertEqual(scale, 0.2, accuracy: 1e-12)
        XCTAssertEqual(reduced.width, 144)
        XCTAssertEqual(reduced.height, 256)
        let got = grayPixels(reduced)
        var worst = 0.0, total = 0.0
        for y in 0..<256 {
            for x in 0..<144 {
                let d = abs(Double(got[y * 144 + x]) - mean(pixels, width: 720, 5 * x, 5 * x + 5, 5 * y, 5 * y + 5))
                worst = max(worst, d)
                total += d
            }
        }
        // From the reduction by 4, bilinear: the 5 × 5 block mean to within a few grey levels
        // on this pattern.
        XCTAssertLessThanOrEqual(worst, 3.0)
        XCTAssertLessThanOrEqual(total / Double(144 * 256), 1.0)
    }

    func testReductionsFollowNewPixelsInTheSameBuffer() throws {
        // A grey copy whose buffer is reused for another frame of the same size must not keep
        // the first frame's reductions: the thumbnail is of what the image now holds.
        let gray = Image()
        try patternFrame(phase: 0).gray(into: gray)
        let dark = try Image(width: 720, height: 1280, color: Color(red: 20, green: 20, blue: 20))
        let darkGray = Image()
        try dark.gray(into: darkGray)
        darkGray.copy(into: gray)  // same size: the buffer is reused
        let thumbnail = Image()
        try gray.thumbnail(of: Rect(x: 110, y: 390, width: 500, height: 500), width: 48, height: 48, into: thumbnail)
        XCTAssertEqual(Set(grayPixels(thumbnail)), [20])

        // And a colour frame converted again into the same grey buffer.
        try patternFrame(phase: 0).gray(into: gray)
        try dark.gray(into: gray)
        try gray.thumbnail(of: Rect(x: 0, y: 240, width: 720, height: 800), width: 32, height: 32, into: thumbnail)
        XCTAssertEqual(Set(grayPixels(thumbnail)), [20])
    }
    /// A decoded frame's grey copy and its reduction by 2 are made in one pass over the luma
    /// plane when the video is limited-range 8-bit (`Picture::luma`); other video takes the
    /// conversion then OpenCV's resize. Either way the reduction must be each 2 × 2 block's mean
    /// rounded half up, (a + b + c + d + 2) / 4 in whole grey levels, the odd last row or column
    /// left out: computed here from the grey copy's own bytes. `reducedGray` at half the longer
    /// side hands that level back as it is.
    func testADecodedFramesReductionByTwoIsTheRoundedBlockMean() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let clips: [(String, [String], String)] = [
            ("h264.mp4", ["-vf", "scale=360:640,setsar=1", "-c:v", "libx264", "-crf", "20", "-pix_fmt", "yuv420p"], "H.264 limited range"),
            ("odd.mkv", ["-vf", "scale=363:247,setsar=1", "-c:v", "ffv1", "-pix_fmt", "yuv420p"], "odd sides, lossless"),
            ("mjpeg.avi", ["-vf", "scale=360:640,setsar=1", "-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p"], "full-range MJPEG"),
        ]
        for (name, encoding, what) in clips {
            let path = dir.appendingPathComponent(name).path
            try Fixtures.ffmpeg(["-loop", "1", "-r", "25", "-i", try Fixtures.generated("astronaut.png"), "-t", "0.2", "-an"]
                                + encoding + [path])
            let reader = try VideoReader(path: path)
            let frame = Image(), gray = Image(), half = Image()
            var frames = 0
            while frames < 3, try reader.read(into: frame) != nil {
                frames += 1
                try frame.gray(into: gray)
                let pixels = grayPixels(gray)
                let w = gray.width, h = gray.height
                _ = try gray.reducedGray(maxSide: max(w, h) / 2, into: half)
                XCTAssertEqual(half.width, w / 2, what)
                XCTAssertEqual(half.height, h / 2, what)
                let got = grayPixels(half)
                var differing = 0
                for y in 0..<(h / 2) {
                    for x in 0..<(w / 2) {
                        let sum = Int(pixels[2 * y * w + 2 * x]) + Int(pixels[2 * y * w + 2 * x + 1])
                            + Int(pixels[(2 * y + 1) * w + 2 * x]) + Int(pixels[(2 * y + 1) * w + 2 * x + 1])
                        if Int(got[y * (w / 2) + x]) != (sum + 2) / 4 { differing += 1 }
                    }
                }
                XCTAssertEqual(differing, 0, "\(what), frame \(frames): \(differing) of \((w / 2) * (h / 2)) pixels differ")
            }
            XCTAssertEqual(frames, 3, what)
        }
    }
}
