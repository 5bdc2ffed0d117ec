import FaceTracking
import Foundation
import LivenessCore

/// A liveness session fed one frame at a time by a camera service: the push front end of the
/// engine (the library API behind `liveness serve`).
///
/// Frames go through the same `FrameProcessor` — the same tracker and the same
/// `LivenessMachine` — as `liveness analyze`, so a recording pushed frame by frame gives exactly
/// the events and verdict of analysing the file. Each `push` returns the events the frame caused
/// (HUD changes, autoshot, credited actions, snapshot, verdict); a refused frame throws a
/// `StreamError` and changes nothing. `finish(_:)` ends a stream without a verdict
/// (`cancelled` when the client closes it, `inputEnded`, `timeout` from the server's clock).
///
/// One session per stream, not thread-safe: push from one thread at a time. Many sessions may
/// run at once on different threads; the landmark model is loaded once per process and shared
/// read-only by all of them.
public final class StreamSession {
    /// How a session is judged and bounded.
    public struct Configuration: Sendable {
        /// Thresholds (defaults: the spec's).
        public var policy = LivenessPolicy()
        /// Seed of the challenge order (and, in prompted mode without a `plan`, of the prompts:
        /// tests only — a live service draws a `plan` from a cryptographic source).
        public var seed: UInt64 = 1
        /// Prompted mode: the prompts, drawn by the caller (`ChallengePlan.draw`) or logged.
        public var plan: ChallengePlan?
        /// Frame size and frame-rate limits.
        public var limits = ResourceLimits.standard
        /// Estimate the device rotation from the background when no motion sample is near a frame.
        public var estimateRotationFromVideo = true
        /// Largest frame accepted, pixels a side, when the client announced its size (0: the limits').
        public var announcedWidth = 0
        public var announcedHeight = 0
        /// Creates the default configuration.
        public init() {}
    }

    /// What a pushed frame did.
    public struct Update: Sendable {
        /// 0-based index of the frame among those pushed and accepted.
        public var frameIndex: Int
        /// The events the frame caused, in order; empty after the verdict.
        public var events: [LivenessEvent]
        /// The HUD state after the frame.
        public var hud: HUDState
        /// False for a frame that came after the verdict (counted, not processed).
        public var processed: Bool
        /// The frame's trace record (the columns of `liveness trace`), for a processed frame;
        /// nil for a frame after the verdict.
        public var record: TraceRecord?
    }

    /// The configuration the session was made with.
    public let configuration: Configuration
    private let processor: FrameProcessor
    private let rotation: StreamRotation
    private let frame = Image()
    private var lastTimestamp: Int64?
    private var firstTimestamp: Int64?
    private var accepted = 0
    private var ignoredAfterVerdict = 0
    private var framesWidth: Int?, framesHeight: Int?
    private let clock = ContinuousClock()
    private var busy: Duration = .zero

    /// Creates a session (`FrameProcessor`, tracker, machine) over the shared landmark model.
    public init(model: LandmarkModel, configuration: Configuration = .init()) throws(StreamError) {
        self.configuration = configuration
        rotation = StreamRotation(video: nil)
        do {
            processor = try FrameProcessor(model: model, policy: configuration.policy, seed: configuration.seed,
                                           rotation: nil, plan: configuration.plan)
        } catch {
            throw StreamError(.internal, "the tracker could not be created: \(error.message)", recoverable: false)
        }
    }

    /// The machine after the frames pushed so far (verdict, evidence, HUD).
    public var machine: LivenessMachine { processor.machine }
    /// The verdict, once given.
    public var verdict: Verdict? { processor.machine.verdict }
    /// Frames accepted so far (processed, or counted after the verdict).
    public var framesAccepted: Int { accepted + ignoredAfterVerdict }

