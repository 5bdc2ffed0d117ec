import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessBatch
import LivenessKit

/// `liveness analyze`: the main job. A verdict with stills for each recorded selfie video.
package enum AnalyzeCommand {
    package static let spec = CommandSpec(
        name: "analyze",
        overview: "Judge recorded selfie videos: blink and head-turn challenge, autoshot and snapshot, a report per input.",
        summary: "Judge recorded selfie videos: verdict, stills and a report per input.",
        arguments: [("<input>...", "Videos or images, or directories of them.")],
        options: [
            .option("--output", "DIR", "Where the per-input folders go (default: liveness-out)."),
            .flag("--json", "Print each report as one JSON line instead of a human summary."),
            .option("--trace", "FILE", "Also write the per-frame trace (.csv or .jsonl); in a batch, this name in each folder."),
            .option("--policy", "FILE", "A JSON policy file (absent keys keep the defaults)."),
            .flag("--allow-weaker-policy", "Accept a policy weaker than the spec on a security threshold (marked in the report)."),
            .option("--seed", "N", "Seed of the challenge order (default 1)."),
            .option("--motion", "FILE", "Device-motion samples recorded with the video (one input only)."),
            .flag("--no-video-rotation", "Do not estimate device rotation from the background."),
            .option("--jobs", "N", "Inputs analysed in parallel (default: the number of cores)."),
            .flag("--annotate", "Write annotated.mp4 (landmarks, guide circle, HUD, phase, events) for passed sessions."),
            .flag("--annotate-failed", "With --annotate, keep annotated.mp4 of failed sessions too (it shows the face)."),
            .flag("--plot", "Write timeline.png: eye closure and relative yaw with thresholds and events."),
            .flag("--force", "Analyse again inputs whose report is already complete."),
            .option("--shard", "I/N|auto", "Take only shard I of N of the inputs (0 <= I < N), deterministically; auto: I and N of this Slurm, Kubernetes or AWS Batch array task (docs/scale.md)."),
            .option("--sign-key", "FILE", "Sign every report with this private key (liveness keygen): report.sig beside report.json."),
            .option("--challenge", "FILE", "Judge one recording in prompted mode against the signed prompt log its capture client recorded (docs/prompted-challenge.md)."),
            .option("--public-key", "FILE", "With --challenge: a trusted key of the service that issued the prompts (liveness.pub); may be repeated. Default: $LIVENESS_PUBLIC_KEY.", repeatable: true),
        ],
        positionalCount: 1...Int.max)

    /// Runs the command; exit code 0 when every verdict passed, 1 when some failed, 2 on a
    /// usage error or when some input could not be analysed (the others still are).
    package static func run(_ arguments: [String], console: Console,
                           environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        var options = AnalyzeOptions()
        var inputs = InputList(parsed.positionals)
        let jobs: Int
        do {
            options.policy = try PolicyFile.load(parsed.value("--policy"), allowWeaker: parsed.has("--allow-weaker-policy"))
            options.seed = try parsed.seed("--seed") ?? 1
            options.tracePath = parsed.value("--trace")
            options.motionPath = parsed.value("--motion")
            options.estimateRotation = !parsed.has("--no-video-rotation")
            options.annotate = parsed.has("--annotate") || parsed.has("--annotate-failed")
            options.annotateFailed = parsed.has("--annotate-failed")
            options.plot = parsed.has("--plot")
            options.force = parsed.has("--force")
            if let path = parsed.value("--sign-key") { options.signingKey = try SigningKey.load(path: path) }
            if let path = parsed.value("--challenge") {
                guard inputs.entries.count == 1 else {
                    throw UsageError("--challenge belongs to one recording; give one input with it")
                }
                var keyFiles = parsed.values["--public-key"] ?? []
                if keyFiles.isEmpty, let file = environment[VerifyCommand.keyVariable], !file.isEmpty { keyFiles = [file] }
                guard !keyFiles.isEmpty else {
                    throw UsageError("--challenge needs a trusted key: give --public-key FILE (the issuing service's liveness.pub) or set \(VerifyCommand.keyVariable); the key written in the log is never trusted on its own")
                }
                var trusted: [PublicKey] = []
                for file in keyFiles { trusted.append(try PublicKey.load(path: file)) }
                let log = try PromptLog.load(path: path, trusted: trusted)
                options.policy.challengeMode = .prompted
                options.plan = log.plan
            } else if parsed.values["--public-key"] != nil {
                throw UsageError("--public-key is the key of a prompt log's issuer; give --challenge FILE with it")
            }
            jobs = try parsed.integer("--jobs", in: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
            if options.motionPath != nil && inputs.entries.count > 1 {
                throw UsageError("--motion belongs to one video; give one input with it")
            }
            if let argument = parsed.value("--shard") {
                let shard = try ShardAssignment(argument: argument, environment: ProcessInfo.processInfo.environment)
                let total = inputs.entries.count
                inputs = inputs.shard(shard.index, of: shard.count)
                if argument == "auto" {
                    console.error("shard \(shard.index)/\(shard.count) from \(shard.source): \(inputs.entries.count) of \(total) inputs")
                } else if inputs.entries.isEmpty {
                    // Not an error (an array with more tasks than inputs has empty shards), but said.
                    console.error("shard \(shard.index)/\(shard.count) holds none of the \(total) inputs: nothing to analyse")
                }
            }
        } catch let error as UsageError {
            return console.usageError(error, spec: spec)
        } catch let error as ShardError {
            return console.usageError(UsageError(error.message), spec: spec)
        } catch {
            console.error("error: \(error)")
            return 2
        }
        let model: LandmarkModel
        do {
            model = try LandmarkModel.load()
        } catch {
            console.error("error: \(error)")
            return 2
        }
        let output = parsed.value("--output") ?? "liveness-out"
        if output.isEmpty { return console.usageError(UsageError("--output needs a folder name, not an empty string"), spec: spec) }
        let json = parsed.has("--json")
        for directory in inputs.emptyDirectories {
            console.error("error: \(Console.printable(directory)): no video or image files in this folder (\(InputList.extensions.sorted().joined(separator: ", ")))")
        }
        let showProgress = console.isTerminal && inputs.entries.count > 1
        // Fewer inputs at once than cores: each input's stages run on several threads.
        options.parallelStages = min(jobs, inputs.entries.count) < ProcessInfo.processInfo.activeProcessorCount
        let runner = BatchRunner(inputs: inputs, outputDirectory: output, options: options, model: model)
        let results = runner.run(jobs: jobs) { done, total, result in
            if showProgress { console.status("\r\u{1B}[K") }
            // Standard output holds results only (one JSON line per input with --json, which for
            // a failed input is its invalidInput report, carrying the error); each problem is
            // said once, on standard error.
            if let error = result.error { console.error("error: \(Console.printable(error.description))") }
            if json {
                console.out(jsonLine(result))
            } else if result.error == nil {
                console.out(humanLine(result))
            }
            if showProgress { console.status(progressBar(done, total)) }
        }
        if showProgress { console.status("\r\u{1B}[K") }
        if let signal = Interruption.signal {
            let finished = results.filter { $0.report?.verdict.reason != .cancelled && $0.error == nil }.count
            console.error("interrupted by \(Interruption.name(signal)): \(finished) of \(inputs.entries.count) inputs analysed; a rerun analyses the others")
            return 128 + signal
        }
        if results.contains(where: { $0.error != nil }) || !inputs.emptyDirectories.isEmpty { return 2 }
        return results.allSatisfy({ $0.report?.verdict.status == .passed }) ? 0 : 1
    }

    static func humanLine(_ result: JobResult) -> String {
        let input = Console.printable(ForeignNames.shown(result.input))
        guard let report = result.report else { return "\(input): no report" }
        var line = "\(input): \(report.summary)"
        if result.skipped { line += " [report already complete; --force to redo]" }
        let stills = [report.autoshot?.path, report.snapshot?.path].compactMap { $0 }
        let folder = Console.printable(result.folder)
        line += stills.isEmpty ? " -> \(folder)/report.json" : " -> \(folder)/ (report.json, autoshot.jpg, snapshot.jpg)"
        return line
    }

    static func jsonLine(_ result: JobResult) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let report = result.report, let data = try? encoder.encode(report) {
            return String(decoding: data, as: UTF8.self)
        }
        // No report could be encoded: still one valid JSON line naming the input and the problem.
        struct Fallback: Encodable { var input: String; var error: String }
        let fallback = Fallback(input: ForeignNames.shown(result.input), error: result.error?.description ?? "no report could be encoded")
        let data = (try? encoder.encode(fallback)) ?? Data("{\"error\":\"no report\"}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func progressBar(_ done: Int, _ total: Int) -> String {
        let width = 30
        let filled = total > 0 ? width * done / total : width
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(done)/\(total)"
    }
}
