import Foundation
import TestSupport
import XCTest

/// docs/scale.md: the Slurm script and the Kubernetes manifest it shows are the files in
/// docs/scale/ (SlurmArrayTests runs the script on a real Slurm); the manifest is YAML whose
/// shard count matches its completions, and its container command, run for every completion
/// index over a small batch, leaves every input's report once; the doc's check of a batch
/// agrees.
final class ScaleDocTests: XCTestCase {
    static let docs = Fixtures.packageRoot.appendingPathComponent("docs")
    static let python = "/usr/bin/python3"

    func testTheDocShowsTheFilesAsTheyAre() throws {
        let doc = try String(contentsOf: Self.docs.appendingPathComponent("scale.md"), encoding: .utf8)
        for (file, fence) in [("liveness-array.sbatch", "```bash\n"), ("liveness-indexed-job.yaml", "```yaml\n"),
                              ("liveness-replicas.yaml", "```yaml\n"), ("haproxy.cfg", "```\n")] {
            let text = try String(contentsOf: Self.docs.appendingPathComponent("scale/\(file)"), encoding: .utf8)
            XCTAssertTrue(doc.contains(fence + text + "```\n"), "docs/scale.md does not show docs/scale/\(file) as it is")
        }
    }

    /// The manifest as JSON, through a YAML parser (Debian's python3-yaml).
    static func manifest() throws -> [String: Any] {
        try XCTUnwrap(try manifests("liveness-indexed-job.yaml").first)
    }

