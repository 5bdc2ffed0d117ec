import FaceTracking
import Foundation
import LivenessCore

/// What an analysis ended with.
public struct AnalysisOutcome {
    /// The machine after the last frame (verdict and evidence).
    public var machine: LivenessMachine
    /// Frames decoded (including frames rejected for their timestamps).
    public var framesDecoded: Int
    /// Frames rejected because their timestamps did not increase, with the first problem.
    public var framesRejected: Int
    public var warnings: [String]
    /// Wall-clock time of the run, seconds.
    public var wallSeconds: Double
}

/// Drives one input file through a `FrameProcessor`, frame by frame: the offline front end of
/// `trace` and `analyze`. It decodes, enforces the input's resource budget, skips frames whose
/// timestamps do not increase (with a warning) and ends the session with `inputEnded` when the
/// file ends before a verdict.
public final class AnalysisSession {
    public let source: FrameSource
    /// The processor every frame goes through (the same as a stream's).
    public let processor: FrameProcessor
    /// The machine after the frames processed so far.
    public var machine: LivenessMachine { processor.machine }
    private let stopAtVerdict: Bool
    /// Frames decoded ahead: 3, or fewer when frames are so large that three of them (with their
    /// grey copies) would cost hundreds of megabytes: one above 16 megapixels, two above 8.
    static func prefetchDepth(width: Int, height: Int) -> Int {
        let pixels = width * height
        return pixels > 16_000_000 ? 1 : pixels > 8_000_000 ? 2 : 3
    }

    /// What the input may cost (frame size, frame rate, decoding); see `ResourceLimits`.
    public let limits: ResourceLimits

    /// - Parameters:
    ///   - stopAtVerdict: stop decoding at the verdict (analysis); `false` traces every frame.
    ///   - rotation: where each frame's device angular speed comes from (nil: unknown).
    ///   - tracking: the tracker's settings; the guide circle is taken from `policy`.
    ///   - limits: what the input may cost; the decoded-megapixel budget applies when stopping at
    ///     the verdict (a trace reads whole files, its cost follows their duration).
    ///   - plan: prompted mode: the prompts (a logged plan for `analyze --challenge`); `nil` draws them from `seed`.
    ///   - parallelStages: estimate the device rotation on a second thread while the face is
    ///     tracked (for one input on a machine with an idle core; the results do not change).
    public init(source: FrameSource, model: LandmarkModel, policy: LivenessPolicy, seed: UInt64,
                keepLandmarks: Bool = false, stopAtVerdict: Bool = true, rotation: RotationProvider? = nil,
                tracking: TrackerConfiguration = .init(), limits: ResourceLimits = .standard,
                parallelStages: Bool = false, plan: ChallengePlan? = nil) throws(InputError) {
        self.source = source
        self.limits = limits
        do {
            processor = try FrameProcessor(model: model, policy: policy, seed: seed, rotation: rotation,
                                           tracking: tracking, keepLandmarks: keepLandmarks, plan: plan)
        } catch {
            throw InputError(path: source.path, error)
        }
        self.stopAtVerdict = stopAtVerdict
        processor.overlapRotationWithTracking(parallelStages)
    }

