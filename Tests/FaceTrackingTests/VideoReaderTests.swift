import FaceTracking
import Foundation
import TestSupport
import XCTest

final class VideoReaderTests: XCTestCase {
    /// Reads every frame, returning the timestamps (ms).
    private func timestamps(_ path: String) throws -> [Double] {
        let reader = try VideoReader(path: path)
        let frame = Image()
        var result: [Double] = []
        while let t = try reader.read(into: frame) {
            XCTAssertEqual(frame.width, reader.info.width)
            result.append(t)
        }
        return result
    }

    func testEveryFrameWithIncreasingTimestamps() throws {
        let path = try Fixtures.generated("astronaut-still.mp4")
        let reader = try VideoReader(path: path)
        XCTAssertEqual(reader.info.width, 512)
        XCTAssertEqual(reader.info.framesPerSecond, 25, accuracy: 0.01)
        XCTAssertEqual(reader.info.rotationDegrees, 0)
        let times = try timestamps(path)
        // 5 s at 25 fps. The last frames come out of the decoder's drain (frame threads, B-frames):
        // they must still be delivered, after the others, with their own timestamps.
        XCTAssertEqual(times.count, 125)
        XCTAssertEqual(times.first, 0)
        for (a, b) in zip(times, times.dropFirst()) { XCTAssertEqual(b - a, 40, accuracy: 0.5) }
    }

