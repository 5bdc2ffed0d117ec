import FaceTracking
import Foundation
import LivenessCommands
import LivenessCore
import LivenessKit
import LivenessRegress
import TestSupport
import XCTest

/// The looped-input check end to end. Oracles: the generator's truth (each replayed frame names
/// the frame it copies) and ffmpeg's `-stream_loop` (a clip played again from its start, so a
/// 2.00 s clip repeats at a lag of exactly 2.00 s).
final class LoopedInputTests: XCTestCase {
    /// The trace columns of `clip`, one dictionary per frame.
    private func trace(_ clip: String) throws -> [[String: String]] {
        let csv = try Fixtures.temporaryDirectory(self).appendingPathComponent("t.csv")
        XCTAssertEqual(LivenessCLI.run(["trace", clip, "--output", csv.path], console: Console.capturing()), 0)
        let lines = try String(contentsOf: csv, encoding: .utf8).split(separator: "\n").map(String.init)
        let header = try XCTUnwrap(lines.first).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return lines.dropFirst().map { line in
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(header, cells))
        }
    }

    /// attack-looped-stream replays its 0.5–2.5 s stretch from 2.5 s on. For each replayed frame
    /// the frame the detector names (`seconds − repeat_lag`) must show the same rendered frame
    /// as it (the same source frame in truth.json, within 3 frames = the check's 0.1 s lag
    /// tolerance) on at least 90 % of the frames.
    func testTheRepeatDetectorNamesTheFrameEachReplayedFrameCopies() throws {
        let clip = try Fixtures.generated("cases/attack-looped-stream/video.mp4")
        let truthURL = URL(fileURLWithPath: clip).deletingLastPathComponent().appendingPathComponent("truth.json")
        let truth = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: truthURL)) as? [String: Any])
        let frames = try XCTUnwrap(truth["frames"] as? [[String: Any]])
        let times = frames.map { ($0["t"] as? NSNumber)?.doubleValue ?? .nan }
        let sources = frames.enumerated().map { i, f in (f["sourceFrame"] as? Int) ?? i }
        let rows = try trace(clip)
        XCTAssertEqual(rows.count, frames.count)
        var replayed = 0, found = 0
        for (i, row) in rows.enumerated() where times[i] >= 2.5 {
            replayed += 1
            guard let lag = row["repeat_lag"].flatMap(Double.init) else { continue }
            let target = times[i] - lag
            let j = times.indices.min { abs(times[$0] - target) < abs(times[$1] - target) }!
            if abs(sources[j] - sources[i]) <= 3 { found += 1 }
        }
        XCTAssertEqual(replayed, 165)
        XCTAssertGreaterThanOrEqual(Double(found), 0.9 * Double(replayed), "\(found) of \(replayed) replayed frames")
    }

    /// Real footage: the first 2 s of vr-face2 (a talking face) re-encoded and played five times
    /// by ffmpeg is caught as a loop at a lag of 2.00 s, `loopSeconds` into the first repeat; the
    /// clip itself is not.
    func testAnFFmpegLoopOfARealClipIsCaughtAndTheClipItselfIsNot() throws {
        let source = try Fixtures.shared("vr-face2-talking-no-blink.mp4")
        let dir = try Fixtures.temporaryDirectory(self)
        let piece = dir.appendingPathComponent("piece.mp4").path, looped = dir.appendingPathComponent("looped.mp4").path
        try Fixtures.ffmpeg(["-v", "error", "-y", "-t", "2", "-i", source, "-an", "-c:v", "libx264", "-crf", "23", piece])
        try Fixtures.ffmpeg(["-v", "error", "-y", "-stream_loop", "4", "-i", piece, "-an", "-c:v", "libx264", "-crf", "23", looped])
        let model = try LandmarkModel.load()
        let run = try RecordingRun.analyse(path: looped, motion: nil, model: model)
        XCTAssertEqual(run.verdict.reason, .presentationAttack)
        XCTAssertEqual(run.evidence.looped.status, .looped)
        XCTAssertEqual(try XCTUnwrap(run.evidence.looped.lagSeconds), 2.0, accuracy: 0.05)
        // The first repeated frame is at 2.00 s; the run counts from the frame before it (1.96 s at
        // 25 fps), so the earliest verdict is loopSeconds later, 3.96 s.
        let seconds = Double(run.verdict.timestampMicroseconds) / 1e6
        XCTAssertGreaterThanOrEqual(seconds, 3.96 - 1e-9)
        XCTAssertLessThanOrEqual(seconds, 5.0)
        let live = try RecordingRun.analyse(path: source, motion: nil, model: model)
        XCTAssertEqual(live.evidence.looped.status, .live)
        XCTAssertLessThan(live.evidence.looped.longestRepeatSeconds, LivenessPolicy().loopSeconds)
    }
}
