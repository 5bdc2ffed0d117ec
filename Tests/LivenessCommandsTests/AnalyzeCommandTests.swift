import FaceTracking
import Foundation
import LivenessCore
import LivenessCommands
import LivenessBatch
import LivenessKit
import LivenessRegress
import TestSupport
import XCTest

final class AnalyzeCommandTests: XCTestCase {
    private func report(_ folder: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent("report.json"))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func mode(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// Every `must` of ../shared/recordings/labels.json, with the default policy.
    func testEveryMustOfTheLabelledRecordingsHolds() throws {
        let labels = try Fixtures.shared("labels.json")
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: labels))) as? [String: Any])
        let recordings = try XCTUnwrap(root["recordings"] as? [[String: Any]])
        let withMust = recordings.filter { $0["must"] != nil }
        XCTAssertGreaterThanOrEqual(withMust.count, 10)
        let out = try Fixtures.temporaryDirectory(self)
        let inputs = withMust.map { Fixtures.sharedRecordings.appendingPathComponent($0["file"] as! String).path }
        let runner = BatchRunner(inputs: InputList(inputs), outputDirectory: out.path, options: AnalyzeOptions(),
                                 model: try LandmarkModel.load())
        let results = runner.run(jobs: 2) { _, _, _ in }
        XCTAssertEqual(results.count, withMust.count)
        for (label, result) in zip(withMust, results) {
            let name = label["file"] as! String
            let must = label["must"] as! [String: Any]
            XCTAssertNil(result.error, "\(name): \(String(describing: result.error))")
            let report = try XCTUnwrap(result.report, name)
            if let verdict = must["verdict"] as? String { XCTAssertEqual(report.verdict.status.rawValue, verdict, "\(name): \(report.summary)") }
            if let reason = must["reason"] as? String { XCTAssertEqual(report.verdict.reason?.rawValue, reason, "\(name): \(report.summary)") }
            if let blink = must["blinkCredited"] as? Bool { XCTAssertEqual(report.actions.blink.credited, blink, "\(name): \(report.summary)") }
            if let turn = must["turnCredited"] as? Bool { XCTAssertEqual(report.actions.turnHead.credited, turn, "\(name): \(report.summary)") }
            if let faces = must["faces"] as? Int {
                // Stills: the face count of the single frame.
                let frame = try FaceTracker(model: try LandmarkModel.load()).process(try Image(contentsOfFile: result.input))
                XCTAssertEqual(frame.faceCount, faces, name)
                XCTAssertEqual(report.frames.tracked, faces > 0 ? 1 : 0, name)
            }
        }
    }

    func testPassedVerdictReleasesPrivateStillsAndStopsDecoding() throws {
        let input = try Fixtures.shared("st-ref2-talking-turns.mp4")
        let out = try Fixtures.temporaryDirectory(self)
        let console = Console.capturing()
        let status = LivenessCLI.run(["analyze", input, "--output", out.path, "--plot"], console: console)
        XCTAssertEqual(status, 0, console.printed + console.errors)
        let folder = out.appendingPathComponent("st-ref2-talking-turns")
        let json = try report(folder)
        XCTAssertEqual((json["verdict"] as? [String: Any])?["status"] as? String, "passed")
        for still in ["autoshot.jpg", "snapshot.jpg"] {
            let url = folder.appendingPathComponent(still)
            XCTAssertEqual(try mode(url), 0o600, "\(still) is biometric data")
            XCTAssertEqual(try Image(contentsOfFile: url.path).width, 512)
        }
        XCTAssertEqual((json["snapshot"] as? [String: Any])?["path"] as? String, folder.appendingPathComponent("snapshot.jpg").path)
        // The clip has 200 frames; the verdict comes well before the end and decoding stops there.
        let frames = try XCTUnwrap(json["frames"] as? [String: Any])
        XCTAssertLessThan(frames["read"] as! Int, 150)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("timeline.png").path))
        XCTAssertTrue(console.printed.contains("passed in"), console.printed)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp-") }
        XCTAssertEqual(leftovers, [])
    }

    func testFailedVerdictReleasesNoStills() throws {
        let input = try Fixtures.generated("astronaut-still.mp4")
        let out = try Fixtures.temporaryDirectory(self)
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", input, "--output", out.path, "--json"], console: console), 1)
        let folder = out.appendingPathComponent("astronaut-still")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        // The report and the folder's claim (`.input`: which input the folder belongs to), no stills.
        XCTAssertEqual(names, [".input", "report.json"])
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent(".input"), encoding: .utf8), input)
        let line = try XCTUnwrap(console.printed.split(separator: "\n").first)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let verdict = try XCTUnwrap(json["verdict"] as? [String: Any])
        XCTAssertEqual(verdict["status"] as? String, "failed")
        XCTAssertEqual(verdict["reason"] as? String, "presentationAttack")  // a still encoded as video: frozen
        XCTAssertTrue(json["snapshot"] is NSNull)
    }

    /// The service draws each session's seed from all 64 bits and writes it into the report:
    /// `analyze --seed` takes any of them, so any session's report can be rerun from its file.
    func testAnySeedTheServiceWritesIsAcceptedAndKept() throws {
        let input = try Fixtures.generated("astronaut-still.mp4")
        let out = try Fixtures.temporaryDirectory(self)
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", input, "--output", out.path, "--json", "--seed", "18446744073709551615"], console: console), 1)
        let line = try XCTUnwrap(console.printed.split(separator: "\n").first)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual((json["seed"] as? NSNumber)?.uint64Value, UInt64.max)
        let refused = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", input, "--output", out.path, "--seed", "18446744073709551616"], console: refused), 2)
        XCTAssertTrue(refused.errors.contains("needs an integer in 0...18446744073709551615"), refused.errors)
    }

    func testBadInputsGiveExitTwoAndOneLineEachWhileGoodOnesAreAnalysed() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let text = dir.appendingPathComponent("notes.mp4")
        try String(repeating: "not a video\n", count: 100).write(to: text, atomically: true, encoding: .utf8)
        let empty = dir.appendingPathComponent("empty.mp4")
        FileManager.default.createFile(atPath: empty.path, contents: Data())
        let truncated = dir.appendingPathComponent("truncated.mp4")
        let whole = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.generated("astronaut-still.mp4")))
        try whole.prefix(whole.count / 3).write(to: truncated)
        let missing = dir.appendingPathComponent("missing.mp4").path
        let good = try Fixtures.generated("astronaut-still.mp4")
        let out = dir.appendingPathComponent("out")
        let console = Console.capturing()
        let status = LivenessCLI.run(["analyze", missing, text.path, good, empty.path, truncated.path, "--output", out.path,
                                      "--jobs", "2"], console: console)
        XCTAssertEqual(status, 2)
        // Standard output holds the one result; each problem is said once, on standard error.
        let lines = console.printed.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 1, console.printed)
        XCTAssertTrue(lines.contains { $0.hasPrefix(good) && $0.contains("failed: presentationAttack") }, "\(lines)")
        let errors = console.errors.split(separator: "\n").map(String.init)
        XCTAssertEqual(errors.count, 4, console.errors)
        for bad in [missing, text.path, empty.path, truncated.path] {
            let line = errors.filter { $0.contains(bad) }
            XCTAssertEqual(line.count, 1, "one line for \(bad): \(errors)")
            XCTAssertTrue(line.first?.hasPrefix("error: \(bad): ") ?? false, "\(line)")
        }
        // The failure is recorded where the report would be.
        let recorded = try report(out.appendingPathComponent("empty"))
        XCTAssertEqual((recorded["verdict"] as? [String: Any])?["reason"] as? String, "invalidInput")
    }

    func testRerunSkipsCompleteReportsUnlessForced() throws {
        let input = try Fixtures.generated("astronaut-still.mp4")
        let out = try Fixtures.temporaryDirectory(self)
        let first = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", input, "--output", out.path], console: first), 1)
        let second = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", input, "--output", out.path], console: second), 1)
        XCTAssertTrue(second.printed.contains("already complete"), second.printed)
        let third = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", input, "--output", out.path, "--force"], console: third), 1)
        XCTAssertFalse(third.printed.contains("already complete"), third.printed)
    }

    func testShardsSplitABatchWithoutOverlap() {
        let paths = (0..<40).map { "/archive/session-\($0).mp4" }
        let all = InputList(paths)
        let shards = (0..<3).map { all.shard($0, of: 3).entries.map(\.path) }
        XCTAssertEqual(Set(shards.flatMap { $0 }), Set(paths))
        XCTAssertEqual(shards.map(\.count).reduce(0, +), paths.count)
        XCTAssertTrue(shards.allSatisfy { !$0.isEmpty })
        // The same on another machine, and whatever the order of the arguments.
        XCTAssertEqual(InputList(paths.reversed()).shard(1, of: 3).entries.map(\.path).sorted(), shards[1].sorted())
    }

    func testDuplicateNamesGetDistinctFolders() {
        let list = InputList(["/a/clip.mp4", "/b/clip.mp4", "/c/clip.mov"])
        XCTAssertEqual(list.entries.map(\.name), ["clip", "clip-2", "clip-3"])
    }

    func testMotionSidecarErrorsNameTheLine() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let file = dir.appendingPathComponent("motion.csv")
        try "t,x,y,z\n0.0,0,0,0\n0.1,0,abc,0\n".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try MotionSamples.load(file.path)) { error in
            XCTAssertTrue("\(error)".contains("motion.csv:3"), "\(error)")
        }
        try "t,x,y,z\n0.2,0,0,0\n0.1,0,0,0\n".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try MotionSamples.load(file.path)) { error in
            XCTAssertTrue("\(error)".contains("does not increase"), "\(error)")
        }
        try "t,x,y,z\n0.0,0.1,0.0,0.0\n0.05,0,0.2,0\n".write(to: file, atomically: true, encoding: .utf8)
        let samples = try MotionSamples.load(file.path)
        XCTAssertEqual(samples.samples.count, 2)
        XCTAssertEqual(samples.samples[1].degreesPerSecond, 0.2 * 180 / .pi, accuracy: 1e-9)
    }
}

