/// What the continuity check found, for the report (`presentationAttack.continuity`).
public struct ContinuityEvidence: Sendable, Equatable, Codable {
    /// The outcome.
    public enum Status: String, Sendable, Codable {
        /// The check is switched off (`LivenessPolicy.continuityCheck` 0).
        case off
        /// No frame could be judged (ARKit traces and engine traces without `frame_difference`
        /// carry no differences; fewer than six consecutive frames with a face at camera rates).
        case notEvaluated
        /// No frame jumped: the face region changed as a camera's picture of a head does.
        case live
        /// A frame jumped between still neighbours (a slideshow, a cut): the session failed with
        /// `presentationAttack`.
        case cut
    }

    /// The outcome.
    public var status: Status
    /// The largest jump ratio of a judged frame whose difference reached `cutMinDifference`: its
    /// difference from the previous frame divided by the largest difference of its three frames
    /// before and two after (at least `ContinuityRules.differenceFloor`); 0 when no frame changed
    /// that much. Compared with `threshold`.
    public var largestJumpRatio: Double
    /// `LivenessPolicy.cutMinRatio`.
    public var threshold: Double
    /// Frames judged (with their five neighbours at camera intervals).
    public var framesJudged: Int
    /// The frame that jumped, when `cut` (the verdict comes two frames later, when its
    /// neighbours after it are known); nil otherwise.
    @NullWhenAbsent public var frameIndex: Int?

    /// Creates continuity evidence.
    public init(status: Status, largestJumpRatio: Double, threshold: Double, framesJudged: Int, frameIndex: Int?) {
        self.status = status
        self.largestJumpRatio = largestJumpRatio
        self.threshold = threshold
        self.framesJudged = framesJudged
        self.frameIndex = frameIndex
    }

    private enum CodingKeys: String, CodingKey { case status, largestJumpRatio, threshold, framesJudged, frameIndex }
}

/// Fixed rules of the continuity check.
public enum ContinuityRules {
    /// Frames before and after a frame that must be still for its change to be a jump.
    public static let framesBefore = 3
    public static let framesAfter = 2
    /// The neighbours' largest difference is taken as at least this, grey levels (a picture held
    /// perfectly still, without noise, differs by 0).
    public static let differenceFloor = 0.3
    /// The longest frame interval within the six frames for a jump to be judged, seconds: across
    /// a longer gap (dropped frames, a stream that stalled) the head may really have moved.
    public static let maximumIntervalSeconds = 0.25
}

/// The continuity check (docs/presentation-attacks.md): a camera films a head that moves
/// continuously — even a fast blink or turn changes the face region over several frames, among
/// neighbours that move too. A slideshow of photos (eyes open, eyes closed, head turned, each held
/// with a little noise or hand jitter) or a cut in an edited video holds the picture still, then
/// jumps to another in one frame, then holds it again. Each observation may carry
/// `Observation.frameDifference` (the face region's mean absolute change since the previous
/// frame, grey levels; on the frame where the face leaves its region, the change of the region it
/// left). A frame **jumps** when its difference is at least `cutMinDifference` and at least
/// `cutMinRatio` times the largest difference of the `framesBefore` frames before it and the
/// `framesAfter` frames after it (all with a difference, at most `maximumIntervalSeconds` apart):
/// the session fails with `presentationAttack`, decided on the frame `framesAfter` after the jump.
/// A session does not pass while one of its last `framesAfter` frames may be a jump (it changed
/// that much among still frames before it): the pass waits for the frames that decide (at most
/// two frames, and only after a sudden change of a still face).
struct ContinuityCheck: Sendable {
    private let enabled: Bool
    private let minDifference: Double
    private let minRatio: Double
    private let maxIntervalMicroseconds: Int64
    private var frames: [(t: Int64, d: Double?, index: Int)] = []
    private(set) var evidence: ContinuityEvidence

    init(policy: LivenessPolicy) {
        enabled = policy.continuityCheck != 0
        minDifference = policy.cutMinDifference
        minRatio = policy.cutMinRatio
        maxIntervalMicroseconds = microseconds(ContinuityRules.maximumIntervalSeconds)
        evidence = ContinuityEvidence(status: enabled ? .notEvaluated : .off, largestJumpRatio: 0,
                                      threshold: policy.cutMinRatio, framesJudged: 0, frameIndex: nil)
    }

    private static var span: Int { ContinuityRules.framesBefore + 1 + ContinuityRules.framesAfter }

    /// Whether frames `range` of the kept frames all have a difference and lie at camera intervals.
    private func regular(_ range: Range<Int>) -> Bool {
        guard range.lowerBound >= 0, range.upperBound <= frames.count else { return false }
        for i in range {
            guard frames[i].d != nil else { return false }
            if i > range.lowerBound, frames[i].t - frames[i - 1].t > maxIntervalMicroseconds { return false }
        }
        return true
    }

    /// The largest difference of the frames `range`, at least the floor.
    private func largest(_ range: Range<Int>) -> Double {
        max(ContinuityRules.differenceFloor, frames[range].compactMap(\.d).max() ?? 0)
    }

    /// Whether the pass must wait: one of the last `framesAfter` frames changed by at least
    /// `cutMinDifference` and `cutMinRatio` times its still frames before; its frames after are
    /// not all known yet.
    var holdsPass: Bool {
        guard enabled else { return false }
        let before = ContinuityRules.framesBefore
        let first = max(before, frames.count - ContinuityRules.framesAfter)
        guard first < frames.count else { return false }
        for k in first..<frames.count {
            guard let d = frames[k].d, d >= minDifference, regular((k - before)..<(k + 1)) else { continue }
            if d >= minRatio * largest((k - before)..<k) { return true }
        }
        return false
    }

    /// Observes frame `frameIndex`'s difference at `t` µs; returns true when the frame
    /// `framesAfter` before it is judged a jump.
    mutating func observe(difference: Double?, at t: Int64, frameIndex: Int) -> Bool {
        guard enabled else { return false }
        frames.append((t, difference, frameIndex))
        if frames.count > Self.span { frames.removeFirst(frames.count - Self.span) }
        guard frames.count == Self.span, regular(0..<Self.span) else { return false }
        let k = ContinuityRules.framesBefore
        let d = frames[k].d!
        evidence.framesJudged += 1
        if evidence.status == .notEvaluated { evidence.status = .live }
        guard d >= minDifference else { return false }
        let ratio = d / max(largest(0..<k), largest((k + 1)..<Self.span))
        evidence.largestJumpRatio = max(evidence.largestJumpRatio, ratio)
        guard ratio >= minRatio else { return false }
        evidence.status = .cut
        evidence.frameIndex = frames[k].index
        return true
    }
}
