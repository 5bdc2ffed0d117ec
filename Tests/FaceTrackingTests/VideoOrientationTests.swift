import FaceTracking
import Foundation
import TestSupport
import XCTest

/// Display matrices (phone videos are stored sideways with a matrix that says how to show them)
/// against the reference player: the engine's frames must be what FFmpeg shows, pixel for pixel
/// (OpenCV 4.6 turns ±90° the wrong way, opencv/opencv#22088). The clips are made here from the
/// shared real footage with ffmpeg; the oracle is ffmpeg's own autorotated decode of the same
/// file, or for mirrored matrices (which Debian's FFmpeg 5.1 does not undo) the upright source.
final class VideoOrientationTests: XCTestCase {
    /// A short upright portrait clip cut from the shared phone selfie, at 360×640.
    private func uprightClip(in dir: URL, seconds: Double = 1) throws -> String {
        let source = try Fixtures.shared("lp-d13-phone-selfie-glasses.mp4")
        let path = dir.appendingPathComponent("upright.mp4").path
        try Fixtures.ffmpeg(["-i", source, "-t", String(seconds), "-an", "-vf", "scale=360:640",
                             "-c:v", "libx264", "-preset", "ultrafast", "-crf", "16", "-pix_fmt", "yuv420p", path])
        return path
    }

    /// The first frame as FFmpeg shows it (autorotation on, its default), decoded to PNG.
    private func ffmpegFirstFrame(_ path: String, in dir: URL) throws -> Image {
        let png = dir.appendingPathComponent(UUID().uuidString + ".png").path
        try Fixtures.ffmpeg(["-i", path, "-frames:v", "1", png])
        return try Image(contentsOfFile: png)
    }

    /// The first frame as ffmpeg decodes it through `filter` (after its autorotation, unless
    /// `noAutorotate`), raw in `pixelFormat` (bgr24 or gray).
    private func ffmpegFirstFrame(_ path: String, filter: String, pixelFormat: String, noAutorotate: Bool,
                                  in dir: URL) throws -> Data {
        let raw = dir.appendingPathComponent(UUID().uuidString + ".raw").path
        try Fixtures.ffmpeg((noAutorotate ? ["-noautorotate"] : []) + ["-i", path, "-frames:v", "1", "-vf", filter, "-f", "rawvideo", "-pix_fmt", pixelFormat, raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw))
    }

    /// How many bytes of `image` (BGR or grey) differ from `reference` (the same pixels, tightly
    /// packed), the largest difference and the mean; nil when the sizes differ.
    private func byteDifferences(_ image: Image, _ reference: Data, channels: Int) -> (differing: Int, largest: Int, mean: Double)? {
        guard reference.count == image.width * image.height * channels, !image.isEmpty else { return nil }
        return image.withBGRBytes { bytes, stride in
            reference.withUnsafeBytes { ref in
                var differing = 0, largest = 0, total = 0
                for y in 0..<image.height {
                    for x in 0..<(image.width * channels) {
                        let d = abs(Int(bytes[y * stride + x]) - Int(ref[y * image.width * channels + x]))
                        if d != 0 { differing += 1 }
                        largest = max(largest, d)
                        total += d
                    }
                }
                return (differing, largest, Double(total) / Double(reference.count))
            }
        }
    }

    private func engineFirstFrame(_ path: String) throws -> (Image, VideoInfo) {
        let reader = try VideoReader(path: path)
        let frame = Image()
        XCTAssertNotNil(try reader.read(into: frame))
        return (frame, reader.info)
    }

    /// Mean absolute difference per channel value (0…255); infinity when the sizes differ.
    private func meanDifference(_ a: Image, _ b: Image) -> Double {
        guard a.width == b.width, a.height == b.height, !a.isEmpty else { return .infinity }
        return a.withBGRBytes { pa, sa in
            b.withBGRBytes { pb, sb in
                var total = 0
                for y in 0..<a.height {
                    for x in 0..<(a.width * 3) {
                        total += abs(Int(pa[y * sa + x]) - Int(pb[y * sb + x]))
                    }
                }
                return Double(total) / Double(a.width * a.height * 3)
            }
        }
    }