final class AnalyzeOutputsTests: XCTestCase {
    /// The generated cases these tests use are rendered on demand (fast when up to date).
    override func setUpWithError() throws {
        let cases = Fixtures.packageRoot.appendingPathComponent("Recordings/cases").path
        do {
            try RegressSuite.generate(directory: cases, model: try LandmarkModel.load()) { _ in }
        } catch {
            throw Skip.unavailable("the generated cases cannot be produced: \(error)")
        }
    }

    func testAnnotatedVideoHasAFrameForEveryFrameReadAndThePlotIsAPNG() throws {
        let input = try Fixtures.generated("astronaut-still.mp4")
        let out = try Fixtures.temporaryDirectory(self)
        let console = Console.capturing()
        _ = LivenessCLI.run(["analyze", input, "--output", out.path, "--annotate-failed", "--plot", "--trace", out.appendingPathComponent("t.csv").path],
                            console: console)
        let folder = out.appendingPathComponent("astronaut-still")
        let reader = try VideoReader(path: folder.appendingPathComponent("annotated.mp4").path)
        XCTAssertEqual(reader.info.width, 512)
        var frames = 0
        let frame = Image()
        while try reader.read(into: frame) != nil { frames += 1 }
        // The still fails as frozen input at 1.52 s (frame 38 at 25 fps): decoding stops there.
        let report = try JSONDecoder().decode(LivenessReport.self, from: Data(contentsOf: folder.appendingPathComponent("report.json")))
        XCTAssertEqual(report.verdict.seconds, 1.52)
        XCTAssertEqual(frames, 39)  // frames 0…38 at 25 fps
        XCTAssertEqual(report.frames.read, 39)
        let png = try Data(contentsOf: folder.appendingPathComponent("timeline.png"))
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        XCTAssertEqual(try Image(encoded: [UInt8](png)).width, 1280)
        // The trace written alongside replays to the same verdict.
        let replay = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["replay", out.appendingPathComponent("t.csv").path], console: replay), 1)
        XCTAssertTrue(replay.printed.contains("failed: presentationAttack after 1.52 s"), replay.printed)
    }

    func testTheFullSidecarStopsTheTurnThatTheCameraMade() throws {
        let video = try Fixtures.generated("cases/camera-pan-20dps/video.mp4")
        let sidecar = try Fixtures.generated("cases/camera-pan-20dps/motion.csv")
        let dir = try Fixtures.temporaryDirectory(self)
        let console = Console.capturing()
        _ = LivenessCLI.run(["analyze", video, "--motion", sidecar, "--output", dir.path, "--json"], console: console)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(console.printed.utf8)) as? [String: Any])
        let frames = try XCTUnwrap(json["frames"] as? [String: Any])
        XCTAssertGreaterThan(frames["rotating"] as! Int, 10, "the pan's frames are not credited")
        XCTAssertEqual(((json["actions"] as? [String: Any])?["turnHead"] as? [String: Any])?["credited"] as? Bool, false)
    }
}

final class InputListTests: XCTestCase {
    func testFilesFoundInADirectoryAreNamedByTheirPathBelowIt() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        for path in ["alice/session.mp4", "bob/session.mp4", "bob/notes.txt", "carol.MOV"] {
            let url = dir.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: url.path, contents: Data([0]))
        }
        let list = InputList([dir.path])
        XCTAssertEqual(list.entries.map(\.name), ["alice-session", "bob-session", "carol"])
        XCTAssertEqual(list.entries.map(\.path), ["alice/session.mp4", "bob/session.mp4", "carol.MOV"].map { dir.path + "/" + $0 })
    }
}
