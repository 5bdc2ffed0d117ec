import LivenessKit
import Foundation

/// What a generated case must produce under the default policy (`expected.json` beside its
/// `recipe.json`). Absent keys are not checked. Times are seconds from the first frame.
public struct CaseExpectation: Codable, Sendable {
    /// An action's expected outcome: credited or not and, when credited, the window of the
    /// crediting frame's time (inclusive) and, for a turn, the subject's direction.
    public struct ActionExpectation: Codable, Sendable {
        public var credited: Bool
        public var from: Double?
        public var to: Double?
        public var direction: String?
    }
    /// The autoshot: framed or fallback, and the window of its time.
    public struct AutoshotExpectation: Codable, Sendable {
        public var framed: Bool
        public var from: Double
        public var to: Double
    }
    /// Tolerance of the video rotation estimate: |estimate − truth| ≤ max(relative·truth, absolute).
    public struct RotationTolerance: Codable, Sendable {
        public var relative: Double
        public var absoluteDegreesPerSecond: Double
    }
    public var verdict: String
    public var reason: String?
    public var blink: ActionExpectation?
    public var turn: ActionExpectation?
    public var autoshot: AutoshotExpectation?
    /// Window of the verdict's time (timeouts).
    public var verdictFrom: Double?
    public var verdictTo: Double?
    /// Least and greatest fraction of frames with a tracked face.
    public var faceFoundMin: Double?
    public var faceFoundMax: Double?
    /// Largest mean |measured − true| yaw in degrees, each taken relative to its median over the
    /// first 0.5 s: the camera-axis yaw against the truth's `yawCamera`, and the line-of-sight
    /// yaw against the truth's `yaw`; both must hold.
    public var yawMaxMeanAbsErrorDegrees: Double?
    /// When present, the video rotation estimate is checked against the true camera speed.
    public var rotationTolerance: RotationTolerance?
    /// Rotation sources to run the case with: `video` (estimated from the background, the
    /// default), `sensor` (the case's motion.csv) and/or `none` (no estimate: every frame's
    /// rotation is unknown and credited, so the yaw alone decides the turn). Each must give the
    /// expected outcome.
    public var sources: [String]?
    /// The parallax check's status on the case (`off`, `notEvaluated`, `depth`, `flat`;
    /// docs/presentation-attacks.md): `flat` for the flat presentation attacks, `depth` for a
    /// live turn.
    public var parallax: String?
    /// The frozen-input check's status (`off`, `notEvaluated`, `live`, `frozen`).
    public var frozen: String?
    /// The looped-input check's status (`off`, `notEvaluated`, `live`, `looped`).
    public var looped: String?
    /// The recapture check's status (`off`, `notEvaluated`, `live`, `recaptured`).
    public var recapture: String?
    /// The continuity check's status (`off`, `notEvaluated`, `live`, `cut`).
    public var continuity: String?
    /// Prompted cases (a generated case whose output holds prompts.jsonl, judged with
    /// `challengeMode` prompted against that log, signed by the harness): the outcome of every
    /// prompt shown, in order (`followed`, `wrongDirection`, `wrongAction`, `anticipated`,
    /// `missed`, `pending`); prompts never shown are not listed.
    public var prompts: [String]?
    /// Prompted cases: the direction of a turn credited while no prompt was open (`left`,
    /// `right`), or `none`.
    public var unpromptedTurn: String?
    /// What the case must produce run again with the recapture check off (`recaptureCheck` 0):
    /// for the screen and print attacks the recapture check decides first, and this run keeps
    /// the checks behind it (parallax, frozen, looped) measured on them too. A second row of the
    /// suite, source `<source>,rc=0`.
    public var withRecaptureOff: NestedExpectation?
    /// A known engine problem this case shows (reported, never silently accepted).
    public var knownIssue: String?
    public var notes: String?
}

