import FaceTracking
import Foundation
import TestSupport
import XCTest

/// The pixels of decoded video frames against ffmpeg's own conversions of the same file: the
/// colour is what `ffmpeg -pix_fmt bgr24` writes and the grey copy what `ffmpeg -pix_fmt gray`
/// writes, byte for byte, for the picture formats phones and cameras record (limited-range
/// BT.709 H.264, full-range MJPEG, 10-bit H.264). The grey copy comes from the luma plane and the
/// colour is converted only when read, so the two are checked separately.
final class VideoPixelsTests: XCTestCase {
    private let frames = 4

    /// `frames` frames of `path` as ffmpeg converts them to `pixelFormat` (bgr24 or gray).
    private func ffmpegFrames(_ path: String, pixelFormat: String, in dir: URL) throws -> Data {
        let raw = dir.appendingPathComponent(UUID().uuidString + ".raw").path
        try Fixtures.ffmpeg(["-i", path, "-frames:v", String(frames), "-f", "rawvideo", "-pix_fmt", pixelFormat, raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw))
    }

    /// Counts the bytes of the engine's frames (colour, or their grey copies) that differ from
    /// ffmpeg's, and the largest difference.
    private func compare(_ path: String, grey: Bool, reference: Data) throws -> (differing: Int, largest: Int, total: Int) {
        let reader = try VideoReader(path: path)
        let frame = Image(), gray = Image()
        let channels = grey ? 1 : 3
        let frameBytes = reader.info.width * reader.info.height * channels
        XCTAssertEqual(reference.count, frames * frameBytes, "ffmpeg wrote \(frames) frames of the reader's size")
        var differing = 0, largest = 0, total = 0
        for index in 0..<frames {
            guard try reader.read(into: frame) != nil else { XCTFail("frame \(index) missing"); break }
            let image: Image
            if grey {
                try frame.gray(into: gray)
                image = gray
            } else {
                image = frame
            }
            image.withBGRBytes { bytes, stride in
                reference.withUnsafeBytes { ref in
                    for y in 0..<image.height {
                        for x in 0..<(image.width * channels) {
                            let d = abs(Int(bytes[y * stride + x]) - Int(ref[index * frameBytes + y * image.width * channels + x]))
                            if d != 0 { differing += 1 }
                            largest = max(largest, d)
                            total += 1
                        }
                    }
                }
            }
        }
        return (differing, largest, total)
    }

    private func checkMatchesFFmpeg(_ path: String, _ what: String, in dir: URL) throws {
        let colour = try compare(path, grey: false, reference: try ffmpegFrames(path, pixelFormat: "bgr24", in: dir))
        XCTAssertGreaterThan(colour.total, 0)
        XCTAssertEqual(colour.differing, 0, "\(what): \(colour.differing) of \(colour.total) colour bytes differ from ffmpeg's bgr24 (largest \(colour.largest))")
        let grey = try compare(path, grey: true, reference: try ffmpegFrames(path, pixelFormat: "gray", in: dir))
        XCTAssertGreaterThan(grey.total, 0)
        XCTAssertEqual(grey.differing, 0, "\(what): \(grey.differing) of \(grey.total) grey bytes differ from ffmpeg's gray (largest \(grey.largest))")
    }

    /// Encodes 0.3 s of the astronaut portrait (a face, a flag, saturated colours: it runs
    /// wherever the tests do) at 360×360 into `name` with `encoding`, then compares the reader's
    /// frames with ffmpeg's own conversions of that file.
    private func checkClip(_ name: String, _ encoding: [String], _ what: String) throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent(name).path
        try Fixtures.ffmpeg(["-loop", "1", "-r", "25", "-i", try Fixtures.generated("astronaut.png"), "-t", "0.3", "-an",
                             "-vf", "scale=360:360"] + encoding + [path])
        try checkMatchesFFmpeg(path, what, in: dir)
    }

    func testLimitedRangeBT709IsConvertedWithItsOwnMatrix() throws {
        try checkClip("bt709.mp4", ["-c:v", "libx264", "-crf", "20", "-pix_fmt", "yuv420p", "-colorspace", "bt709",
                                    "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"],
                      "BT.709 limited range")
    }

    func testFullRangeMJPEGKeepsItsLevels() throws {
        try checkClip("mjpeg.avi", ["-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj420p"], "full-range MJPEG")
    }

    func testTenBitVideoIsConvertedLikeFFmpeg() throws {
        try checkClip("ten-bit.mp4", ["-c:v", "libx264", "-crf", "20", "-pix_fmt", "yuv420p10le"], "10-bit")
    }

    /// Every luma value, 0 to 255 (out of the limited range too), stored losslessly: the grey
    /// copy expands each one as ffmpeg's conversion to gray does.
    func testEveryLumaValueBecomesTheGreyFFmpegGives() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let raw = dir.appendingPathComponent("ramp.yuv")
        let width = 256, height = 16
        var frame = [UInt8](repeating: 128, count: width * height * 3 / 2)
        for y in 0..<height { for x in 0..<width { frame[y * width + x] = UInt8(x) } }
        try Data(Array(repeating: frame, count: frames).joined()).write(to: raw)
        let path = dir.appendingPathComponent("ramp.mkv").path
        try Fixtures.ffmpeg(["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(width)x\(height)", "-r", "10", "-i", raw.path,
                             "-c:v", "ffv1", "-pix_fmt", "yuv420p", path])
        let grey = try compare(path, grey: true, reference: try ffmpegFrames(path, pixelFormat: "gray", in: dir))
        XCTAssertEqual(grey.total, frames * width * height)
        XCTAssertEqual(grey.differing, 0, "\(grey.differing) grey levels differ from ffmpeg's (largest \(grey.largest))")
    }

    /// A decoded frame's grey copy is its luma only while its pixels are the picture's: once
    /// drawn on, the grey copy is the drawing's.
    func testDrawingOnADecodedFrameReachesItsGreyCopy() throws {
        let reader = try VideoReader(path: try Fixtures.generated("astronaut-still.mp4"))
        let frame = Image(), gray = Image()
        XCTAssertNotNil(try reader.read(into: frame))
        let copy = frame.copy()
        frame.drawRect(Rect(x: 10, y: 10, width: 40, height: 40), color: .white, thickness: -1)
        try frame.gray(into: gray)
        gray.withBGRBytes { bytes, stride in
            XCTAssertEqual(bytes[30 * stride + 30], 255, "the white square is in the grey copy")
        }
        // The copy taken before the drawing still shows the decoded picture.
        copy.withBGRBytes { bytes, stride in
            let pixel = (0..<3).map { Int(bytes[30 * stride + 30 * 3 + $0]) }
            XCTAssertNotEqual(pixel, [255, 255, 255], "the copy is not drawn on")
        }
        XCTAssertEqual(copy.width, frame.width)
        XCTAssertEqual(copy.height, frame.height)
    }
}
