import Foundation
import LivenessCore
import LivenessKit

/// `liveness replay`: judges a recorded face-tracking trace with the state machine alone.
package enum ReplayCommand {
    /// The command's interface and help.
    package static let spec = CommandSpec(
        name: "replay",
        overview: "Judge a face-tracking trace (this engine's CSV or JSONL, or arkit-trace/1) without video.",
        summary: "Judge a face-tracking trace (CSV, JSONL or arkit-trace/1) without video.",
        arguments: [("<trace>", "A trace written by 'liveness trace' (CSV or JSONL) or an arkit-trace/1 file.")],
        options: [
            .flag("--json", "Print the full report (liveness-report/1) as JSON instead of one line."),
            .option("--policy", "FILE", "A JSON policy file (absent keys keep the defaults)."),
            .flag("--allow-weaker-policy", "Accept a policy weaker than the spec on a security threshold (marked in the report)."),
            .option("--seed", "N", "Seed of the challenge order (default 1, as for 'trace')."),
            .option("--output", "FILE", "Write the summary or report to FILE instead of standard output."),
        ],
        positionalCount: 1...1)

    /// Runs the command; returns the exit code: 0 passed, 1 failed verdict, 2 usage or input
    /// error (one line on standard error, `error: FILE:LINE: problem` for a malformed trace).
    package static func run(_ arguments: [String], console: Console) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        do {
            let policy = try PolicyFile.load(parsed.value("--policy"), allowWeaker: parsed.has("--allow-weaker-policy"))
            let seed = try parsed.seed("--seed") ?? 1
            let path = parsed.positionals[0]
            let clock = ContinuousClock()
            let start = clock.now
            try OutputGuard.check(output: parsed.value("--output"), option: "--output", inputs: [path, parsed.value("--policy")])
            let reader = try TraceReader(path: path)
            let outcome = try TraceReplay.run(reader, policy: policy, seed: seed)
            let elapsed = clock.now - start
            let wall = elapsed.inSeconds
            let report = LivenessReport(machine: outcome.machine, input: outcome.reportInput(path: path), wallSeconds: wall,
                                        stills: (nil, nil), warnings: outcome.warnings,
                                        ignoredAfterVerdict: outcome.ignoredAfterVerdict)
            let text = parsed.has("--json") ? try report.jsonString() : report.summary + "\n"
            // Without --json the warnings are said on standard error (with it, the report holds them).
            if !parsed.has("--json") { for warning in outcome.warnings { console.error("warning: \(Console.printable(warning))") } }
            if let output = parsed.value("--output") {
                let sink = try OutputSink(path: output)
                sink.write(text)
                try sink.finish()
            } else {
                console.out(text)
            }
            return report.verdict.status == .passed ? 0 : 1
        } catch let error as UsageError {
            return console.usageError(error, spec: spec)
        } catch {
            console.error("error: \(Console.printable("\(error)"))")
            return 2
        }
    }
}
