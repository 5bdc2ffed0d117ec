import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Issue 27, "Files: nothing lost": the command line as a careless user and an interrupted run
/// meet it. The oracle is the file system itself: the bytes of inputs and of earlier outputs,
/// which files exist, and what each report says it judged.
final class FileSafetyTests: XCTestCase {
    private var dir: URL!
    private let fm = FileManager.default

    override func setUpWithError() throws {
        dir = try Fixtures.temporaryDirectory(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func copy(_ source: String, to name: String) throws -> String {
        let target = path(name)
        try fm.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try fm.copyItem(atPath: source, toPath: target)
        return target
    }

    private func run(_ arguments: [String]) throws -> Fixtures.Run {
        let previous = fm.currentDirectoryPath
        fm.changeCurrentDirectoryPath(dir.path)
        defer { fm.changeCurrentDirectoryPath(previous) }
        return try Fixtures.runLiveness(arguments)
    }

    /// Every file below the test's folder whose name marks it as a temporary.
    private func temporaries() -> [String] {
        (fm.enumerator(atPath: dir.path)?.allObjects as? [String] ?? []).filter { $0.contains(".tmp-") }
    }

    private func report(_ folder: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(folder + "/report.json")))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testAnOutputNamingTheInputIsRefusedAndTheInputKept() throws {
        let input = try copy(try Fixtures.generated("astronaut-still.mp4"), to: "in.mp4")
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        try fm.createSymbolicLink(atPath: path("link.mp4"), withDestinationPath: input)
        XCTAssertEqual(link(input, path("hard.mp4")), 0)
        let attempts: [[String]] = [
            ["analyze", "in.mp4", "--trace", "in.mp4"],
            ["analyze", "in.mp4", "--trace", "./hard.mp4"],
            ["trace", "in.mp4", "--output", "in.mp4"],
            ["trace", "link.mp4", "--output", path("in.mp4")],
            ["trace", "in.mp4", "--output", "m.json", "--motion", "m.json"],
        ]
        FileManager.default.createFile(atPath: path("m.json"), contents: Data("{}".utf8))
        for arguments in attempts {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertTrue(result.errors.contains("names the input"), "\(arguments): \(result.errors)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), original, "\(arguments) changed the input")
        }
        XCTAssertEqual(try String(contentsOfFile: path("m.json"), encoding: .utf8), "{}")
        // An input inside its own output folder, named as one of the folder's files: the folder of
        // out/annotated/annotated.mp4 is out/annotated, where --annotate writes annotated.mp4.
        let inside = try copy(try Fixtures.generated("astronaut-still.mp4"), to: "out/annotated/annotated.mp4")
        let result = try run(["analyze", inside, "--output", "out", "--annotate", "--annotate-failed"])
        XCTAssertEqual(result.status, 2, result.errors)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: inside)), original)
        // A replay's output naming its trace.
        XCTAssertEqual(try run(["trace", "in.mp4", "--output", "t.csv"]).status, 0)
        let trace = try Data(contentsOf: URL(fileURLWithPath: path("t.csv")))
        XCTAssertEqual(try run(["replay", "t.csv", "--output", "t.csv"]).status, 2)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("t.csv"))), trace)
    }

    func testAFailedRunLeavesTheFileItWouldHaveReplacedAsItWas() throws {
        try Data("old trace\n".utf8).write(to: URL(fileURLWithPath: path("t.csv")))
        let input = try Fixtures.generated("astronaut-still.mp4")
        let result = try run(["trace", input, "--output", "t.csv", "--motion", "/nonexistent/motion.csv"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(try String(contentsOfFile: path("t.csv"), encoding: .utf8), "old trace\n")
        XCTAssertEqual(temporaries(), [])
        // A temporary that a killed run (a process no longer running) left is removed by the next.
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        dead.waitUntilExit()
        let stale = path("t.csv.tmp-\(dead.processIdentifier)")
        try Data("partial".utf8).write(to: URL(fileURLWithPath: stale))
        XCTAssertEqual(try run(["trace", input, "--output", "t.csv"]).status, 0)
        XCTAssertFalse(fm.fileExists(atPath: stale), "the stale temporary of a dead process stays")
        XCTAssertTrue(try String(contentsOfFile: path("t.csv"), encoding: .utf8).hasPrefix("frame,seconds,"))
        XCTAssertEqual(temporaries(), [])
    }

    /// A long clip the engine cannot finish before it is signalled: the portrait held for 120 s.
    private func longClip() throws -> String {
        let clip = path("long.mp4")
        try Fixtures.ffmpeg(["-loop", "1", "-i", try Fixtures.generated("astronaut.png"), "-t", "120", "-r", "25",
                             "-vf", "scale=320:320", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip])
        return clip
    }

    /// Starts the engine, waits until a temporary file appears (the run is writing), sends
    /// `signal`; returns the exit status and standard error.
    private func interrupt(_ arguments: [String], with signal: Int32) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Fixtures.livenessExecutable())
        process.arguments = arguments
        process.currentDirectoryURL = dir
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)  // a hang guard, not a speed bound
        while temporaries().isEmpty && process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(process.isRunning, "the run ended before it could be interrupted")
        kill(process.processIdentifier, signal)
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    func testAnInterruptedTraceLeavesNoTemporaryAndTheOldFile() throws {
        let clip = try longClip()
        try Data("old trace\n".utf8).write(to: URL(fileURLWithPath: path("t.csv")))
        let (status, errors) = try interrupt(["trace", clip, "--output", "t.csv"], with: SIGTERM)
        XCTAssertEqual(status, 128 + SIGTERM, errors)
        XCTAssertTrue(errors.contains("interrupted by SIGTERM"), errors)
        XCTAssertEqual(try String(contentsOfFile: path("t.csv"), encoding: .utf8), "old trace\n")
        XCTAssertEqual(temporaries(), [])
    }

    func testAnInterruptedAnalysisSaysSoInItsReportAndARerunRedoesIt() throws {
        let clip = try longClip()
        // A policy under which the portrait is never judged before the end (no frozen check).
        try Data(#"{"frozenCheck": 0, "loopCheck": 0, "scanCapSeconds": 300}"#.utf8).write(to: URL(fileURLWithPath: path("p.json")))
        let arguments = ["analyze", clip, "--policy", "p.json", "--allow-weaker-policy", "--annotate", "--annotate-failed",
                         "--output", "out", "--trace", "t.csv"]
        let (status, errors) = try interrupt(arguments, with: SIGINT)
        XCTAssertEqual(status, 128 + SIGINT, errors)
        XCTAssertTrue(errors.contains("0 of 1 inputs analysed"), errors)
        XCTAssertEqual(temporaries(), [], "temporaries left: the annotated video or the trace")
        XCTAssertFalse(fm.fileExists(atPath: path("out/long/annotated.mp4")))
        XCTAssertFalse(fm.fileExists(atPath: path("t.csv")), "a trace of part of the input looks whole")
        let verdict = try XCTUnwrap(try report("out/long")["verdict"] as? [String: Any])
        XCTAssertEqual(verdict["reason"] as? String, "cancelled")
        // The rerun does not take the interrupted report for a complete one.
        let rerun = try run(["analyze", clip, "--output", "out", "--jobs", "1"])
        XCTAssertFalse(rerun.output.contains("already complete"), rerun.output)
        XCTAssertEqual((try report("out/long")["verdict"] as? [String: Any])?["reason"] as? String, "presentationAttack")
    }

    func testTwoRunsAtOnceIntoOneOutputKeepEachOthersReports() throws {
        let live = try copy(try Fixtures.generated("cases/blink-then-turn/video.mp4"), to: "a/clip.mp4")
        let photo = try copy(try Fixtures.generated("astronaut-still.mp4"), to: "b/clip.mp4")
        let executable = try Fixtures.livenessExecutable()
        let processes = [live, photo].map { input -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["analyze", input, "--output", path("out")]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            return process
        }
        for process in processes { try process.run() }
        for process in processes { process.waitUntilExit() }
        let folders = try fm.contentsOfDirectory(atPath: path("out")).sorted()
        XCTAssertEqual(folders.count, 2, "\(folders)")
        var passed = 0
        for folder in folders {
            let report = try report("out/" + folder)
            let input = (report["input"] as? [String: Any])?["path"] as? String
            let status = (report["verdict"] as? [String: Any])?["status"] as? String
            XCTAssertEqual(input == live ? "passed" : "failed", status, "\(folder): \(input ?? "?")")
            XCTAssertEqual(fm.fileExists(atPath: path("out/\(folder)/autoshot.jpg")), status == "passed", folder)
            if status == "passed" { passed += 1 }
        }
        XCTAssertEqual(passed, 1)
    }

    func testAFailedRerunTakesAwayTheStillsOfTheRunBefore() throws {
        let input = try copy(try Fixtures.generated("cases/blink-then-turn/video.mp4"), to: "clip.mp4")
        XCTAssertEqual(try run(["analyze", input, "--output", "out", "--plot"]).status, 0)
        XCTAssertTrue(fm.fileExists(atPath: path("out/clip/autoshot.jpg")))
        try fm.removeItem(atPath: input)
        let result = try run(["analyze", input, "--output", "out", "--force"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual((try report("out/clip")["verdict"] as? [String: Any])?["reason"] as? String, "invalidInput")
        for still in ["autoshot.jpg", "snapshot.jpg", "timeline.png"] {
            XCTAssertFalse(fm.fileExists(atPath: path("out/clip/" + still)), "\(still) of the earlier run stays beside a failed report")
        }
    }

    func testARerunAskingForAPlotOrATraceWritesThem() throws {
        let input = try Fixtures.generated("astronaut-still.mp4")
        XCTAssertEqual(try run(["analyze", input, "--output", "out"]).status, 1)
        let again = try run(["analyze", input, "--output", "out", "--plot"])
        XCTAssertFalse(again.output.contains("already complete"), again.output)
        XCTAssertTrue(fm.fileExists(atPath: path("out/astronaut-still/timeline.png")))
        let third = try run(["analyze", input, "--output", "out", "--plot"])
        XCTAssertTrue(third.output.contains("already complete"), third.output)
    }

    func testAnAnnotatedVideoThatCannotBeWrittenKeepsTheVerdict() throws {
        // 1 px wide: no H.264 writer takes it.
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=s=1x4000:d=1:r=25", "-c:v", "ffv1", path("tall.mkv")])
        let result = try run(["analyze", "tall.mkv", "--annotate", "--output", "out"])
        XCTAssertEqual(result.status, 1, result.errors)
        let report = try report("out/tall")
        XCTAssertEqual((report["verdict"] as? [String: Any])?["reason"] as? String, "noFace")
        let warnings = report["warnings"] as? [String] ?? []
        XCTAssertTrue(warnings.contains { $0.hasPrefix("annotated.mp4 not written: ") && !$0.contains(".tmp-") }, "\(warnings)")
        XCTAssertEqual(temporaries(), [])
        XCTAssertFalse(result.errors.contains("OpenCV"), result.errors)
    }

    /// Issue 27: a file name that is not UTF-8 was "No such file or directory" for a file that
    /// exists (Swift's strings are Unicode). It is read through an alias and named as `\xNN`: the
    /// verdict is the same file's under a UTF-8 name, the report and the folder name it
    /// recognisably, a rerun finds its report, and no alias is left behind.
    func testANonUTF8FileNameIsAnalysedAndShownWithItsBytesEscaped() throws {
        let still = try Fixtures.generated("astronaut-still.mp4")
        let aliases = { try Set(self.fm.contentsOfDirectory(atPath: self.path("tmp")).filter { $0.hasPrefix("liveness-names-") }) }
        try fm.createDirectory(atPath: path("tmp"), withIntermediateDirectories: true)
        // The name caf\xe9.mp4 (Latin-1), made and passed by the shell as raw bytes.
        let script = #"cp "$1" "$(printf 'caf\351.mp4')" && TMPDIR="$PWD/tmp" exec "$0" analyze "$(printf 'caf\351.mp4')" --output out 1>&2"#
        let run = try Fixtures.runTool("/bin/sh", ["-c", script, try Fixtures.livenessExecutable(), still], in: dir)
        XCTAssertEqual(run.status, 1, run.errors)
        // (standard output sent to standard error, which the harness keeps)
        XCTAssertTrue(run.errors.hasPrefix(#"caf\xe9.mp4: failed: presentationAttack"#), run.errors)
        let report = try report("out/caf_xe9")
        XCTAssertEqual((report["input"] as? [String: Any])?["path"] as? String, #"caf\xe9.mp4"#)
        let reference = try self.run(["analyze", still, "--output", "ref"])
        XCTAssertEqual(reference.status, 1)
        XCTAssertEqual(report["verdict"] as? NSDictionary, try self.report("ref/astronaut-still")["verdict"] as? NSDictionary)
        XCTAssertEqual(try aliases(), [], "the alias folder is removed at exit")
        // Again: the report is found complete (the folder is claimed by the name as shown).
        let again = try Fixtures.runTool("/bin/sh", ["-c", script, try Fixtures.livenessExecutable(), still], in: dir)
        XCTAssertTrue(again.errors.contains("[report already complete; --force to redo] -> out/caf_xe9/report.json"), again.errors)
        XCTAssertEqual(try aliases(), [])
    }

    /// Inside a folder, a file whose name (or whose folder's name) is not UTF-8 is found byte by
    /// byte and analysed beside the others; a name that is not UTF-8 for something that does not
    /// exist (an output to be created) is refused with what to do.
    func testNonUTF8NamesInAFolderAreFoundAndANewOutputNeedsAUTF8Name() throws {
        let still = try Fixtures.generated("astronaut-still.mp4")
        let script = #"mkdir -p "in/$(printf 'sub\377')" && cp "$1" in/ok.mp4 && cp "$1" "in/$(printf 'sub\377')/$(printf 'x\351.mp4')" && exec "$0" analyze in --output out 1>&2"#
        let run = try Fixtures.runTool("/bin/sh", ["-c", script, try Fixtures.livenessExecutable(), still], in: dir)
        XCTAssertEqual(run.status, 1, run.errors)
        let lines = run.errors.split(separator: "\n").map(String.init).filter { $0.contains(": failed: ") }
        XCTAssertEqual(lines.count, 2, run.errors)
        XCTAssertTrue(lines.contains { $0.hasPrefix(#"in/sub\xff/x\xe9.mp4: failed: presentationAttack"#) }, run.errors)
        XCTAssertTrue(lines.contains { $0.hasPrefix("in/ok.mp4: failed: presentationAttack") }, run.errors)
        XCTAssertEqual((try report("out/sub_xff-x_xe9")["input"] as? [String: Any])?["path"] as? String, #"in/sub\xff/x\xe9.mp4"#)
        // An output that does not exist yet cannot be named in bytes that are not UTF-8.
        let refused = try Fixtures.runTool("/bin/sh", ["-c", #"exec "$0" trace "$1" --output "$(printf 't\351.csv')""#,
                                                       try Fixtures.livenessExecutable(), still], in: dir)
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.errors.contains(#"argument 4 is not valid UTF-8 (t\xe9.csv): no such file or folder"#), refused.errors)
        XCTAssertTrue(refused.errors.contains("an output to be created needs a UTF-8 name"), refused.errors)
    }

    /// Issue 27: `trace` had no budget (it reads whole inputs): a 1-hour face-less clip at 1 fps
    /// took 118 s. A trace covers at most 600 s of media; a longer input is refused at open and
    /// nothing is written.
    func testATraceCoversAtMostTenMinutesOfMedia() throws {
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "color=gray:s=64x64:r=1", "-t", "3600", "-c:v", "libx264", "-preset", "ultrafast",
                             path("hour.mp4")])
        let result = try run(["trace", "hour.mp4", "--output", "t.csv"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.errors.contains("the video lasts 3600 s; a trace covers at most 600 s of media"), result.errors)
        XCTAssertFalse(fm.fileExists(atPath: path("t.csv")))
        // analyze stops at its verdict: the same clip is judged (no face: noFace at the cap).
        let judged = try run(["analyze", "hour.mp4", "--output", "out"])
        XCTAssertEqual(judged.status, 1, judged.errors)
        XCTAssertEqual((try report("out/hour")["verdict"] as? [String: Any])?["reason"] as? String, "noFace")
    }

    func testAnEmptyShardIsSaid() throws {
        // One input in four shards: three of them hold nothing, and say so.
        var empty = 0
        for index in 0..<4 {
            let result = try run(["analyze", try Fixtures.generated("astronaut-still.mp4"), "--shard", "\(index)/4", "--output", "out"])
            if result.errors.contains("shard \(index)/4 holds none of the 1 inputs: nothing to analyse") {
                XCTAssertEqual(result.status, 0)
                XCTAssertEqual(result.output, "")
                empty += 1
            } else {
                XCTAssertTrue(result.output.contains("astronaut-still.mp4: failed"), result.output)
            }
        }
        XCTAssertEqual(empty, 3)
    }

    func testAReplayRefusesATraceWhoseFramesDoNotCountUp() throws {
        XCTAssertEqual(try run(["trace", try Fixtures.generated("astronaut-still.mp4"), "--output", "t.csv"]).status, 0)
        var lines = try String(contentsOfFile: path("t.csv"), encoding: .utf8).split(separator: "\n").map(String.init)
        for i in 1..<lines.count { lines[i] = "0" + lines[i].drop { $0 != "," } }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path("zero.csv"), atomically: true, encoding: .utf8)
        let result = try run(["replay", "zero.csv"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.errors.contains("zero.csv:3: frame 0 comes after frame 0"), result.errors)
    }
}