    func testPortraitRotationMetadataIsApplied() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let stored = dir.appendingPathComponent("stored-sideways.mp4").path
        let tagged = dir.appendingPathComponent("portrait-tagged.mp4").path
        // A 360x640 portrait clip stored sideways (640x360, turned counter-clockwise) with the tag
        // that makes ffmpeg show it upright (ffprobe: rotation=-90), as phones write it.
        // VideoOrientationTests compares every orientation with ffmpeg's own decode.
        try Fixtures.ffmpeg(["-loop", "1", "-i", try Fixtures.generated("astronaut.png"), "-t", "0.4", "-r", "10",
                             "-vf", "scale=360:640,setsar=1,transpose=2", "-c:v", "libx264", "-pix_fmt", "yuv420p", stored])
        try Fixtures.ffmpeg(["-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=270", tagged])
        let reader = try VideoReader(path: tagged)
        XCTAssertEqual(reader.info.rotationDegrees, 90, "turned 90° clockwise to be upright")
        XCTAssertEqual(reader.info.width, 360, "upright width")
        XCTAssertEqual(reader.info.height, 640, "upright height")
        let frame = Image()
        XCTAssertNotNil(try reader.read(into: frame))
        XCTAssertEqual(frame.width, 360)
        // Upright means the face is found (HOG finds upright faces only).
        let tracker = try FaceTracker(model: try LandmarkModel.load())
        XCTAssertNotNil(try tracker.process(frame).face)
    }

    /// A file whose first video stream is not the one a player shows (a still stored first):
    /// the reader decodes the stream ffmpeg picks (its best stream), wherever it is stored, and
    /// with the camera's stream first it reads that one as usual.
    func testTheStreamAPlayerShowsIsDecodedWhereverItIsStored() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let still = dir.appendingPathComponent("still.jpg").path
        try Fixtures.ffmpeg(["-i", try Fixtures.generated("astronaut.png"), "-vf", "scale=160:160", still])
        let moving = dir.appendingPathComponent("moving.mp4").path
        try Fixtures.ffmpeg(["-loop", "1", "-i", try Fixtures.generated("astronaut.png"), "-t", "1", "-r", "10",
                             "-c:v", "libx264", "-pix_fmt", "yuv420p", moving])
        let stillFirst = dir.appendingPathComponent("still-first.mkv").path
        try Fixtures.ffmpeg(["-i", still, "-i", moving, "-map", "0:v", "-map", "1:v", "-c:v:0", "mjpeg", "-c:v:1", "copy", stillFirst])
        let cameraFirst = dir.appendingPathComponent("camera-first.mkv").path
        try Fixtures.ffmpeg(["-i", moving, "-i", still, "-map", "0:v", "-map", "1:v", "-c:v:0", "copy", "-c:v:1", "mjpeg", cameraFirst])
        // The oracle: what ffmpeg itself decodes from each file when given no stream to pick.
        for path in [stillFirst, cameraFirst] {
            let shown = dir.appendingPathComponent(UUID().uuidString + ".raw").path
            try Fixtures.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "gray", shown])
            let shownBytes = try Data(contentsOf: URL(fileURLWithPath: shown)).count
            let reader = try VideoReader(path: path)
            XCTAssertEqual(reader.info.width, 512, path)
            let frame = Image()
            var frames = 0
            while try reader.read(into: frame) != nil { frames += 1 }
            XCTAssertEqual(frames, 10, "the camera's ten frames: \(path)")
            XCTAssertEqual(frames * 512 * 512, shownBytes, "the frames ffmpeg shows: \(path)")
        }
    }

    /// Each frame's timestamp is its presentation time as ffprobe reports it (best effort, from
    /// the stream's start), for a clip whose frame intervals vary and whose last frames come
    /// out of the decoder's delay (B-frames).
    func testTimestampsAreThoseFFprobeReports() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("vfr.mkv").path
        // Frames 40 ms apart, then about 100 ms, then about 33 ms (on the input's 40 ms grid): a
        // phone's variable frame rate.
        try Fixtures.ffmpeg(["-loop", "1", "-i", try Fixtures.generated("astronaut.png"), "-frames:v", "30", "-vf",
                             "scale=256:256,setpts='if(lt(N,10),N*0.04,if(lt(N,20),0.4+(N-10)*0.1,1.4+(N-20)*0.033))/TB'",
                             "-fps_mode", "vfr", "-c:v", "libx264", "-bf", "3", "-pix_fmt", "yuv420p", path])
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        probe.arguments = ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time:frame=best_effort_timestamp_time",
                           "-of", "csv=p=0", path]
        let pipe = Pipe()
        probe.standardOutput = pipe
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") else { throw Skip.unavailable("ffprobe is not installed") }
        try probe.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        let numbers = text.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .init(charactersIn: ","))) }
        // ffprobe prints the frames' times, then the stream's start time.
        guard let start = numbers.last, numbers.count == 31 else { return XCTFail("ffprobe printed \(text)") }
        let expected = numbers.dropLast().map { ($0 - start) * 1000 }
        let times = try timestamps(path)
        XCTAssertEqual(times.count, expected.count)
        for (got, want) in zip(times, expected) { XCTAssertEqual(got, want, accuracy: 0.5) }
        let intervals = Set(zip(times, times.dropFirst()).map { ($1 - $0).rounded() })
        XCTAssertGreaterThan(intervals.count, 1, "frame intervals vary: \(intervals.sorted())")
    }

    func testTruncatedAVIEndsCleanlyWithItsDecodableFrames() throws {
        let path = try Fixtures.shared("opencv-tree-noface-truncated.avi")
        let reader = try VideoReader(path: path)
        XCTAssertGreaterThan(reader.info.durationSeconds, 20, "the container claims 29.6 s")
        let times = try timestamps(path)
        XCTAssertEqual(times.count, 68)
        XCTAssertEqual(times, times.sorted())
    }

    func testBadFilesGiveClearErrors() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let text = dir.appendingPathComponent("text.mp4")
        try String(repeating: "this is not a video\n", count: 200).write(to: text, atomically: true, encoding: .utf8)
        let empty = dir.appendingPathComponent("empty.mp4")
        FileManager.default.createFile(atPath: empty.path, contents: Data())
        let truncated = dir.appendingPathComponent("truncated.mp4")
        let whole = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.generated("astronaut-still.mp4")))
        try whole.prefix(whole.count / 2).write(to: truncated)

        let cases: [(String, FaceTrackingError.Kind)] = [
            ("/nonexistent/clip.mp4", .notFound), (text.path, .unsupported), (empty.path, .unsupported),
        ]
        for (path, kind) in cases {
            XCTAssertThrowsError(try VideoReader(path: path)) { error in
                let e = error as? FaceTrackingError
                XCTAssertEqual(e?.kind, kind, "\(path): \(error)")
                XCTAssertTrue(e?.message.hasPrefix(path) ?? false, "the message names the file: \(error)")
            }
        }
        // ffmpeg writes the index (moov) last: half a file cannot be opened.
        XCTAssertThrowsError(try VideoReader(path: truncated.path)) { error in
            XCTAssertNotNil(error as? FaceTrackingError)
        }
    }

    func testWriterProducesAReadableVideo() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let path = dir.appendingPathComponent("out.mp4").path
        let writer = try VideoWriter(path: path, framesPerSecond: 10, width: 64, height: 48)
        for i in 0..<5 {
            let frame = try Image(width: 64, height: 48, color: Color(red: i * 40, green: 0, blue: 0))
            try writer.write(frame)
        }
        XCTAssertThrowsError(try writer.write(try Image(width: 32, height: 32, color: .black)), "wrong size")
        writer.close()
        XCTAssertEqual(try timestamps(path).count, 5)
    }
}