    /// Decodes and judges frames until the input ends (or the verdict, when stopping there),
    /// calling `body` for each; then ends the session with `inputEnded` if no verdict came.
    public func run(_ body: (AnalysisStep) throws -> Void) throws -> AnalysisOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        var decoded = 0
        var rejected = 0
        var warnings: [String] = []
        var previous: Int64?
        var budget = ResourceBudget(limits: limits, boundDecoding: stopAtVerdict)
        if let info = source.videoInfo {
            try budget.admit(path: source.path, declaredFramesPerSecond: info.framesPerSecond, declaredSeconds: info.durationSeconds)
        }
        // Decoding runs ahead on its own thread: frames and timestamps are those of reading the
        // file in turn.
        // Three frames ahead, fewer for huge frames so that any accepted file stays within 1 GB
        // (a 16384×3050 H.264 clip, 50 MP, peaked at 1.2 GB with three).
        let prefetcher = FramePrefetcher(source: source, depth: Self.prefetchDepth(width: source.width, height: source.height))
        defer { prefetcher.stop() }
        loop: while true {
            let item: DecodedFrame
            let timestamp: Int64
            switch prefetcher.next() {
            case .end:
                break loop
            case let .failure(failure):
                // A stream that breaks after some good frames ends there, like a truncated file.
                guard decoded > 0 else { throw failure }
                warnings.append("decoding stopped after \(decoded) frames: \(failure.problem)")
                break loop
            case let .frame(d, t):
                item = d
                timestamp = t
            }
            defer { prefetcher.recycle(item) }
            let frame = item.image
            decoded += 1
            try budget.count(path: source.path, width: frame.width, height: frame.height, timestamp: timestamp)
            if let previous, timestamp <= previous {
                // The spec: a frame whose timestamp does not increase is rejected and does not
                // advance the session. Count it and say so once.
                rejected += 1
                if rejected == 1 {
                    warnings.append("\(source.path): frame \(decoded - 1) has timestamp \(timestamp) µs, not after \(previous) µs; such frames are skipped")
                }
                continue
            }
            previous = timestamp
            let step: AnalysisStep
            do {
                step = try processor.process(frame, gray: item.hasGray ? item.gray : nil, timestampMicroseconds: timestamp)
            } catch let error as FaceTrackingError {
                throw InputError(path: source.path, error)
            }
            try body(step)
            if stopAtVerdict && processor.machine.verdict != nil { break loop }
        }
        if processor.machine.verdict == nil { _ = processor.finish(.inputEnded) }
        let skipped = source.skippedPictures
        if skipped > 0 {
            warnings.append("\(skipped) picture\(skipped == 1 ? " was" : "s were") skipped: damaged, or larger than the frame limit "
                + "(\(FrameLimits.maxFramePixels / 1_000_000) megapixels, \(FrameLimits.maxFrameSide) pixels a side; refused before decoding)")
        }
        return AnalysisOutcome(machine: processor.machine, framesDecoded: decoded, framesRejected: rejected,
                               warnings: warnings, wallSeconds: (clock.now - start).inSeconds)
    }
}

/// Supplies the device angular speed of each frame: from motion samples, or estimated from the
/// video. Implementations keep whatever state they need between frames.
public protocol RotationProvider: AnyObject {
    /// The device rotation over the interval ending at this frame.
    func rotation(for frame: Image, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation
    /// The same, given the frame's grey copy (`Image.gray(into:)`, made once per frame for the
    /// tracker too) for an estimate that works on grey; the results are those of
    /// `rotation(for:timestampMicroseconds:)`. The default ignores `gray`.
    func rotation(for frame: Image, gray: Image?, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation
    /// Called after the face tracker measured the frame (to mask the face out next time).
    func didObserve(_ measurement: FrameMeasurement)
    /// Offers to leave this frame's estimate until the tracker has measured the frame: true when
    /// the provider has kept what it needs and `resolveDeferred(hasFace:)` will give the estimate
    /// (a frame without a face is never credited, so its estimate can be skipped); false when the
    /// caller must call `rotation(for:gray:timestampMicroseconds:)` as usual. The default declines.
    func prepareDeferred(for frame: Image, gray: Image?, timestampMicroseconds: Int64) throws(InputError) -> Bool
    /// The estimate of the frame kept by `prepareDeferred`, told whether it shows a face.
    func resolveDeferred(hasFace: Bool) throws(InputError) -> DeviceRotation
}

extension RotationProvider {
    public func rotation(for frame: Image, gray: Image?, timestampMicroseconds: Int64) throws(InputError) -> DeviceRotation {
        try rotation(for: frame, timestampMicroseconds: timestampMicroseconds)
    }
    public func prepareDeferred(for frame: Image, gray: Image?, timestampMicroseconds: Int64) throws(InputError) -> Bool { false }
    public func resolveDeferred(hasFace: Bool) throws(InputError) -> DeviceRotation { .unknown }
}