/// An expectation inside another (`CaseExpectation.withRecaptureOff`), decoded from the same keys.
public final class NestedExpectation: Codable, Sendable {
    public let expectation: CaseExpectation
    public init(_ expectation: CaseExpectation) { self.expectation = expectation }
    public init(from decoder: any Decoder) throws { expectation = try CaseExpectation(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try expectation.encode(to: encoder) }
}

/// The generator's per-frame truth (`truth.json`, schema liveness-generated-truth/1).
public struct CaseTruth: Codable, Sendable {
    public struct Frame: Codable, Sendable {
        public var t: Double
        /// The head's turn about its neck, degrees (positive: the subject's left): its yaw
        /// against the line of sight from the head to the camera, which camera rotation and
        /// the face's position in the frame leave unchanged. What the line-of-sight yaw should give.
        public var yaw: Double
        /// The head's yaw against the camera's axes (`yaw` minus the angle of the ray to the
        /// face): what a camera-axis measurement should give. Nil without a face.
        public var yawCamera: Double?
        public var closure: Double
        public var cameraDegPerSec: Double
    }
    public var frames: [Frame]
    /// The prompts of a prompted case (`prompts` in the recipe): nil otherwise.
    public var prompts: PromptsTruth?
}

/// The truth of a prompted case (truth.json's `prompts`, Tools/generator/prompts.py): when each
/// prompt was shown and how the head answered it, on the video clock.
public struct PromptsTruth: Codable, Sendable {
    /// A prompt as the capture client logged it.
    public struct Shown: Codable, Sendable {
        public var index: Int
        public var step: String
        /// Seconds; nil for a step never shown.
        public var t: Double?
        /// The first frame at or after `t`.
        public var frame: Int?
    }
    /// The head's answer to a shown prompt (`follow` true).
    public struct Answer: Codable, Sendable {
        public var index: Int
        /// The prompted step, and what the head did (`turnLeft`, `turnRight`, `blink`, `none`).
        public var step: String
        public var did: String
        /// When the head starts to move or the blink starts (seconds), and that minus the prompt.
        public var start: Double?
        public var reaction: Double?
        /// A turn: the exact time its yaw (relative to the yaw at 0 s) crosses `onsetDegrees`,
        /// that minus the prompt, and the first frame at or after it.
        public var onset: Double?
        public var onsetReaction: Double?
        public var onsetFrame: Int?
        /// A blink: when the lids are fully closed (seconds), the frames of its start and of that.
        public var closed: Double?
        public var startFrame: Int?
        public var closedFrame: Int?
        public var end: Double?
    }
    /// A stretch of the head's yaw turned by at least `onsetDegrees` to one side.
    public struct Turn: Codable, Sendable {
        public var onset: Double
        public var end: Double?
        public var direction: String
        public var peakDegrees: Double
        public var reachesTurn: Bool
    }
    public var session: String
    public var follow: Bool
    public var onsetDegrees: Double
    public var shown: [Shown]
    public var answers: [Answer]
    public var turns: [Turn]
}

/// One generated case on disk: Recordings/cases/<name>/ and its rendered output.
public struct RegressCase: Sendable {
    public var name: String
    public var expectation: CaseExpectation
    /// Rendered video, truth and optional motion sidecar.
    public var video: String
    public var truthPath: String
    public var motionPath: String
    /// The generator's unsigned prompt log (prompted cases only: present when the recipe has
    /// `prompts`); the harness signs it and judges the case with it.
    public var promptLogPath: String

    /// The cases under `directory` (folders holding recipe.json and expected.json); their
    /// output is looked for under `outputDirectory/<name>/`.
    public static func load(directory: String, outputDirectory: String) throws -> [RegressCase] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        var cases: [RegressCase] = []
        for name in names {
            let folder = directory + "/" + name
            let expectedPath = folder + "/expected.json"
            guard FileManager.default.fileExists(atPath: folder + "/recipe.json"),
                  let data = FileManager.default.contents(atPath: expectedPath) else { continue }
            let expectation = try decodeJSON(CaseExpectation.self, from: data, path: expectedPath, what: "the expectation")
            let out = outputDirectory + "/" + name
            cases.append(RegressCase(name: name, expectation: expectation, video: out + "/video.mp4",
                                     truthPath: out + "/truth.json", motionPath: out + "/motion.csv",
                                     promptLogPath: out + "/prompts.jsonl"))
        }
        return cases
    }
}
