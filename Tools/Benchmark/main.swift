// liveness-bench: the engine's speed, measured side by side in one run (release build), as
// ratios that do not depend on how fast this machine happens to be today.
//
//   swift run -c release liveness-bench [VIDEO] [--repeat N]      per-stage pipeline costs
//   swift run -c release liveness-bench --stream [--sessions N]    the streaming service
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil } }
do {
    if arguments.contains("--stream") {
        try streamingBenchmark(sessions: option("--sessions").flatMap(Int.init), seconds: option("--seconds").flatMap(Double.init) ?? 10)
    } else {
        let video = arguments.first { !$0.hasPrefix("--") && Int($0) == nil } ?? "../shared/recordings/lp-d13-phone-selfie-glasses.mp4"
        try pipelineBenchmark(video: video, repeats: option("--repeat").flatMap(Int.init) ?? 1)
    }
} catch {
    FileHandle.standardError.write("error: \(error)\n".data(using: .utf8)!)
    exit(2)
}
