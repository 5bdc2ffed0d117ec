// liveness-bench: the engine's speed, measured side by side in one run (release build), as
// ratios that do not depend on how fast this machine happens to be today. Needs the shared
// recordings (../shared/recordings) and ffmpeg.
//
//   swift run -c release liveness-bench                          all of it (about 10 minutes)
//   swift run -c release liveness-bench --scale [480,720,1080] [--rounds N]   decode / analyze / naive at each size
//   swift run -c release liveness-bench --stream [--sessions N]  the streaming service under load
//   swift run -c release liveness-bench --pipeline [VIDEO]       per-stage costs of one clip
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count && !arguments[$0 + 1].hasPrefix("--") ? arguments[$0 + 1] : nil }
}
if arguments.contains("--help") || arguments.contains("-h") {
    print("""
    liveness-bench: the engine's speed as ratios measured side by side in one run (release build).
      liveness-bench                          all of it (about 10 minutes)
      liveness-bench --scale [480,720,1080] [--rounds N]     decode-only, analyze and the naive pipeline at each size,
                                              N rounds in turn (default 3): medians and the ratios' ranges
      liveness-bench --stream [--sessions N] [--seconds S]   the streaming service under load
      liveness-bench --pipeline [VIDEO] [--repeat N]         per-stage costs of one clip
    Needs ../shared/recordings and ffmpeg.
    """)
    exit(0)
}
do {
    let widths = option("--scale").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [480, 720, 1080]
    let all = !arguments.contains("--scale") && !arguments.contains("--stream") && !arguments.contains("--pipeline")
    if arguments.contains("--pipeline") {
        let video = option("--pipeline") ?? "../shared/recordings/lp-d13-phone-selfie-glasses.mp4"
        try pipelineBenchmark(video: video, repeats: option("--repeat").flatMap(Int.init) ?? 1)
    }
    var rounds = 3
    if arguments.contains("--rounds") {
        guard let n = option("--rounds").flatMap(Int.init), (1...100).contains(n) else {
            FileHandle.standardError.write("error: --rounds needs a whole number from 1 to 100\n".data(using: .utf8)!)
            exit(2)
        }
        rounds = n
    }
    if all || arguments.contains("--scale") { try scaleBenchmark(widths: widths, rounds: rounds) }
    if all || arguments.contains("--stream") {
        try streamingBenchmark(sessions: option("--sessions").flatMap(Int.init), seconds: option("--seconds").flatMap(Double.init) ?? 10)
    }
} catch {
    FileHandle.standardError.write("error: \(error)\n".data(using: .utf8)!)
    exit(2)
}