    /// The documents of docs/scale/`file` as JSON objects, through a YAML parser (Debian's python3-yaml).
    static func manifests(_ file: String) throws -> [[String: Any]] {
        guard FileManager.default.isExecutableFile(atPath: python) else { throw Skip.unavailable("\(python) is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
                             docs.appendingPathComponent("scale/\(file)").path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(file) does not parse as YAML (python3-yaml: Tools/setup.sh --test)")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [[String: Any]])
    }

    func testTheManifestIsAnIndexedJobWhoseShardCountIsItsCompletions() throws {
        let job = try Self.manifest()
        XCTAssertEqual(job["apiVersion"] as? String, "batch/v1")
        XCTAssertEqual(job["kind"] as? String, "Job")
        let spec = try XCTUnwrap(job["spec"] as? [String: Any])
        XCTAssertEqual(spec["completionMode"] as? String, "Indexed")
        let pod = try XCTUnwrap((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        XCTAssertEqual(pod["restartPolicy"] as? String, "Never", "backoffLimitPerIndex needs restartPolicy Never")
        let container = try XCTUnwrap((pod["containers"] as? [[String: Any]])?.first)
        let environment = try XCTUnwrap(container["env"] as? [[String: Any]])
        let count = environment.first { $0["name"] as? String == "LIVENESS_SHARD_COUNT" }?["value"] as? String
        XCTAssertEqual(count, (spec["completions"] as? Int).map(String.init), "LIVENESS_SHARD_COUNT must be .spec.completions")
        XCTAssertTrue(((container["args"] as? [String])?.first ?? "").contains("--shard auto"))
    }

    func testTheManifestsCommandForEveryIndexTakesEveryInputOnce() throws {
        let job = try Self.manifest()
        let spec = try XCTUnwrap(job["spec"] as? [String: Any])
        let completions = try XCTUnwrap(spec["completions"] as? Int)
        let pod = try XCTUnwrap((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try XCTUnwrap((pod["containers"] as? [[String: Any]])?.first)
        let command = try XCTUnwrap(container["command"] as? [String]) + (try XCTUnwrap(container["args"] as? [String]))
        let count = try XCTUnwrap((container["env"] as? [[String: Any]])?.first { $0["name"] as? String == "LIVENESS_SHARD_COUNT" }?["value"] as? String)
        let liveness = try Fixtures.livenessExecutable()

        // The volume: a few inputs (some in a subfolder), one of them not a video.
        let data = try Fixtures.temporaryDirectory(self)
        let inputs = data.appendingPathComponent("inputs")
        try FileManager.default.createDirectory(at: inputs.appendingPathComponent("more"), withIntermediateDirectories: true)
        let portrait = try Fixtures.generated("astronaut.png")
        let still = try Fixtures.generated("astronaut-still.mp4")
        for (source, name) in [(portrait, "a.png"), (portrait, "more/b.png"), (portrait, "more/c.PNG"), (still, "d.mp4")] {
            try FileManager.default.copyItem(atPath: source, toPath: inputs.appendingPathComponent(name).path)
        }
        try Data("not a video".utf8).write(to: inputs.appendingPathComponent("broken.mp4"))

        // Each pod's command, with the volume mounted at our folder instead of /data.
        let script = command.last!.replacingOccurrences(of: "/data", with: data.path)
        let statuses = ExitStatuses(count: completions)
        DispatchQueue.concurrentPerform(iterations: completions) { index in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst().dropLast()) + [script]
            process.environment = ["PATH": URL(fileURLWithPath: liveness).deletingLastPathComponent().path + ":/usr/bin:/bin",
                                   "JOB_COMPLETION_INDEX": "\(index)", "LIVENESS_SHARD_COUNT": count]
            process.standardError = FileHandle.nullDevice
            statuses.set(index, (try? process.run()).map { process.waitUntilExit(); return process.terminationStatus } ?? -1)
        }

        var taskOf: [String: Int] = [:]
        for index in 0..<completions {
            let lines = try String(contentsOf: data.appendingPathComponent("out/shards/task-\(index).jsonl"), encoding: .utf8)
            var holdsBroken = false
            for line in lines.split(separator: "\n") {
                let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let path = try XCTUnwrap((report["input"] as? [String: Any])?["path"] as? String)
                if let other = taskOf[path] { XCTFail("\(path) in pods \(other) and \(index)") }
                taskOf[path] = index
                holdsBroken = holdsBroken || path.hasSuffix("broken.mp4")
            }
            XCTAssertEqual(statuses[index], holdsBroken ? 2 : 0, "exit status of index \(index)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: data.appendingPathComponent("out/shards/task-\(index).jsonl.part").path))
        }
        let expected = ["a.png", "more/b.png", "more/c.PNG", "d.mp4", "broken.mp4"].map { inputs.path + "/" + $0 }
        XCTAssertEqual(Set(taskOf.keys), Set(expected))

        // The doc's check of a gathered batch: complete, nothing twice, the invalid input named.
        let doc = try String(contentsOf: Self.docs.appendingPathComponent("scale.md"), encoding: .utf8)
        let check = try XCTUnwrap(doc.components(separatedBy: "<<'PY'\n").dropFirst().first?.components(separatedBy: "\nPY\n").first)
        let find = try XCTUnwrap(doc.split(separator: "\n").first { $0.hasPrefix("find /shared/clips") })
        let gather = """
            cd "\(data.path)" && cat out/shards/task-*.jsonl > all.jsonl && \
            \(find.replacingOccurrences(of: "/shared/clips", with: inputs.path)) && \(Self.python) - all.jsonl inputs.txt <<'PY'
            \(check)
            PY
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", gather]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let printed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, printed)
        XCTAssertTrue(printed.hasSuffix("5 inputs, 5 reports, 0 missing, 0 twice, 1 invalid\n"), printed)
        XCTAssertTrue(printed.contains("invalidInput: \(inputs.path)/broken.mp4"), printed)

        // Without one pod's lines the check finds its inputs missing.
        let lost = try XCTUnwrap(taskOf.values.first)
        try FileManager.default.removeItem(at: data.appendingPathComponent("out/shards/task-\(lost).jsonl"))
        let again = Process()
        again.executableURL = URL(fileURLWithPath: "/bin/bash")
        again.arguments = ["-c", gather]
        again.standardOutput = FileHandle.nullDevice
        try again.run()
        again.waitUntilExit()
        XCTAssertEqual(again.terminationStatus, 1, "the check passed a batch with a pod's reports missing")
    }
}

/// Exit statuses written from concurrent threads.
private final class ExitStatuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int32]
    init(count: Int) { values = Array(repeating: -1, count: count) }
    func set(_ index: Int, _ value: Int32) { lock.withLock { values[index] = value } }
    subscript(index: Int) -> Int32 { lock.withLock { values[index] } }
}
