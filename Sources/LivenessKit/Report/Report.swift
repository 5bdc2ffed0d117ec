import LivenessCore

/// The result of one liveness session, as written to `report.json` (`analyze`) or printed by
/// `liveness replay --json`: schema `liveness-report/1`, documented field by field in
/// `docs/report-schema.md`.
///
/// Every key of the schema is always present; unknown or absent values are encoded as JSON
/// `null` (the two exceptions are structural: `framed` exists only on the autoshot and
/// `direction` only on the head turn). Times are seconds from the first frame.
public struct LivenessReport: Sendable, Equatable, Codable {
    /// The schema identifier this type writes.
    public static let schemaIdentifier = "liveness-report/1"

    /// Always `liveness-report/1`.
    public var schema: String
    /// The engine that judged the session.
    public var engine: Engine
    /// The input judged.
    public var input: ReportInput
    /// The policy the session was judged with, every key.
    public var policy: LivenessPolicy
    /// Seed of the challenge order generator.
    public var seed: UInt64
    /// The drawn challenge order (never shown to the user; any order of performance counts).
    public var challenge: [Action]
    /// The outcome.
    public var verdict: VerdictReport
    /// Per-action evidence.
    public var actions: Actions
    /// The autoshot, or `nil` when none was taken.
    public var autoshot: Still?
    /// The snapshot, or `nil` when none was taken (failed sessions).
    public var snapshot: Still?
    /// Frame counts.
    public var frames: FrameCounts
    /// How long the analysis took on the wall clock.
    public var timing: Timing
    /// Problems worth knowing that did not stop the analysis, one sentence each.
    public var warnings: [String]
    /// The problem that made the input unusable (verdict `invalidInput`): the file and what is
    /// wrong with it, in the engine's words; `nil` (JSON `null`) otherwise.
    public var error: String?
    /// The security thresholds of `policy` set weaker than the spec (or, for the signal
    /// conditioning, than the measured defaults), by key in the order of
    /// `LivenessPolicy.bounds`; empty for a policy at least as strict. A front end accepts such
    /// a policy only when asked to (`--allow-weaker-policy`). Derived from `policy`, so it is
    /// written with every report and recomputed when one is decoded.
    public var policyWeakerThanSpec: [String] { policy.weakerThanSpec.map(\.key) }
    /// The presentation-attack checks (docs/presentation-attacks.md); `nil` only in reports
    /// decoded from before the key existed.
    public var presentationAttack: PresentationAttack?
    /// The challenge mode and, when prompted, every prompt shown with its answer; `nil` only in
    /// reports decoded from before the key existed.
    public var prompts: PromptsReport?

    /// The software that produced the report.
    public struct Engine: Sendable, Equatable, Codable {
        /// Always `liveness`.
        public var name: String
        /// `LivenessEngine.version`.
        public var version: String
    }

    /// The verdict: `passed`, or `failed` with a reason.
    public struct VerdictReport: Sendable, Equatable, Codable {
        /// `passed` or `failed`.
        public var status: VerdictStatus
        /// The failure reason; `nil` (JSON `null`) when passed.
        @NullWhenAbsent public var reason: FailureReason?
        /// Seconds from the first frame to the frame that decided it (or to the last frame seen,
        /// when the input ended before a verdict).
        public var seconds: Double

        private enum CodingKeys: String, CodingKey { case status, reason, seconds }
    }

    /// The two actions' evidence.
    public struct Actions: Sendable, Equatable, Codable {
        /// The blink.
        public var blink: Blink
        /// The head turn.
        public var turnHead: Turn
    }

    /// Whether a blink was credited, and where. The optional fields are `nil` (JSON `null`) when not credited.
    public struct Blink: Sendable, Equatable, Codable {
        /// Whether the blink was credited.
        public var credited: Bool
        /// Index of the crediting frame.
        @NullWhenAbsent public var frame: Int?
        /// Seconds from the first frame to the crediting frame.
        @NullWhenAbsent public var seconds: Double?
        /// Mean eye closure of the two eyes on that frame, 0…1.
        @NullWhenAbsent public var value: Double?

        private enum CodingKeys: String, CodingKey { case credited, frame, seconds, value }
    }

    /// Whether a head turn was credited, where and which way. The optional fields are `nil`
    /// (JSON `null`) when not credited.
    public struct Turn: Sendable, Equatable, Codable {
        /// Whether the turn was credited.
        public var credited: Bool
        /// Index of the crediting frame (the last of the held run).
        @NullWhenAbsent public var frame: Int?
        /// Seconds from the first frame to the crediting frame.
        @NullWhenAbsent public var seconds: Double?
        /// Relative yaw on that frame in degrees, signed (positive: the subject's own left).
        @NullWhenAbsent public var value: Double?
        /// `left` or `right`, the subject's own.
        @NullWhenAbsent public var direction: TurnDirection?

