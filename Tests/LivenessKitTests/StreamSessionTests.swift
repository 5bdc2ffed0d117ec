import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import TestSupport
import XCTest

/// The push session: a recording pushed frame by frame must give exactly what `analyze` gives,
/// and a bad frame is refused without changing the session.
final class StreamSessionTests: XCTestCase {
    /// The events and verdict of analysing `path` offline, with the verdict events that ending
    /// the input adds when no frame decided it.
    private func analyse(_ path: String, model: LandmarkModel) throws -> (events: [LivenessEvent], machine: LivenessMachine) {
        let source = try FrameSource(path: path)
        let session = try AnalysisSession(source: source, model: model, policy: LivenessPolicy(), seed: 1, stopAtVerdict: true,
                                          rotation: VideoRotationEstimator(width: source.width, height: source.height))
        var events: [LivenessEvent] = []
        let outcome = try session.run { events += $0.events }
        if !events.contains(where: { if case .verdict = $0 { return true } else { return false } }) {
            events += [.verdict(try XCTUnwrap(outcome.machine.verdict)), .phase(.done)]
        }
        return (events, outcome.machine)
    }

    /// Pushes every frame of `path` with its timestamp as a camera service would: the decoder's
    /// own 4:2:0 planes as I420 bytes (written by ffmpeg, one file for the clip), so that the
    /// session sees the very pictures `analyze` decodes; then finishes with `inputEnded` when no
    /// verdict came.
    private func push(_ path: String, model: LandmarkModel) throws -> (events: [LivenessEvent], session: StreamSession) {
        let reader = try VideoReader(path: path)  // the frames' timestamps
        let planes = try Fixtures.temporaryDirectory(self).appendingPathComponent("planes.yuv").path
        try Fixtures.ffmpeg(["-i", path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", planes])
        let file = try XCTUnwrap(FileHandle(forReadingAtPath: planes))
        defer { try? file.close() }
        let width = reader.info.width, height = reader.info.height
        let session = try StreamSession(model: model)
        let frame = Image()
        var events: [LivenessEvent] = []
        while let milliseconds = try reader.read(into: frame) {
            let bytes = try XCTUnwrap(try file.read(upToCount: width * height * 3 / 2))
            XCTAssertEqual(bytes.count, width * height * 3 / 2, "ffmpeg wrote as many frames as the reader decodes")
            let t = Int64((milliseconds * 1000).rounded())
            let update = try bytes.withUnsafeBytes {
                try session.push(StreamFrame(content: .pixels($0, format: .i420, width: width, height: height, bytesPerRow: width),
                                             timestampMicroseconds: t))
            }
            events += update.events
            if session.verdict != nil { break }
        }
        if session.verdict == nil { events += session.finish(.inputEnded) }
        return (events, session)
    }

    func testARecordingPushedFrameByFrameGivesTheEventsAndVerdictOfAnalyze() throws {
        let model = try LandmarkModel.load()
        var clips = [try Fixtures.generated("astronaut-still.mp4")]
        for name in ["cases/camera-pan-20dps/video.mp4", "cases/blink-then-turn/video.mp4"] {
            if let path = try? Fixtures.generated(name) { clips.append(path) }
        }
        if let real = try? Fixtures.shared("st-ref2-talking-turns.mp4") { clips.append(real) }
        XCTAssertGreaterThanOrEqual(clips.count, 3)
        for clip in clips {
            let offline = try analyse(clip, model: model)
            let pushed = try push(clip, model: model)
            XCTAssertEqual(pushed.events, offline.events, "\(clip): the stream's events differ from analyze's")
            XCTAssertEqual(pushed.session.verdict, offline.machine.verdict, clip)
            XCTAssertEqual(pushed.session.machine.evidence, offline.machine.evidence, clip)
        }
    }

    func testStillsAreReleasedOnlyWithAPassAndTheReportSaysStream() throws {
        let model = try LandmarkModel.load()
        let failing = try push(try Fixtures.generated("astronaut-still.mp4"), model: model).session
        XCTAssertEqual(failing.verdict?.status, .failed)
        XCTAssertNil(failing.stills().autoshot)
        let report = failing.report(name: "stream:test")
        XCTAssertEqual(report.input.kind, .stream)
        XCTAssertEqual(failing.verdict?.reason, .presentationAttack)  // a still pushed as a stream: frozen at 1.52 s
        XCTAssertEqual(report.input.frames, 39)
        XCTAssertEqual(report.input.width, 512)
        let passing = try push(try Fixtures.shared("st-ref2-talking-turns.mp4"), model: model).session
        XCTAssertEqual(passing.verdict?.status, .passed)
        let stills = passing.stills()
        XCTAssertEqual(stills.autoshot.map { Array($0.prefix(3)) }, [0xFF, 0xD8, 0xFF])
        XCTAssertEqual(try Image(encoded: try XCTUnwrap(stills.snapshot)).width, passing.report(name: "s").input.width)
        // After the verdict frames are counted, not processed.
        let frame = try Image(width: 512, height: 512, color: .black)
        let update = try frame.withBGRBytes { bytes, stride in
            try passing.push(StreamFrame(content: .pixels(bytes, format: .bgr, width: 512, height: 512, bytesPerRow: stride),
                                         timestampMicroseconds: 60_000_000))
        }
        XCTAssertFalse(update.processed)
        XCTAssertEqual(update.events, [])
        XCTAssertEqual(passing.report(name: "s").frames.ignoredAfterVerdict, 1)
    }

    func testRefusedFramesChangeNothing() throws {
        let session = try StreamSession(model: try LandmarkModel.load())
        let frame = try Image(contentsOfFile: try Fixtures.generated("astronaut.png"))
        func push(_ t: Int64) throws(StreamError) -> StreamSession.Update {
            var result: Result<StreamSession.Update, StreamError>!
            frame.withBGRBytes { bytes, stride in
                do throws(StreamError) {
                    result = .success(try session.push(StreamFrame(content: .pixels(bytes, format: .bgr, width: frame.width,
                                                                                    height: frame.height, bytesPerRow: stride),
                                                                   timestampMicroseconds: t)))
                } catch { result = .failure(error) }
            }
            return try result.get()
        }
        _ = try push(1_000_000)
        XCTAssertThrowsError(try push(1_000_000)) { XCTAssertEqual(($0 as? StreamError)?.code, .nonIncreasingTimestamp) }
        XCTAssertThrowsError(try push(900_000)) { XCTAssertEqual(($0 as? StreamError)?.code, .nonIncreasingTimestamp) }
        XCTAssertThrowsError(try push(1_001_000)) { XCTAssertEqual(($0 as? StreamError)?.code, .tooFast) }
        // Issue 27: timestamps of 2^61 µs and beyond answered `internal`; they are the client's error.
        for t in [Int64(1) << 61, Int64.max, Int64.min] {
            XCTAssertThrowsError(try push(t)) { error in
                XCTAssertEqual((error as? StreamError)?.code, .invalidFrame, "\(t)")
                XCTAssertTrue((error as? StreamError)?.isRecoverable ?? false)
            }
        }
        let garbage: [UInt8] = Array("not an image at all".utf8)
        XCTAssertThrowsError(try garbage.withUnsafeBytes { bytes in
            try session.push(StreamFrame(content: .encoded(bytes), timestampMicroseconds: 2_000_000))
        }) { error in
            XCTAssertEqual((error as? StreamError)?.code, .invalidFrame)
            XCTAssertTrue((error as? StreamError)?.isRecoverable ?? false)
        }
        let short = [UInt8](repeating: 0, count: 100)
        XCTAssertThrowsError(try short.withUnsafeBytes { bytes in
            try session.push(StreamFrame(content: .pixels(bytes, format: .bgr, width: 64, height: 64, bytesPerRow: 192),
                                         timestampMicroseconds: 2_000_000))
        }) { XCTAssertEqual(($0 as? StreamError)?.code, .invalidFrame) }
        XCTAssertEqual(session.framesAccepted, 1, "refused frames are not counted")
        XCTAssertEqual(try push(1_040_000).frameIndex, 1, "the session goes on")
    }

    func testNV12AndJPEGFramesAreUsable() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let photo = try Fixtures.generated("astronaut.png")
        // ffmpeg's own conversions of the same picture: NV12 bytes, and the BGR it makes of them
        // (the image keeps the planes and converts them as ffmpeg does, byte for byte).
        let nv12 = dir.appendingPathComponent("f.nv12").path
        let bgr = dir.appendingPathComponent("f.bgr").path
        try Fixtures.ffmpeg(["-i", photo, "-f", "rawvideo", "-pix_fmt", "nv12", nv12])
        try Fixtures.ffmpeg(["-f", "rawvideo", "-pix_fmt", "nv12", "-s", "512x512", "-i", nv12, "-f", "rawvideo",
                             "-pix_fmt", "bgr24", bgr])
        let yuv = [UInt8](try Data(contentsOf: URL(fileURLWithPath: nv12)))
        let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bgr)))
        let image = try yuv.withUnsafeBytes { try Image(pixels: $0, width: 512, height: 512, bytesPerRow: 512, format: .nv12) }
        let ours = image.withBGRBytes { p, stride in (0..<512).flatMap { y in Array(p[(y * stride)..<(y * stride + 1536)]) } }
        let mean = Double(zip(ours, reference).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(ours.count)
        XCTAssertEqual(mean, 0, "NV12 -> BGR differs from ffmpeg's conversion by \(mean) levels on average")
        // Pushed as NV12, the face is found as on the BGR frame.
        let session = try StreamSession(model: try LandmarkModel.load())
        var hud: HUDState?
        for i in 0..<12 {
            let update = try yuv.withUnsafeBytes { bytes in
                try session.push(StreamFrame(content: .pixels(bytes, format: .nv12, width: 512, height: 512, bytesPerRow: 512),
                                             timestampMicroseconds: Int64(i) * 40_000))
            }
            hud = update.hud
        }
        XCTAssertEqual(session.machine.evidence.framesTracked, 12)
        XCTAssertNotEqual(hud, .noFace)
        // JPEG bytes (made by ffmpeg) pushed as they come from a browser.
        let jpeg = dir.appendingPathComponent("f.jpg").path
        try Fixtures.ffmpeg(["-i", photo, "-q:v", "3", jpeg])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: jpeg)))
        let update = try bytes.withUnsafeBytes { raw in
            try session.push(StreamFrame(content: .encoded(raw), timestampMicroseconds: 12 * 40_000))
        }
        XCTAssertTrue(update.processed)
        XCTAssertEqual(session.machine.evidence.framesTracked, 13)
    }
}
