import Foundation
import FaceTracking
import LivenessCore
import LivenessKit

/// `liveness trace`: one record per frame of a video or image.
package enum TraceCommand {
    package static let spec = CommandSpec(
        name: "trace",
        overview: "Write the face-tracking observations of a video or image, one record per frame.",
        summary: "Write the face-tracking observations of a video or image, one record per frame.",
        arguments: [("<input>", "A video (MP4, MOV, AVI, ...) or an image (JPEG, PNG).")],
        options: [
            .option("--format", "csv|jsonl", "csv (default) or jsonl."),
            .option("--output", "FILE", "Write the trace to FILE instead of standard output."),
            .flag("--landmarks", "Also write the 68 landmarks of each frame."),
            .option("--policy", "FILE", "A JSON policy file (absent keys keep the defaults)."),
            .flag("--allow-weaker-policy", "Accept a policy weaker than the spec on a security threshold (marked in the report)."),
            .option("--seed", "N", "Seed of the challenge order (default 1)."),
            .option("--motion", "FILE", "Device-motion samples recorded with the video (docs/motion-format.md)."),
            .flag("--no-video-rotation", "Do not estimate device rotation from the background."),
            .flag("--detect-every-frame", "Run the HOG detector on every frame instead of tracking (slow; for comparison)."),
        ],
        positionalCount: 1...1)

    /// Runs the command; returns the exit code (0 ok, 2 usage or input error).
    package static func run(_ arguments: [String], console: Console) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        do {
            guard let format = TraceFormat(rawValue: parsed.value("--format") ?? "csv") else {
                throw UsageError("--format must be csv or jsonl, not '\(parsed.value("--format")!)'")
            }
            let policy = try PolicyFile.load(parsed.value("--policy"), allowWeaker: parsed.has("--allow-weaker-policy"))
            let seed = try parsed.seed("--seed") ?? 1
            let input = parsed.positionals[0]
            try OutputGuard.check(output: parsed.value("--output"), option: "--output",
                                  inputs: [input, parsed.value("--motion"), parsed.value("--policy")])
            let source = try FrameSource(path: input)
            let sink = try parsed.value("--output").map { path throws(InputError) in try OutputSink(path: path) } ?? console.standardOutputSink()
            let writer = TraceWriter(sink: sink, format: format, landmarks: parsed.has("--landmarks"))
            let model = try LandmarkModel.load()
            var tracking = TrackerConfiguration()
            tracking.track = !parsed.has("--detect-every-frame")
            let session = try AnalysisSession(source: source, model: model, policy: policy, seed: seed,
                                              keepLandmarks: parsed.has("--landmarks"), stopAtVerdict: false,
                                              rotation: try RotationChoice.provider(
                                                  motionPath: parsed.value("--motion"),
                                                  estimateFromVideo: !parsed.has("--no-video-rotation"), source: source),
                                              tracking: tracking,
                                              parallelStages: ProcessInfo.processInfo.activeProcessorCount > 1)
            // A trace is a measurement: every frame's residual, not only those the verdict reads.
            session.processor.planarResidualOnEveryFrame = true
            let outcome = try session.run { step in
                if Interruption.signal != nil { throw Interruption.error(path: input) }
                writer.write(step.record)
            }
            try writer.finish()
            for warning in outcome.warnings { console.error("warning: \(Console.printable(warning))") }
            return 0
        } catch let error as UsageError {
            return console.usageError(error, spec: spec)
        } catch {
            console.error("error: \(Console.printable("\(error)"))")
            if let signal = Interruption.signal { return 128 + signal }
            return 2
        }
    }
}
