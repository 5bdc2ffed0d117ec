import FaceTracking
import Foundation
import LivenessCore
import LivenessCommands
@testable import LivenessKit
import TestSupport
import XCTest

/// Inputs made to hurt (absurd frame rates, missing timestamps, audio only, names with
/// newlines) and outputs that cannot be written: each ends with a clear error and nothing is
/// lost silently. Every file is made here with ffmpeg from the generated sample.
final class HostileInputTests: XCTestCase {
    private func report(_ folder: URL) throws -> LivenessReport {
        try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: folder.appendingPathComponent("report.json")))
    }

    func testFramesWithoutTimestampsAreInvalidInputNotInventedTime() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let good = try Fixtures.generated("astronaut-still.mp4")
        // Every timestamp 0 (an MKV made so), and a raw H.264 stream with none at all.
        let zero = dir.appendingPathComponent("zero.mkv").path
        let raw = dir.appendingPathComponent("raw.h264").path
        try Fixtures.ffmpeg(["-i", good, "-c", "copy", "-bsf:v", "setts=ts=0", zero])
        try Fixtures.ffmpeg(["-i", good, "-c", "copy", "-bsf:v", "h264_mp4toannexb", raw])
        for path in [zero, raw] {
            let out = dir.appendingPathComponent("out-" + URL(fileURLWithPath: path).lastPathComponent)
            let console = Console.capturing()
            XCTAssertEqual(LivenessCLI.run(["analyze", path, "--output", out.path], console: console), 2)
            XCTAssertTrue(console.errors.contains("carry no timestamps"), console.errors)
            let folder = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: out.path).first)
            let recorded = try report(out.appendingPathComponent(folder))
            XCTAssertEqual(recorded.verdict.reason, .invalidInput)
            XCTAssertTrue(recorded.error?.contains("timestamps") ?? false, "\(String(describing: recorded.error))")
        }
    }

    func testAnAbsurdFrameRateIsRefusedBeforeTheFramesAreAnalysed() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let fast = dir.appendingPathComponent("fast.mp4").path
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=1000", "-t", "3", "-c:v", "libx264",
                             "-preset", "ultrafast", fast])
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", fast, "--output", dir.appendingPathComponent("out").path], console: console), 2)
        XCTAssertTrue(console.errors.contains("1000.0 frames per second, above the limit of 240"), console.errors)
        // trace applies the same limit.
        let trace = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["trace", fast, "--output", dir.appendingPathComponent("t.csv").path], console: trace), 2)
        XCTAssertTrue(trace.errors.contains("above the limit"), trace.errors)
    }

    func testFramesArrivingFasterThanTheLimitStopTheInput() throws {
        var budget = ResourceBudget(limits: .standard, boundDecoding: true)
        // 240 frames a second of 640×480 for 3 s are within the limits.
        for i in 0..<720 {
            XCTAssertNoThrow(try budget.count(path: "ok", width: 640, height: 480, timestamp: Int64(i) * 1_000_000 / 240))
        }
        // Frames 1 µs apart are not: the 241st within the first second stops the input.
        var dense = ResourceBudget(limits: .standard, boundDecoding: true)
        var stoppedAt: Int?
        for i in 0..<1000 {
            do { try dense.count(path: "dense", width: 64, height: 64, timestamp: Int64(i)) } catch {
                XCTAssertTrue(error.problem.contains("faster than the limit of 240"), error.problem)
                stoppedAt = i
                break
            }
        }
        XCTAssertEqual(stoppedAt, 240)
        // The decoding budget: 4K frames at 60 fps for longer than 22.8 s exceed 12,000 megapixels.
        var big = ResourceBudget(limits: .standard, boundDecoding: true)
        var stoppedAfter: Double?
        for i in 0..<3000 {
            do { try big.count(path: "4k", width: 3840, height: 2160, timestamp: Int64(i) * 1_000_000 / 60) } catch {
                stoppedAfter = Double(i) / 60
                break
            }
        }
        XCTAssertNotNil(stoppedAfter)
        XCTAssertGreaterThan(stoppedAfter ?? 0, 22.8, "a full 22.8 s session of 4K60 fits the budget")
        // A trace reads whole files: no decoding budget.
        var trace = ResourceBudget(limits: .standard, boundDecoding: false)
        for i in 0..<3000 { XCTAssertNoThrow(try trace.count(path: "4k", width: 3840, height: 2160, timestamp: Int64(i) * 1_000_000 / 60)) }
    }

    func testAnAudioOnlyFileSaysItHasNoVideoStream() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let audio = dir.appendingPathComponent("voice.mp4").path
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", audio])
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", audio, "--output", dir.appendingPathComponent("out").path], console: console), 2)
        XCTAssertTrue(console.errors.contains("no video stream in this file (it holds only audio)"), console.errors)
    }

    func testJSONOnStandardOutputErrorsOnStandardErrorAndNoFFmpegNoise() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let good = try Fixtures.generated("astronaut-still.mp4")
        let quoted = dir.appendingPathComponent("say \"cheese\".mp4").path
        FileManager.default.createFile(atPath: quoted, contents: Data())
        let truncated = dir.appendingPathComponent("truncated.mp4").path
        try Data(contentsOf: URL(fileURLWithPath: good)).prefix(20_000).write(to: URL(fileURLWithPath: truncated))
        let out = dir.appendingPathComponent("out").path
        // The executable, so that anything FFmpeg or libpng print on the real standard error shows.
        let run = try Fixtures.runLiveness(["analyze", quoted, truncated, good, "--output", out, "--json", "--jobs", "1"])
        XCTAssertEqual(run.status, 2, run.errors)
        let lines = run.output.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, run.output)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            XCTAssertNotNil(object, "each line is one JSON object: \(line)")
        }
        let errors = run.errors.split(separator: "\n").map(String.init)
        XCTAssertEqual(errors.count, 2, "one line per bad input and nothing else: \(run.errors)")
        XCTAssertTrue(errors.allSatisfy { $0.hasPrefix("error: ") }, run.errors)
        XCTAssertFalse(run.errors.contains("moov atom"), run.errors)
        let bad = try lines.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { ($0["error"] as? String) != nil }
        XCTAssertEqual(bad.count, 2, "the JSON line of a bad input carries its error")
        XCTAssertTrue(bad.contains { (($0["input"] as? [String: Any])?["path"] as? String) == quoted })
    }

    func testWriteErrorsAreReportedNotSwallowed() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let good = try Fixtures.generated("astronaut-still.mp4")
        let trace = try Fixtures.runLiveness(["trace", good, "--output", "/dev/full"])
        XCTAssertEqual(trace.status, 2)
        XCTAssertTrue(trace.errors.contains("/dev/full: cannot write: No space left on device"), trace.errors)
        let stdoutFull = try Fixtures.runLiveness(["trace", good], standardOutput: "/dev/full")
        XCTAssertEqual(stdoutFull.status, 2)
        XCTAssertTrue(stdoutFull.errors.contains("No space left on device"), stdoutFull.errors)
        let closed = try Fixtures.runLiveness(["trace", good], closeStandardOutput: true)
        XCTAssertEqual(closed.status, 2)
        XCTAssertTrue(closed.errors.contains("standard output"), closed.errors)
        let csv = dir.appendingPathComponent("t.csv").path
        XCTAssertEqual(try Fixtures.runLiveness(["trace", good, "--output", csv]).status, 0)
        let replay = try Fixtures.runLiveness(["replay", csv, "--json", "--output", "/dev/full"])
        XCTAssertEqual(replay.status, 2)
        XCTAssertTrue(replay.errors.contains("cannot write"), replay.errors)
        let analyze = try Fixtures.runLiveness(["analyze", good, "--trace", "/dev/full", "--output", dir.appendingPathComponent("out").path])
        XCTAssertEqual(analyze.status, 2)
        XCTAssertTrue(analyze.errors.contains("/dev/full: cannot write"), analyze.errors)
        let summary = try Fixtures.runLiveness(["analyze", good, "--output", dir.appendingPathComponent("out2").path],
                                               standardOutput: "/dev/full")
        XCTAssertEqual(summary.status, 2)
        XCTAssertTrue(summary.errors.contains("cannot write to standard output"), summary.errors)
    }

    func testSameNamedInputsFromOtherFoldersNeverOverwriteEachOther() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let good = try Fixtures.generated("astronaut-still.mp4")
        for folder in ["a", "b"] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(folder), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: good, toPath: dir.appendingPathComponent("\(folder)/clip.mp4").path)
        }
        let out = dir.appendingPathComponent("out").path
        let a = dir.appendingPathComponent("a/clip.mp4").path, b = dir.appendingPathComponent("b/clip.mp4").path
        XCTAssertEqual(LivenessCLI.run(["analyze", a, "--output", out], console: .capturing()), 1)
        XCTAssertEqual(LivenessCLI.run(["analyze", b, "--output", out], console: .capturing()), 1)
        let folders = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        XCTAssertEqual(folders.count, 2, "\(folders)")
        let owners = try folders.map { try report(URL(fileURLWithPath: out).appendingPathComponent($0)).input.path }
        XCTAssertEqual(Set(owners), [a, b])
        // A rerun of b finds its own report again.
        let again = Console.capturing()
        _ = LivenessCLI.run(["analyze", b, "--output", out], console: again)
        XCTAssertTrue(again.printed.contains("already complete"), again.printed)
    }

    func testEmptyOutputNameEmptyFoldersAndNewlinesInNames() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let good = try Fixtures.generated("astronaut-still.mp4")
        let empty = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", good, "--output", ""], console: empty), 2)
        XCTAssertTrue(empty.errors.contains("--output needs a folder name"), empty.errors)

        let nothing = dir.appendingPathComponent("nothing")
        try FileManager.default.createDirectory(at: nothing, withIntermediateDirectories: true)
        let folder = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", nothing.path, "--output", dir.appendingPathComponent("o").path], console: folder), 2)
        XCTAssertTrue(folder.errors.contains("no video or image files in this folder"), folder.errors)
        let regress = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["regress", nothing.path, "--no-real"], console: regress), 2)
        XCTAssertTrue(regress.errors.contains("no regression cases here"), regress.errors)

        let odd = dir.appendingPathComponent("new\nline.mp4").path
        try FileManager.default.copyItem(atPath: good, toPath: odd)
        let console = Console.capturing()
        _ = LivenessCLI.run(["analyze", odd, "--output", dir.appendingPathComponent("o2").path], console: console)
        XCTAssertEqual(console.printed.split(separator: "\n").count, 1, "one line: \(console.printed)")
        XCTAssertTrue(console.printed.contains("new\\nline.mp4"), console.printed)
    }

    func testTheAnnotatedVideoIsReleasedLikeTheStills() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let still = try Fixtures.generated("astronaut-still.mp4")
        let out = dir.appendingPathComponent("out")
        // A failed session keeps no annotated video unless asked.
        XCTAssertEqual(LivenessCLI.run(["analyze", still, "--output", out.path, "--annotate"], console: .capturing()), 1)
        let folder = out.appendingPathComponent("astronaut-still")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("annotated.mp4").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("tmp") }, [])
        XCTAssertEqual(LivenessCLI.run(["analyze", still, "--output", out.path, "--annotate-failed", "--force"],
                                       console: .capturing()), 1)
        let video = folder.appendingPathComponent("annotated.mp4").path
        let mode = (try FileManager.default.attributesOfItem(atPath: video)[.posixPermissions] as? NSNumber)?.intValue
        XCTAssertEqual(mode, 0o600, "it shows the face on every frame")
    }
}