    /// Pushes one frame; returns the events it caused.
    /// - Throws: `StreamError` for a frame that cannot be used (not an image, too large, a
    ///   timestamp that does not increase, frames faster than the limit); the session is
    ///   unchanged and later frames are still accepted (`isRecoverable`).
    public func push(_ input: StreamFrame) throws(StreamError) -> Update {
        let started = clock.now
        defer { busy += clock.now - started }
        let t = input.timestampMicroseconds
        // The machine's time range (±2⁶⁰ µs): beyond it a frame is the client's error, refused
        // here, not an internal failure further on.
        let limit = LivenessMachine.timestampLimitMicroseconds
        guard t >= -limit && t <= limit else {
            throw StreamError(.invalidFrame, "frame timestamp \(t) µs is outside the accepted range of ±\(limit) µs")
        }
        if let sample = input.motion.first(where: { $0.timestampMicroseconds < -limit || $0.timestampMicroseconds > limit }) {
            throw StreamError(.invalidMotion, "motion sample timestamp \(sample.timestampMicroseconds) µs is outside the accepted range of ±\(limit) µs")
        }
        if let last = lastTimestamp, t <= last {
            throw StreamError(.nonIncreasingTimestamp, "frame timestamp \(t) µs does not exceed the previous frame's \(last) µs")
        }
        if let last = lastTimestamp {
            let minimumGap = Int64((1e6 / configuration.limits.maxFramesPerSecond).rounded(.down))
            if t - last < minimumGap {
                throw StreamError(.tooFast, "frame at \(t) µs is \(t - last) µs after the previous one: faster than the limit of \(NumberFormat.string(configuration.limits.maxFramesPerSecond)) frames per second")
            }
        }
        if processor.machine.verdict != nil {
            // The spec: after the snapshot further frames are counted, not processed.
            lastTimestamp = t
            ignoredAfterVerdict += 1
            return Update(frameIndex: accepted + ignoredAfterVerdict - 1, events: [], hud: processor.machine.hud ?? .verifying,
                          processed: false, record: nil)
        }
        try load(input)
        guard [0, 90, 180, 270].contains(input.rotationDegrees) else {
            throw StreamError(.invalidFrame, "rotation \(input.rotationDegrees)° is not 0, 90, 180 or 270")
        }
        if input.rotationDegrees != 0 {
            do { try frame.rotate(clockwiseDegrees: input.rotationDegrees) } catch {
                throw StreamError(.internal, error.message, recoverable: false)
            }
        }
        for sample in input.motion {
            guard sample.x.isFinite, sample.y.isFinite, sample.z.isFinite else {
                throw StreamError(.invalidMotion, "a motion sample at \(sample.timestampMicroseconds) µs is not finite")
            }
        }
        if accepted == 0 {
            // The rotation source is fixed at the first frame: the background estimate needs the
            // frame size.
            let video = configuration.estimateRotationFromVideo ? VideoRotationEstimator(width: frame.width, height: frame.height) : nil
            rotation.setVideo(video)
            processor.setRotation(rotation)
            framesWidth = frame.width
            framesHeight = frame.height
            firstTimestamp = t
        } else if frame.width != framesWidth || frame.height != framesHeight {
            throw StreamError(.invalidFrame, "frame is \(frame.width)×\(frame.height), the stream's frames are \(framesWidth!)×\(framesHeight!)")
        }
        rotation.add(input.motion)
        let step: AnalysisStep
        do {
            step = try processor.process(frame, timestampMicroseconds: t)
        } catch {
            throw StreamError(.internal, "\(error)", recoverable: false)
        }
        lastTimestamp = t
        accepted += 1
        return Update(frameIndex: accepted - 1, events: step.events, hud: step.assessment.hud, processed: true,
                      record: step.record)
    }

    /// Ends the stream without a verdict: `.cancelled` (the client closed it), `.inputEnded`,
    /// `.timeout` (the server's own clock), `.invalidInput`. Returns the verdict events (none when
    /// a verdict was already given).
    public func finish(_ reason: FailureReason) -> [LivenessEvent] { processor.finish(reason) }

