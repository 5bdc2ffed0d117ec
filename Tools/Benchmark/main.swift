// liveness-bench: the engine's speed, measured side by side in one run (release build), as
// ratios that do not depend on how fast this machine happens to be today. Needs the shared
// recordings (../shared/recordings) and ffmpeg. `liveness-bench --help` lists the options; the
// usage line is made from the same option list that parses them (BenchmarkOptions.spec).
//
//   swift run -c release liveness-bench                       --scale and --stream (about 10 minutes)
//   swift run -c release liveness-bench --scale 720 --rounds 5
//   swift run -c release liveness-bench --stream [--sessions N]
//   swift run -c release liveness-bench VIDEO                 per-stage costs of one clip (--pipeline VIDEO)
import Foundation
import LivenessCommands

#if canImport(Glibc)
import Glibc
#endif

let console = Console()
let options: BenchmarkOptions
do {
    guard let parsed = try BenchmarkOptions.parse(Array(CommandLine.arguments.dropFirst())) else {
        console.out(BenchmarkOptions.spec.help)
        exit(0)
    }
    options = parsed
} catch {
    exit(console.usageError(error, spec: BenchmarkOptions.spec))
}
do {
    if let video = options.pipelineVideo {
        guard FileManager.default.fileExists(atPath: video) else {
            console.error("error: no such clip: \(video)")
            exit(2)
        }
        try pipelineBenchmark(video: video, repeats: options.repeats)
    }
    if let sizes = options.scaleSizes { try scaleBenchmark(widths: sizes, rounds: options.rounds) }
    if options.stream { try streamingBenchmark(sessions: options.sessions, seconds: options.seconds, store: options.storeDirectory, storeURL: options.storeURL) }
} catch {
    console.error("error: \(error)")
    exit(2)
}