        private enum CodingKeys: String, CodingKey { case credited, frame, seconds, value, direction }
    }

    /// A still (autoshot or snapshot).
    public struct Still: Sendable, Equatable, Codable {
        /// Index of the frame kept.
        public var frame: Int
        /// Seconds from the first frame.
        public var seconds: Double
        /// Where the JPEG was written, or `nil` (JSON `null`) when no still was written (traces,
        /// failed sessions, or the caller did not ask for stills).
        @NullWhenAbsent public var path: String?
        /// The face box in pixels on that frame, or `nil` when no face (or no box) was tracked.
        @NullWhenAbsent public var box: FaceBox?
        /// Autoshot only: `true` when framed (face in the guide), `false` for the framing-timeout
        /// fallback. `nil` for the snapshot, whose object has no `framed` key.
        public var framed: Bool?

        private enum CodingKeys: String, CodingKey { case frame, seconds, path, box, framed }
    }

    /// What the presentation-attack checks found.
    public struct PresentationAttack: Sendable, Equatable, Codable {
        /// The parallax check of the head turn: status `off`, `notEvaluated`, `depth` or `flat`,
        /// the largest residual of the judged turn (fraction of the eye distance) and the
        /// threshold it was compared with.
        public var parallax: ParallaxEvidence
        /// The frozen-input check: status `off`, `notEvaluated`, `live` or `frozen`, and the
        /// longest run of unchanged frames.
        public var frozen: FrozenEvidence
        /// The looped-input check: status `off`, `notEvaluated`, `live` or `looped`, the longest
        /// moving stretch that repeated an earlier one and its lag.
        public var looped: LoopEvidence
        /// The recapture check: status `off`, `notEvaluated`, `live` or `recaptured`, the highest
        /// window enclosure (grey levels) and the threshold it was compared with.
        public var recapture: RecaptureEvidence
        /// The continuity check: status `off`, `notEvaluated`, `live` or `cut`, the largest jump
        /// ratio of a frame that changed at least `cutMinDifference`, and the threshold.
        public var continuity: ContinuityEvidence
    }

    /// Frame counts (see `Evidence` for the exact rules).
    public struct FrameCounts: Sendable, Equatable, Codable {
        /// Frames processed by the state machine, up to and including the deciding frame.
        public var read: Int
        /// Processed frames with a tracked face.
        public var tracked: Int
        /// Scan frames credited (may count towards an action).
        public var credited: Int
        /// Scan frames with a face not credited because the device rotated at or above the limit.
        public var rotating: Int
        /// Credited scan frames whose device rotation was unknown.
        public var rotationUnknown: Int
        /// Frames that came after the verdict: counted, not processed.
        public var ignoredAfterVerdict: Int
    }

    /// Wall-clock cost of the analysis.
    public struct Timing: Sendable, Equatable, Codable {
        /// Wall-clock seconds the analysis took (decoding, tracking, judging; or parsing and judging).
        public var wallSeconds: Double
        /// Processing speed: `frames.read / wallSeconds`, frames per wall-clock second; `nil` when
        /// `wallSeconds` is 0.
        @NullWhenAbsent public var framesPerSecond: Double?

        private enum CodingKeys: String, CodingKey { case wallSeconds, framesPerSecond }
    }

    private enum CodingKeys: String, CodingKey {
        case schema, engine, input, policy, seed, challenge, verdict, actions, autoshot, snapshot, frames, timing, warnings
        case error, presentationAttack, prompts
    }

    /// Keys added to `liveness-report/1` after its first version: written, not needed to decode
    /// (reports written before them still decode).
    private enum AddedKeys: String, CodingKey {
        case policyWeakerThanSpec
    }

    /// Encodes every key; a missing autoshot or snapshot as `null`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(engine, forKey: .engine)
        try c.encode(input, forKey: .input)
        try c.encode(policy, forKey: .policy)
        try c.encode(seed, forKey: .seed)
        try c.encode(challenge, forKey: .challenge)
        try c.encode(verdict, forKey: .verdict)
        try c.encode(actions, forKey: .actions)
        try c.encodeOrNull(autoshot, forKey: .autoshot)
        try c.encodeOrNull(snapshot, forKey: .snapshot)
        try c.encode(frames, forKey: .frames)
        try c.encode(timing, forKey: .timing)
        try c.encode(warnings, forKey: .warnings)
        try c.encodeOrNull(error, forKey: .error)
        try c.encodeOrNull(presentationAttack, forKey: .presentationAttack)
        try c.encodeOrNull(prompts, forKey: .prompts)
        var added = encoder.container(keyedBy: AddedKeys.self)
        try added.encode(policyWeakerThanSpec, forKey: .policyWeakerThanSpec)
    }
}
