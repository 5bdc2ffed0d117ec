import LivenessKit
import FaceTracking
import Foundation

/// Runs `AnalysisJob`s over a batch with `jobs` worker threads. The landmark model is loaded
/// once for the process and shared; each worker has its own tracker.
public final class BatchRunner: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private var results: [JobResult?]
    private var done = 0
    private let inputs: InputList
    private let outputDirectory: String
    private let options: AnalyzeOptions
    private let model: LandmarkModel

    public init(inputs: InputList, outputDirectory: String, options: AnalyzeOptions, model: LandmarkModel) {
        self.inputs = inputs
        self.outputDirectory = outputDirectory
        self.options = options
        self.model = model
        results = Array(repeating: nil, count: inputs.entries.count)
    }

    /// Analyses every input; `progress(done, total, result)` is called after each (from the
    /// worker's thread, serialised). Returns the results in input order.
    public func run(jobs: Int, progress: @escaping @Sendable (Int, Int, JobResult) -> Void) -> [JobResult] {
        let total = inputs.entries.count
        let workers = max(1, min(jobs, total))
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread { [self] in
                work(total: total, progress: progress)
                group.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        group.wait()
        return results.compactMap { $0 }
    }

    /// The folder of `input` under `directory`: `name`, unless that folder belongs to another
    /// input (claimed by a run over `a/clip.mp4`, now or earlier, in this process or another, when
    /// this one is `b/clip.mp4`; or holding its report from before claims were written), then
    /// `name-<hash of the input path>`. Deterministic, so a rerun finds its own report.
    static func folder(for path: String, named name: String, in directory: String) -> String {
        // A name that is not UTF-8 is claimed as shown (\xNN), not by its per-process alias.
        let input = ForeignNames.shown(path)
        let plain = directory + "/" + name
        let hashed = plain + "-" + String(InputList.fnv1a(input), radix: 16).suffix(8)
        if FolderClaim.owner(of: plain) == nil, let owner = AnalysisJob.reportInput(at: plain + "/report.json"), owner != input {
            _ = FolderClaim.claim(hashed, for: input)
            return hashed
        }
        if FolderClaim.claim(plain, for: input) { return plain }
        _ = FolderClaim.claim(hashed, for: input)
        return hashed
    }

    private func work(total: Int, progress: @Sendable (Int, Int, JobResult) -> Void) {
        while true {
            lock.lock()
            let index = next
            next += 1
            lock.unlock()
            guard index < total, Interruption.signal == nil else { return }
            let entry = inputs.entries[index]
            var options = self.options
            if let trace = options.tracePath, total > 1 {
                options.tracePath = outputDirectory + "/" + entry.name + "/" + URL(fileURLWithPath: trace).lastPathComponent
            }
            let folder = Self.folder(for: entry.path, named: entry.name, in: outputDirectory)
            let result = AnalysisJob.run(input: entry.path, folder: folder, options: options, model: model)
            lock.lock()
            results[index] = result
            done += 1
            progress(done, total, result)
            lock.unlock()
        }
    }
}
