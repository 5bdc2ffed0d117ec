import LivenessCore

/// What a replay ended with.
public struct ReplayOutcome: Sendable {
    /// The machine after the deciding frame (or after `finish(.inputEnded)` when the trace ended
    /// first): its verdict and evidence.
    public var machine: LivenessMachine
    /// The trace's format.
    public var format: TraceFileFormat
    /// Frames in the trace (every record, those after the verdict included).
    public var frames: Int
    /// Frames fed to the machine: up to and including the deciding frame.
    public var framesFed: Int
    /// Frames after the verdict: read and checked for form, not fed to the machine.
    public var ignoredAfterVerdict: Int
    /// Seconds from the first frame to the last frame of the trace (0 for one frame or none).
    public var durationSeconds: Double
    /// Frame width in pixels, the first one the trace states; `nil` when it states none.
    public var frameWidth: Int?
    /// Frame height in pixels, the first one the trace states; `nil` when it states none.
    public var frameHeight: Int?
    /// The reader's warnings.
    public var warnings: [String]

    /// The `input` object of a report on this replay: kind `trace`, the trace's size, frames,
    /// duration and mean frame rate `(frames − 1) / duration` (`nil` below two frames).
    public func reportInput(path: String) -> ReportInput {
        ReportInput(path: path, kind: .trace, width: frameWidth, height: frameHeight,
                    fps: frames > 1 && durationSeconds > 0 ? NumberFormat.quantized(Double(frames - 1) / durationSeconds) : nil,
                    frames: frames, durationSeconds: durationSeconds, rotationDegrees: nil)
    }
}

/// Runs a trace through a fresh `LivenessMachine`: the same machine, fed the same observations,
/// as the front end that recorded the trace.
public enum TraceReplay {
    /// Replays every frame of `reader` up to the verdict; the frames after it are still read
    /// (so a malformed line anywhere is reported) and counted as ignored, but not fed. When the
    /// trace ends first the session is finished with `inputEnded` (or `noFace`, by the machine's rule).
    ///
    /// - Parameters:
    ///   - policy: the thresholds to judge with.
    ///   - seed: seed of the challenge order (1 is the `trace` and `replay` commands' default).
    /// - Throws: `TraceReadError` for a malformed line, or for a frame the machine rejects (a
    ///   timestamp that does not increase, a non-finite value), naming its line.
    public static func run(_ reader: TraceReader, policy: LivenessPolicy, seed: UInt64) throws(TraceReadError) -> ReplayOutcome {
        var machine = LivenessMachine(policy: policy, seed: seed)
        var frames = 0
        var fed = 0
        var ignored = 0
        var last: Int64 = 0
        var width: Int?
        var height: Int?
        while let frame = try reader.next() {
            frames += 1
            last = frame.observation.timestampMicroseconds
            if width == nil, let w = frame.observation.frameWidth, let h = frame.observation.frameHeight {
                width = w
                height = h
            }
            if machine.verdict != nil {
                ignored += 1
                continue
            }
            do {
                _ = try machine.observe(frame.observation)
            } catch let error as LivenessError {
                throw TraceReadError(path: reader.path, line: frame.line, problem: error.description)
            } catch {
                throw TraceReadError(path: reader.path, line: frame.line, problem: "\(error)")
            }
            fed += 1
        }
        if machine.verdict == nil { _ = machine.finish(.inputEnded) }
        var warnings = reader.warnings
        if frames == 0 { warnings.append("\(reader.path): the trace holds no frames") }
        return ReplayOutcome(machine: machine, format: reader.format, frames: frames, framesFed: fed,
                             ignoredAfterVerdict: ignored, durationSeconds: Double(last) / 1e6,
                             frameWidth: width, frameHeight: height, warnings: warnings)
    }
}
