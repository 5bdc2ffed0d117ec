import FaceTracking

/// What one input may cost, whatever it declares: every limit is checked before the work it
/// bounds, and an input beyond one ends as `invalidInput` with the limit named (docs/hardening.md).
///
/// Time comes from the frames, so the policy bounds a session's media time (settle + framing +
/// the scan cap: 22.8 s by default); these bound what a file can make the engine do within it.
public struct ResourceLimits: Sendable, Equatable, Codable {
    /// Largest frame or still, pixels (the shim's `ft_limits`; checked from the header).
    public var maxFramePixels: Int
    /// Largest width or height, pixels.
    public var maxFrameSide: Int
    /// Highest frame rate accepted, frames per second of media time: a video declaring more is
    /// refused at open, and one whose frames arrive faster (more than `maxFramesPerSecond × (t −
    /// t₀ + 1 s)` frames by time t) is stopped there. Phones record slow motion at 240 fps.
    public var maxFramesPerSecond: Double
    /// Decoded megapixels per input (analysis stops at the verdict, so this bounds the decoding of
    /// a session that runs to the cap): 12,000 is 22.8 s of 4K at 60 fps or 1080p at 240 fps.
    public var maxDecodedMegapixels: Double
    /// Media time a trace (which reads the whole input, not stopping at a verdict) may cover,
    /// seconds: a video declaring more is refused at open, one whose frames go past it is
    /// stopped there with an error. A 1-hour face-less clip at 1 fps took 118 s to trace.
    public var maxTraceSeconds: Double = 600

    /// The engine's limits.
    public static let standard = ResourceLimits(maxFramePixels: FrameLimits.maxFramePixels,
                                                maxFrameSide: FrameLimits.maxFrameSide,
                                                maxFramesPerSecond: 240, maxDecodedMegapixels: 12_000)

    /// Creates limits (the shim's frame limits are fixed; these values only describe them).
    public init(maxFramePixels: Int, maxFrameSide: Int, maxFramesPerSecond: Double, maxDecodedMegapixels: Double,
                maxTraceSeconds: Double = 600) {
        self.maxFramePixels = maxFramePixels
        self.maxFrameSide = maxFrameSide
        self.maxFramesPerSecond = maxFramesPerSecond
        self.maxDecodedMegapixels = maxDecodedMegapixels
        self.maxTraceSeconds = maxTraceSeconds
    }
}

/// Counts what an input has cost so far and stops it at the first limit it passes.
struct ResourceBudget {
    let limits: ResourceLimits
    /// Whether the decoded-megapixel budget applies (analysis; a trace reads whole files).
    let boundDecoding: Bool
    private var frames = 0
    private var megapixels = 0.0
    private var first: Int64?
    private var latest: Int64 = .min

    init(limits: ResourceLimits, boundDecoding: Bool) {
        self.limits = limits
        self.boundDecoding = boundDecoding
    }

    /// Checks a video's declared frame rate (and, for a trace, its declared duration) before decoding.
    func admit(path: String, declaredFramesPerSecond fps: Double, declaredSeconds: Double = 0) throws(InputError) {
        if fps > limits.maxFramesPerSecond {
            throw InputError(path: path, problem: "the video declares \(NumberFormat.string(fps)) frames per second, above the limit of \(NumberFormat.string(limits.maxFramesPerSecond))")
        }
        if !boundDecoding && declaredSeconds > limits.maxTraceSeconds {
            throw InputError(path: path, problem: "the video lasts \(Int(declaredSeconds.rounded())) s; a trace covers at most \(Int(limits.maxTraceSeconds)) s of media (cut the video first)")
        }
    }

    /// Counts one decoded frame of `width`×`height` pixels at `timestamp` (µs).
    mutating func count(path: String, width: Int, height: Int, timestamp: Int64) throws(InputError) {
        frames += 1
        megapixels += Double(width) * Double(height) / 1e6
        if first == nil { first = timestamp }
        latest = max(latest, timestamp)
        let span = Double(latest - first!) / 1e6
        if Double(frames) > limits.maxFramesPerSecond * (span + 1) {
            throw InputError(path: path, problem: "\(frames) frames within \(NumberFormat.string(span)) s of media time: frames arrive faster than the limit of \(NumberFormat.string(limits.maxFramesPerSecond)) per second")
        }
        if !boundDecoding && span > limits.maxTraceSeconds {
            throw InputError(path: path, problem: "the frames go past \(Int(limits.maxTraceSeconds)) s of media, the most a trace covers (cut the video first)")
        }
        if boundDecoding && megapixels > limits.maxDecodedMegapixels {
            throw InputError(path: path, problem: "decoding budget exceeded: \(Int(megapixels)) megapixels decoded (limit \(Int(limits.maxDecodedMegapixels)))")
        }
    }
}
