/// What the recapture check found, for the report (`presentationAttack.recapture`).
public struct RecaptureEvidence: Sendable, Equatable, Codable {
    /// The outcome.
    public enum Status: String, Sendable, Codable {
        /// The check is switched off (`LivenessPolicy.recaptureCheck` 0).
        case off
        /// No window held enough measurements (ARKit traces and engine traces written before the
        /// `border_enclosure` column carry none; a session that ended within a few frames).
        case notEvaluated
        /// No window of the session showed the face enclosed by a border.
        case live
        /// The face was enclosed by a screen's or a print's border for a whole window: the
        /// session failed with `presentationAttack`.
        case recaptured
    }

    /// The outcome.
    public var status: Status
    /// The highest window enclosure of the session, grey levels: the lower quartile of the
    /// `Observation.borderEnclosure` values of a window of `recaptureWindowSeconds` (at least
    /// `RecaptureCheck.minimumMeasurements` of them). Compared with `threshold`.
    public var windowEnclosure: Double
    /// `LivenessPolicy.recaptureMinEnclosure` (grey levels).
    public var threshold: Double
    /// Frames that carried an enclosure measurement.
    public var framesMeasured: Int
    /// The frame that decided `recaptured` (nil otherwise).
    @NullWhenAbsent public var frameIndex: Int?

    /// Creates recapture evidence.
    public init(status: Status, windowEnclosure: Double, threshold: Double, framesMeasured: Int, frameIndex: Int?) {
        self.status = status
        self.windowEnclosure = windowEnclosure
        self.threshold = threshold
        self.framesMeasured = framesMeasured
        self.frameIndex = frameIndex
    }

    private enum CodingKeys: String, CodingKey { case status, windowEnclosure, threshold, framesMeasured, frameIndex }
}

/// The recapture check (docs/presentation-attacks.md): a face shown to the camera on a screen or
/// a print sits inside that picture's border — a phone's bezel, a monitor's edge, the letterbox
/// bars of a played video, the edge of the paper — straight lines on three or four sides of the
/// face, one of them below the chin where a live subject's neck and body go on. Each observation
/// may carry `Observation.borderEnclosure` (measured by the front end on some frames: the border
/// below the chin and two more sides, grey levels).
///
/// The check keeps the measurements of the face it follows over the last
/// `recaptureWindowSeconds` (at least its last `minimumMeasurements`, at low frame rates); when they number at least `minimumMeasurements` and their lower
/// quartile reaches `recaptureMinEnclosure` — three quarters of the window's frames show the face
/// enclosed — the session fails with `presentationAttack`, in any phase. The lower quartile, not
/// the mean, so that a few frames where the room happens to line up round a live face (a door
/// frame, a shelf) never decide. The window starts again when the face is lost or its box jumps
/// by more than `faceJumpShare` of its width from one frame to the next (another face is
/// followed: a phone raised in front of the subject), so a live face's measurements never dilute
/// a screen's.
///
/// A session does not pass while the face it follows has been measured, but fewer than
/// `minimumMeasurements` times (`holdsPass`): the front end measures a newly followed face on
/// each of its first frames, so this holds a pass for at most a few frames, and never where no
/// measurement comes (ARKit traces, old engine traces, a face that cannot be measured).
struct RecaptureCheck: Sendable {
    static let minimumMeasurements = RecaptureRules.minimumMeasurements
    static let faceJumpShare = RecaptureRules.faceJumpShare
    private let enabled: Bool
    private let threshold: Double
    private let windowMicroseconds: Int64
    private var window: [(t: Int64, value: Double)] = []
    private var previousBox: FaceBox?
    private(set) var evidence: RecaptureEvidence

    init(policy: LivenessPolicy) {
        enabled = policy.recaptureCheck != 0
        threshold = policy.recaptureMinEnclosure
        windowMicroseconds = microseconds(policy.recaptureWindowSeconds)
        evidence = RecaptureEvidence(status: enabled ? .notEvaluated : .off, windowEnclosure: 0,
                                     threshold: policy.recaptureMinEnclosure, framesMeasured: 0, frameIndex: nil)
    }

    /// Whether a pass must wait: the followed face has measurements, fewer than the minimum.
    var holdsPass: Bool { enabled && !window.isEmpty && window.count < Self.minimumMeasurements }

    /// Observes frame `frameIndex` at `t` µs: its face box (nil without a face) and enclosure
    /// (nil when not measured); returns true when the input is judged recaptured.
    mutating func observe(enclosure: Double?, box: FaceBox?, hasFace: Bool, at t: Int64, frameIndex: Int) -> Bool {
        guard enabled else { return false }
        defer { previousBox = hasFace ? box : nil }
        if !hasFace {
            window.removeAll()
        } else if let b = box, let p = previousBox {
            let dx = (b.x + b.width / 2) - (p.x + p.width / 2), dy = (b.y + b.height / 2) - (p.y + p.height / 2)
            if (dx * dx + dy * dy).squareRoot() > Self.faceJumpShare * max(p.width, 1) { window.removeAll() }
        }
        // Keep the measurements of the last window (those less than the window's length older),
        // and at least the face's last `minimumMeasurements` (below 4 fps a window holds fewer).
        let oldest = t - windowMicroseconds
        while window.count > Self.minimumMeasurements, let first = window.first, first.t <= oldest { window.removeFirst() }
        guard let value = enclosure, hasFace else { return false }
        evidence.framesMeasured += 1
        window.append((t, value))
        guard window.count >= Self.minimumMeasurements else { return false }
        let sorted = window.map(\.value).sorted()
        let lowerQuartile = sorted[(sorted.count - 1) / 4]
        if evidence.status == .notEvaluated { evidence.status = .live }
        evidence.windowEnclosure = max(evidence.windowEnclosure, lowerQuartile)
        guard lowerQuartile >= threshold else { return false }
        evidence.status = .recaptured
        evidence.frameIndex = frameIndex
        return true
    }
}

/// Fixed rules of the recapture check, shared by the front end that measures and the machine
/// that decides.
public enum RecaptureRules {
    /// Measurements of the followed face a window needs before it decides anything.
    public static let minimumMeasurements = 4
    /// A face box whose centre moves by more than this share of its width between two frames is
    /// another face: the window starts again (and the front end measures densely again).
    public static let faceJumpShare = 0.5
}