    /// The autoshot and snapshot as JPEG bytes, released only with a `passed` verdict (the spec:
    /// no stills are released otherwise); nil before that.
    public func stills(quality: Int = 92) -> (autoshot: [UInt8]?, snapshot: [UInt8]?) {
        guard processor.machine.verdict?.status == .passed else { return (nil, nil) }
        return ((try? processor.autoshot?.jpegData(quality: quality)) ?? nil,
                (try? processor.snapshot?.jpegData(quality: quality)) ?? nil)
    }

    /// The session's report (`liveness-report/1`, input kind `stream`); the stills' paths are
    /// given by the caller that stores them. A session without a verdict is reported as `finish`
    /// would end it (`inputEnded`).
    public func report(name: String, stillPaths: (autoshot: String?, snapshot: String?) = (nil, nil),
                       warnings: [String] = []) -> LivenessReport {
        let duration = lastTimestamp.flatMap { last in firstTimestamp.map { Double(last - $0) / 1e6 } }
        let fps = duration.flatMap { $0 > 0 && framesAccepted > 1 ? Double(framesAccepted - 1) / $0 : nil }
        let input = ReportInput(path: name, kind: .stream, width: framesWidth, height: framesHeight,
                                fps: fps.map(NumberFormat.quantized), frames: framesAccepted,
                                durationSeconds: duration)
        return LivenessReport(machine: processor.machine, input: input, wallSeconds: busy.inSeconds,
                              stills: stillPaths, warnings: warnings, ignoredAfterVerdict: ignoredAfterVerdict)
    }

    /// Refuses a frame of `width`×`height` beyond the session's frame limits (the service's are
    /// what cameras send, lower than a file's), before any pixel is decoded or copied.
    private func admit(width: Int, height: Int, what: String) throws(StreamError) {
        let limits = configuration.limits
        if max(width, height) > limits.maxFrameSide || width * height > limits.maxFramePixels {
            throw StreamError(.frameTooLarge, "\(what) is \(width)×\(height), beyond this session's limit of "
                + "\(NumberFormat.string(Double(limits.maxFramePixels) / 1e6)) megapixels and \(limits.maxFrameSide) pixels a side")
        }
        if configuration.announcedWidth > 0,
           max(width, height) > max(configuration.announcedWidth, configuration.announcedHeight)
            || width * height > configuration.announcedWidth * configuration.announcedHeight {
            throw StreamError(.frameTooLarge, "\(what) is \(width)×\(height), larger than the \(configuration.announcedWidth)×\(configuration.announcedHeight) announced")
        }
    }

    private func load(_ input: StreamFrame) throws(StreamError) {
        do {
            switch input.content {
            case let .pixels(bytes, format, width, height, bytesPerRow):
                try admit(width: width, height: height, what: "frame")
                if configuration.announcedWidth > 0 && (width > configuration.announcedWidth || height > configuration.announcedHeight) {
                    throw StreamError(.frameTooLarge, "frame is \(width)×\(height), larger than the \(configuration.announcedWidth)×\(configuration.announcedHeight) announced")
                }
                try frame.load(pixels: bytes, width: width, height: height, bytesPerRow: bytesPerRow, format: format)
            case let .encoded(bytes):
                // The size from the header first: a small JPEG can decode to tens of megapixels.
                let size = try Image.encodedSize(bytes)
                try admit(width: size.width, height: size.height, what: "image")
                try frame.load(encoded: bytes)
                if configuration.announcedWidth > 0 && (frame.width > configuration.announcedWidth || frame.height > configuration.announcedHeight) {
                    throw StreamError(.frameTooLarge, "image is \(frame.width)×\(frame.height), larger than the \(configuration.announcedWidth)×\(configuration.announcedHeight) announced")
                }
            }
        } catch let error as StreamError {
            throw error
        } catch let error as FaceTrackingError {
            throw StreamError(error.kind == .limit ? .frameTooLarge : .invalidFrame, error.message)
        } catch {
            throw StreamError(.invalidFrame, "\(error)")
        }
    }
}