    /// The image turned upside down (a wrongly turned ±90° matrix gives the frame rotated by 180°
    /// from the right one), for the contrast check.
    private func rotated180(_ image: Image) throws -> Image {
        var bytes = [UInt8](repeating: 0, count: image.width * image.height * 3)
        image.withBGRBytes { p, stride in
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let dst = ((image.height - 1 - y) * image.width + (image.width - 1 - x)) * 3
                    for c in 0..<3 { bytes[dst + c] = p[y * stride + x * 3 + c] }
                }
            }
        }
        return try bytes.withUnsafeBytes {
            try Image(pixels: $0, width: image.width, height: image.height, bytesPerRow: image.width * 3, format: .bgr)
        }
    }

    func testEveryRotationTagDecodesAsFFmpegShowsIt() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let upright = try uprightClip(in: dir)
        let reference = try ffmpegFirstFrame(upright, in: dir)
        // (ffmpeg's rotate tag, how the frames are stored so that the tag shows them upright)
        let cases: [(tag: Int, storage: String?)] = [(0, nil), (90, "transpose=1"), (180, "hflip,vflip"), (270, "transpose=2")]
        for (tag, storage) in cases {
            let stored = dir.appendingPathComponent("stored-\(tag).mp4").path
            let tagged = dir.appendingPathComponent("tagged-\(tag).mp4").path
            var encode = ["-i", upright]
            if let storage { encode += ["-vf", storage] }
            try Fixtures.ffmpeg(encode + ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "16", "-pix_fmt", "yuv420p", stored])
            try Fixtures.ffmpeg(["-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=\(tag)", tagged])
            let oracle = try ffmpegFirstFrame(tagged, in: dir)
            let (frame, info) = try engineFirstFrame(tagged)
            XCTAssertEqual(frame.width, oracle.width, "rotate=\(tag): width as ffmpeg shows it")
            XCTAssertEqual(frame.height, oracle.height, "rotate=\(tag): height as ffmpeg shows it")
            XCTAssertEqual(info.width, 360)
            XCTAssertEqual(info.height, 640)
            XCTAssertFalse(info.mirrored)
            let difference = meanDifference(frame, oracle)
            XCTAssertLessThan(difference, 2.0, "rotate=\(tag): the engine's frame differs from ffmpeg's by \(difference) levels")
            // The same frame turned the other way is far from it: the comparison can tell.
            let wrongWay = meanDifference(try rotated180(frame), oracle)
            XCTAssertGreaterThan(wrongWay, 10 * max(difference, 1), "rotate=\(tag): contrast \(wrongWay)")
            // ffmpeg shows each of these upright: the same picture as the upright source.
            XCTAssertLessThan(meanDifference(frame, reference), 4.0, "rotate=\(tag): upright")
        }
    }

    /// Anamorphic video (non-square pixels, a sample aspect ratio other than 1): a player stretches
    /// the pixels square; the engine's frames must be that picture, before the display matrix.
    func testNonSquarePixelsAreStretchedAsAPlayerShowsThem() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let upright = try uprightClip(in: dir)
        let reference = try ffmpegFirstFrame(upright, in: dir)
        let cases: [(name: String, filter: String, tag: Int?, sar: Double)] = [
            ("wide pixels", "scale=180:640,setsar=2", nil, 2),
            ("tall pixels", "scale=360:320,setsar=1/2", nil, 0.5),
            // Stored sideways with squeezed pixels: stretched first, then turned (rotate=90 tag).
            ("wide pixels, sideways", "transpose=1,scale=320:360,setsar=2", 90, 2),
        ]
        for c in cases {
            let stored = dir.appendingPathComponent("sar-\(c.sar)-\(c.tag ?? 0).mp4").path
            try Fixtures.ffmpeg(["-i", upright, "-vf", c.filter, "-c:v", "libx264", "-preset", "ultrafast", "-crf", "16",
                                 "-pix_fmt", "yuv420p", stored])
            var path = stored
            if let tag = c.tag {
                path = dir.appendingPathComponent("sar-tagged.mp4").path
                try Fixtures.ffmpeg(["-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=\(tag)", path])
            }
            let (frame, info) = try engineFirstFrame(path)
            XCTAssertEqual(info.sampleAspectRatio, c.sar, accuracy: 1e-6, c.name)
            XCTAssertEqual(frame.width, 360, c.name)
            XCTAssertEqual(frame.height, 640, c.name)
            // The oracle: ffmpeg's own square-pixel picture of the same file (its scale filter,
            // bicubic by default), as bgr24 and gray, then turned by the display matrix. Byte for
            // byte: the engine stretches in the same conversion, as ffmpeg does.
            let stretch = "scale=w='if(gt(sar,1),iw*sar,iw)':h='if(gt(sar,1),ih,ih/sar)',setsar=1"
            // (the rotate=90 tag: ffmpeg shows the stored picture a quarter turn counter-clockwise)
            let turn = c.tag == 90 ? ",transpose=cclock" : ""
            let gray = Image()
            try frame.gray(into: gray)
            for (format, image, channels) in [("bgr24", frame, 3), ("gray", gray, 1)] {
                let oracle = try ffmpegFirstFrame(path, filter: stretch + turn, pixelFormat: format, noAutorotate: true, in: dir)
                let difference = byteDifferences(image, oracle, channels: channels)
                XCTAssertEqual(difference?.differing, 0, "\(c.name), \(format): the engine's frame against ffmpeg's, \(String(describing: difference))")
                // ffmpeg's player turns first and stretches after: the same picture but for the
                // rounding (0.55 levels on average for the sideways clip).
                if c.tag != nil {
                    let played = try ffmpegFirstFrame(path, filter: stretch, pixelFormat: format, noAutorotate: false, in: dir)
                    let rounding = byteDifferences(image, played, channels: channels)
                    XCTAssertLessThan(rounding?.mean ?? .infinity, 1.0, "\(c.name), \(format): against ffmpeg's player, \(String(describing: rounding))")
                }
            }
            XCTAssertLessThan(meanDifference(frame, reference), 6.0, "\(c.name): the upright source's picture")
        }
        // Pixels more than 4 times as wide as high: refused with the reason.
        let absurd = dir.appendingPathComponent("sar-absurd.mp4").path
        try Fixtures.ffmpeg(["-i", upright, "-vf", "scale=64:640,setsar=10", "-c:v", "libx264", "-preset", "ultrafast", absurd])
        XCTAssertThrowsError(try VideoReader(path: absurd)) { error in
            XCTAssertTrue("\(error)".contains("sample aspect ratio"), "\(error)")
        }
    }

    /// What stretching is for: a real talking face stored with pixels twice as wide as high is
    /// measured like the original (before, its yaw was 14.6° off at the median, 56° at worst,
    /// and a turn was credited the wrong way).
    func testASqueezedFaceIsMeasuredLikeTheOriginal() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let source = try Fixtures.shared("st-ref2-talking-turns.mp4")
        let squeezed = dir.appendingPathComponent("squeezed.mp4").path
        try Fixtures.ffmpeg(["-i", source, "-t", "3", "-an", "-vf", "scale=iw/2:ih,setsar=2", "-c:v", "libx264",
                             "-preset", "ultrafast", "-crf", "16", "-pix_fmt", "yuv420p", squeezed])
        let model = try LandmarkModel.load()
        func yaws(_ path: String) throws -> [Double?] {
            let reader = try VideoReader(path: path)
            let tracker = try FaceTracker(model: model)
            let frame = Image()
            var out: [Double?] = []
            while let t = try reader.read(into: frame) {
                out.append(try tracker.process(frame, timestampMilliseconds: t).face?.yawDegrees)
            }
            return out
        }
        let original = try yaws(source).prefix(75), stretched = try yaws(squeezed)
        let pairs = zip(original, stretched).compactMap { a, b in a.flatMap { a in b.map { abs(a - $0) } } }.sorted()
        XCTAssertGreaterThanOrEqual(pairs.count, 70, "the face is found on the stretched frames too")
        XCTAssertLessThan(pairs[pairs.count / 2], 3.0, "median yaw difference \(pairs[pairs.count / 2])°")
    }

    func testMirroredDisplayMatricesAreUndone() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let upright = try uprightClip(in: dir)
        let reference = try ffmpegFirstFrame(upright, in: dir)
        // The stored picture (made with ffmpeg's own filters from the upright one) and the display
        // matrix (a, b, c, d in 16.16) that shows it upright by FFmpeg's definition (libavutil's
        // display.h and fftools' autorotation: theta = -av_display_rotation_get(m), then
        // transpose "cclock_flip" when theta = 90 and c > 0, "clock_flip" when theta = 270 and
        // c < 0, hflip when a < 0 and vflip when d < 0 at theta = 180 or 0).
        let one: Int32 = 65536
        let cases: [(name: String, filter: String, matrix: [Int32], rotation: Int)] = [
            ("hflip", "hflip", [-one, 0, 0, one], 180),
            ("vflip", "vflip", [one, 0, 0, -one], 0),
            ("transpose", "transpose=0", [0, one, one, 0], 90),
            ("antitranspose", "transpose=3", [0, -one, -one, 0], 270),
        ]
        for c in cases {
            let stored = dir.appendingPathComponent("\(c.name).mp4").path
            try Fixtures.ffmpeg(["-i", upright, "-vf", c.filter, "-c:v", "libx264", "-preset", "ultrafast", "-crf", "16",
                                 "-pix_fmt", "yuv420p", stored])
            try Self.setTrackMatrix(of: stored, a: c.matrix[0], b: c.matrix[1], c: c.matrix[2], d: c.matrix[3])
            let (frame, info) = try engineFirstFrame(stored)
            XCTAssertTrue(info.mirrored, c.name)
            XCTAssertEqual(info.rotationDegrees, c.rotation, c.name)
            XCTAssertEqual(frame.width, 360, c.name)
            XCTAssertEqual(frame.height, 640, c.name)
            let difference = meanDifference(frame, reference)
            XCTAssertLessThan(difference, 4.0, "\(c.name): the engine's frame differs from the upright source by \(difference)")
            XCTAssertGreaterThan(meanDifference(try rotated180(frame), reference), 10 * max(difference, 1), c.name)
        }
    }

    func testAnUnusualAngleIsTurnedAsFFmpegTurnsIt() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let upright = try uprightClip(in: dir)
        let stored = dir.appendingPathComponent("angle.mp4").path
        try Fixtures.ffmpeg(["-i", upright, "-c", "copy", stored])
        // A 30° display rotation (cos 30° = 0.866, sin 30° = 0.5 in 16.16).
        try Self.setTrackMatrix(of: stored, a: 56756, b: 32768, c: -32768, d: 56756)
        let oracle = try ffmpegFirstFrame(stored, in: dir)
        let (frame, info) = try engineFirstFrame(stored)
        XCTAssertFalse(info.mirrored)
        XCTAssertTrue([30, 330].contains(info.rotationDegrees), "\(info.rotationDegrees)")
        XCTAssertEqual(frame.width, oracle.width)
        XCTAssertEqual(frame.height, oracle.height)
        let difference = meanDifference(frame, oracle)
        XCTAssertLessThan(difference, 6.0, "the engine's frame differs from ffmpeg's rotate filter by \(difference)")
        XCTAssertGreaterThan(meanDifference(frame, try ffmpegFirstFrame(upright, in: dir)), 2 * difference)
    }

    func testASidewaysPhoneClipFindsTheFaceAsOftenAsTheUprightOne() throws {
        // The issue's own construction: ffprobe says rotation=-90, as on a typical phone selfie.
        let dir = try Fixtures.temporaryDirectory(self)
        let source = try Fixtures.shared("lp-d13-phone-selfie-glasses.mp4")
        let upright = dir.appendingPathComponent("upright.mp4").path
        let sideways = dir.appendingPathComponent("sideways.mp4").path
        let phone = dir.appendingPathComponent("phone.mp4").path
        try Fixtures.ffmpeg(["-i", source, "-t", "4", "-an", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "18", upright])
        try Fixtures.ffmpeg(["-i", upright, "-vf", "transpose=2", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "18", sideways])
        try Fixtures.ffmpeg(["-i", sideways, "-c", "copy", "-metadata:s:v:0", "rotate=270", phone])
        let model = try LandmarkModel.load()
        func faceRate(_ path: String) throws -> (faces: Int, frames: Int) {
            let reader = try VideoReader(path: path)
            let tracker = try FaceTracker(model: model)
            let frame = Image()
            var faces = 0, frames = 0
            while try reader.read(into: frame) != nil {
                frames += 1
                if try tracker.process(frame).face != nil { faces += 1 }
            }
            return (faces, frames)
        }
        let a = try faceRate(upright)
        let b = try faceRate(phone)
        XCTAssertEqual(a.frames, b.frames)
        XCTAssertEqual(a.faces, a.frames, "the upright clip has a face on every frame")
        XCTAssertEqual(b.faces, a.faces, "the sideways phone clip finds the face as often: \(b.faces) of \(b.frames)")
    }

    /// Writes the display matrix of an MP4's video track (the `tkhd` box, which FFmpeg reads as
    /// the stream's display matrix): a, b, c, d in 16.16 fixed point, no translation.
    static func setTrackMatrix(of path: String, a: Int32, b: Int32, c: Int32, d: Int32) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let range = data.range(of: Data("tkhd".utf8)) else { throw Skip.unavailable("no tkhd box in \(path)") }
        let version = data[range.upperBound]
        // version/flags (4), times and ids (20 or 32), reserved (8), layer..volume (8).
        let matrix = range.upperBound + 4 + (version == 1 ? 32 : 20) + 8 + 8
        let values: [Int32] = [a, b, 0, c, d, 0, 0, 0, 1 << 30]
        for (i, v) in values.enumerated() {
            let be = UInt32(bitPattern: v).bigEndian
            withUnsafeBytes(of: be) { data.replaceSubrange((matrix + 4 * i)..<(matrix + 4 * i + 4), with: $0) }
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
