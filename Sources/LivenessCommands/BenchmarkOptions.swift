/// The command line of `liveness-bench` (Tools/Benchmark), here beside the other commands'
/// specs so that its usage line and help are made, parsed and checked against the README the
/// same way.
package struct BenchmarkOptions: Sendable, Equatable {
    /// Decode-only, `analyze` and the naive pipeline at these sizes (frame heights: 720 is 720p).
    package var scaleSizes: [Int]?
    /// Rounds of the scale benchmark, each clip measured in turn (1...100).
    package var rounds = 3
    /// The streaming benchmark, and its fixed session count (nil: find the most that keep up).
    package var stream = false
    package var sessions: Int?
    /// Seconds of streaming per measurement.
    package var seconds = 10.0
    /// With `stream`: the service keeps its sessions in a session store in this folder
    /// (`liveness serve --data-dir`, docs/store.md), sealed with a random key.
    package var storeDirectory: String?
    /// With `stream`: the service keeps its sessions in this PostgreSQL server instead
    /// (`liveness serve --store URL`, docs/store.md), sealed with a random key.
    package var storeURL: String?
    /// Per-stage costs of this clip, repeated `repeats` times.
    package var pipelineVideo: String?
    package var repeats = 1

    /// The clip `--pipeline` measures when none is named.
    package static let defaultPipelineVideo = "../shared/recordings/lp-d13-phone-selfie-glasses.mp4"
    /// The sizes `--scale` measures when none are named.
    package static let defaultScaleSizes = [480, 720, 1080]

    package static let spec = CommandSpec(
        name: "",
        overview: "The engine's speed as ratios measured side by side in one run (release build; needs ../shared/recordings and ffmpeg). With no mode: --scale and --stream (about 10 minutes).",
        arguments: [("<video>", "Measure the per-stage costs of this clip (as --pipeline <video>).")],
        options: [
            .optionalValue("--scale", "SIZES", "Decode-only, analyze and the naive pipeline at each size (default 480,720,1080), side by side."),
            .option("--rounds", "N", "Rounds of --scale, each clip measured in turn (1-100, default 3): medians and the ratios' ranges."),
            .flag("--stream", "The streaming service under load: one session's latency, then concurrent real-time sessions."),
            .option("--sessions", "N", "With --stream: measure this many concurrent sessions only (1-256)."),
            .option("--seconds", "S", "With --stream: seconds of streaming per measurement (1-600, default 10)."),
            .option("--data-dir", "DIR", "With --stream: the service keeps its sessions in a store in DIR, as liveness serve --data-dir (docs/store.md)."),
            .option("--store", "URL", "With --stream: the service keeps its sessions in this PostgreSQL server, as liveness serve --store URL (docs/store.md)."),
            .optionalValue("--pipeline", "VIDEO", "Per-stage costs of one clip (default ../shared/recordings/lp-d13-phone-selfie-glasses.mp4)."),
            .option("--repeat", "N", "With --pipeline: runs of the clip (1-100, default 1)."),
        ],
        positionalCount: 0...1,
        program: "liveness-bench")

    package init() {}

    /// Parses the arguments (without the program name); nil for `--help`.
    package static func parse(_ arguments: [String]) throws(UsageError) -> BenchmarkOptions? {
        let parsed = try spec.parse(arguments)
        if parsed.help { return nil }
        var options = BenchmarkOptions()
        let all = parsed.positionals.isEmpty && parsed.value("--scale") == nil && !parsed.has("--stream")
            && parsed.value("--pipeline") == nil
        if let sizes = parsed.value("--scale") {
            if sizes.isEmpty {
                options.scaleSizes = defaultScaleSizes
            } else {
                let list = sizes.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
                guard list.allSatisfy({ $0.map { (144...4320).contains($0) } ?? false }) else {
                    throw UsageError("--scale needs sizes from 144 to 4320 separated by commas (480,720), not '\(sizes)'")
                }
                options.scaleSizes = list.compactMap { $0 }
            }
        } else if all {
            options.scaleSizes = defaultScaleSizes
        }
        options.rounds = try parsed.integer("--rounds", in: 1...100) ?? 3
        options.stream = parsed.has("--stream") || all
        options.sessions = try parsed.integer("--sessions", in: 1...256)
        if let text = parsed.value("--seconds") {
            guard let seconds = Double(text), seconds.isFinite, (1...600).contains(seconds) else {
                throw UsageError("option '--seconds' needs a number of seconds from 1 to 600, not '\(text)'")
            }
            options.seconds = seconds
        }
        if let video = parsed.positionals.first {
            if let named = parsed.value("--pipeline"), !named.isEmpty, named != video {
                throw UsageError("two clips for the pipeline: '\(video)' and '--pipeline \(named)'")
            }
            options.pipelineVideo = video
        } else if let named = parsed.value("--pipeline") {
            options.pipelineVideo = named.isEmpty ? defaultPipelineVideo : named
        }
        options.repeats = try parsed.integer("--repeat", in: 1...100) ?? 1
        options.storeDirectory = parsed.value("--data-dir")
        options.storeURL = parsed.value("--store")
        if options.storeDirectory != nil && options.storeURL != nil {
            throw UsageError("--data-dir and --store name two stores: give one")
        }
        for (option, mode) in [("--rounds", options.scaleSizes != nil), ("--sessions", options.stream), ("--seconds", options.stream), ("--data-dir", options.stream),
                               ("--store", options.stream),
                               ("--repeat", options.pipelineVideo != nil)] where parsed.value(option) != nil && !mode {
            throw UsageError("\(option) belongs to another mode than the ones asked for")
        }
        return options
    }
}
