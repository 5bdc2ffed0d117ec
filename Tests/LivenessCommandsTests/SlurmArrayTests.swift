import Foundation
import TestSupport
import XCTest

/// `analyze --shard auto` on a real Slurm: Tools/slurm-test.sh starts a throwaway single-node
/// cluster (munge, slurmctld, slurmd), runs docs/scale/liveness-array.sbatch as a 4-task array
/// numbered 1-4, requeues one task, and stops the cluster. The oracle is a one-machine run of
/// the same command over the same inputs: the tasks' reports together must hold every input
/// exactly once with the same report. Skips only when the daemons cannot start here.
final class SlurmArrayTests: XCTestCase {
    /// How long the script may run before it is stopped (its own waits have deadlines too).
    static let scriptTimeout: TimeInterval = 420

    func testFourTaskArrayTakesEveryInputOnceWithTheReportsOfAOneMachineRun() throws {
        let liveness = try Fixtures.livenessExecutable()
        let work = try Fixtures.temporaryDirectory(self)
        let inputs = try Self.inputs(in: work)

        // The reference: the same inputs on one machine, in one process.
        let started = Date()
        let reference = try Fixtures.runLiveness(["analyze", "--json", "--output", work.appendingPathComponent("one").path] + inputs)
        XCTAssertEqual(reference.status, 2, "one input is not a video: exit 2\n\(reference.errors)")
        let expected = try Self.reports(reference.output, from: "the one-machine run")
        XCTAssertGreaterThanOrEqual(expected.count, 3, "too few inputs to split: \(inputs)")
        let brokenVerdict = expected[work.appendingPathComponent("broken.mp4").path]?["verdict"] as? [String: Any]
        XCTAssertEqual(brokenVerdict?["reason"] as? String, "invalidInput", "the input that is not a video")

        // The array.
        let output = work.appendingPathComponent("array")
        let arrayStarted = Date()
        let run = try Self.runScript([liveness, output.path] + inputs, in: work)
        print(String(format: "SlurmArrayTests: %d inputs; one-machine run %.1f s; Slurm (start, 4-task array, requeue, stop) %.1f s",
                     expected.count, arrayStarted.timeIntervalSince(started), Date().timeIntervalSince(arrayStarted)))
        if run.status == 77 {
            throw Skip.unavailable("Slurm cannot run here: \(run.errors.split(separator: "\n").filter { $0.contains("SKIP") }.joined(separator: "; "))"
                + "\n\(run.errors)")
        }
        XCTAssertEqual(run.status, 0, "Tools/slurm-test.sh failed:\n\(run.errors)")
        guard run.status == 0 else { return }

        // Every input in exactly one task, with the one-machine report.
        var taskOf: [String: Int] = [:]
        for task in 1...4 {
            let text = try String(contentsOf: output.appendingPathComponent("shards/task-\(task).jsonl"), encoding: .utf8)
            for (path, report) in try Self.reports(text, from: "task \(task)") {
                if let other = taskOf[path] { XCTFail("\(path) is in task \(other) and in task \(task)") }
                taskOf[path] = task
                XCTAssertEqual(Self.comparable(report), expected[path].map(Self.comparable),
                               "\(path): the report of task \(task) differs from the one-machine run")
            }
        }
        XCTAssertEqual(Set(taskOf.keys), Set(expected.keys), "the union of the tasks' inputs is not the batch")
        XCTAssertGreaterThan(Set(taskOf.values).count, 1, "all inputs went to one task: \(taskOf)")

        // Each report is also on disk, one folder per input in the shared output folder.
        var onDisk: [String] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: output.path) {
            guard let data = FileManager.default.contents(atPath: output.path + "/" + folder + "/report.json") else { continue }
            let report = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any], folder)
            onDisk += [(report["input"] as? [String: Any])?["path"] as? String ?? folder]
        }
        XCTAssertEqual(onDisk.sorted(), expected.keys.sorted(), "report.json files in \(output.path)")

        // Task k of the array 1-4 took shard k-1 (SLURM_ARRAY_TASK_MIN is 1); the rerun of task 3 the same.
        let job = try Self.jobStates(output.appendingPathComponent("jobs.txt"))
        XCTAssertEqual(Set(job.keys), [1, 2, 3, 4], "scontrol show job: \(job)")
        for task in 1...4 {
            let logs = try FileManager.default.contentsOfDirectory(atPath: output.appendingPathComponent("logs").path)
            let log = try XCTUnwrap(logs.first { $0.hasSuffix("_\(task).log") }, "no log of task \(task) in \(logs)")
            let text = try String(contentsOf: output.appendingPathComponent("logs/\(log)"), encoding: .utf8)
            let notes = text.split(separator: "\n").filter { $0.hasPrefix("shard ") }
            XCTAssertEqual(notes.count, task == 3 ? 2 : 1, "task \(task) log:\n\(text)")
            let share = taskOf.values.filter { $0 == task }.count
            XCTAssertTrue(notes.allSatisfy { $0.hasPrefix("shard \(task - 1)/4 from Slurm array job") && $0.hasSuffix(": \(share) of \(expected.count) inputs") },
                          "task \(task) log:\n\(text)")
            // The task holding the input that is not a video ran its other inputs and ended 2
            // (the failure is recorded in its report); the others ended 0.
            let holdsBroken = taskOf[work.appendingPathComponent("broken.mp4").path] == task
            XCTAssertEqual(job[task], holdsBroken ? "2:0" : "0:0", "exit code of task \(task)")
        }
        let first = try String(contentsOf: output.appendingPathComponent("first-run/task-3.jsonl"), encoding: .utf8)
        let again = try String(contentsOf: output.appendingPathComponent("shards/task-3.jsonl"), encoding: .utf8)
        XCTAssertEqual(try Self.reports(first, from: "task 3").mapValues(Self.comparable),
                       try Self.reports(again, from: "task 3 again").mapValues(Self.comparable),
                       "task 3 run again took another share or changed its reports")
    }

    // MARK: - Helpers

    /// The shared real clips when present, otherwise the generated sample and cases; and a
    /// file that is not a video, which each run must record as invalid and go on.
    static func inputs(in work: URL) throws -> [String] {
        let broken = work.appendingPathComponent("broken.mp4")
        try Data("this is not a video".utf8).write(to: broken)
        let shared = Fixtures.sharedRecordings
        if FileManager.default.fileExists(atPath: shared.appendingPathComponent("labels.json").path) {
            return [shared.path, broken.path]
        }
        // The cases' videos, all named video.mp4: their folders are told apart by the batch's
        // naming, which every task must do alike.
        let cases = URL(fileURLWithPath: try Fixtures.generated("cases"))
        let videos = try FileManager.default.contentsOfDirectory(atPath: cases.path).sorted()
            .map { cases.appendingPathComponent($0).appendingPathComponent("video.mp4").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        return [try Fixtures.generated("astronaut-still.mp4"), try Fixtures.generated("astronaut.png")] + videos + [broken.path]
    }

    /// JSON lines of `analyze --json`, by input path; an input printed twice is a failure.
    static func reports(_ text: String, from origin: String) throws -> [String: [String: Any]] {
        var found: [String: [String: Any]] = [:]
        for line in text.split(separator: "\n") where !line.isEmpty {
            let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(origin): \(line)")
            let path = try XCTUnwrap((report["input"] as? [String: Any])?["path"] as? String, "\(origin): \(line)")
            XCTAssertNil(found[path], "\(origin) printed \(path) twice")
            found[path] = report
        }
        return found
    }

    /// A report without what differs between two runs of the same analysis: the timing and
    /// where the stills were written.
    static func comparable(_ report: [String: Any]) -> NSDictionary {
        var report = report
        report["timing"] = nil
        for still in ["autoshot", "snapshot"] {
            if var value = report[still] as? [String: Any] {
                value["path"] = nil
                report[still] = value
            }
        }
        return report as NSDictionary
    }

    /// Array task id -> "exit:signal", from `scontrol show job -o`.
    static func jobStates(_ url: URL) throws -> [Int: String] {
        var states: [Int: String] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            var fields: [String: String] = [:]
            for field in line.split(separator: " ") {
                let parts = field.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            if let task = fields["ArrayTaskId"].flatMap({ Int($0) }), let exit = fields["ExitCode"] { states[task] = exit }
        }
        return states
    }

    /// Runs Tools/slurm-test.sh with `arguments`; stopped (TERM, which makes it stop its
    /// daemons, then KILL) when it runs past `scriptTimeout`.
    static func runScript(_ arguments: [String], in work: URL) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.packageRoot.appendingPathComponent("Tools/slurm-test.sh").path] + arguments
        let out = work.appendingPathComponent("slurm-test.out"), err = work.appendingPathComponent("slurm-test.err")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        var timedOut = false
        if ended.wait(timeout: .now() + scriptTimeout) == .timedOut {
            timedOut = true
            process.terminate()
            if ended.wait(timeout: .now() + 60) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                ended.wait()
            }
        }
        var errors = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        if timedOut { errors += "\nTools/slurm-test.sh stopped after \(Int(scriptTimeout)) s" }
        return (timedOut ? -1 : process.terminationStatus, errors)
    }
}
