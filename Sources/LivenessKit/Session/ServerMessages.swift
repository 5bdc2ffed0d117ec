import Foundation
import LivenessCore

/// A JSON text message from the server to a camera client (`liveness-stream/1`,
/// docs/stream-protocol.md): an object whose `type` names the case, with the payload's fields
/// beside it. Each carries `seq`, the sequence number of the last frame processed (-1 before the
/// first). The server encodes these, `RecordingStreamer` and `liveness stream` decode them.
public enum ServerMessage: Sendable, Equatable, Codable {
    case session(Session)
    case hud(HUD)
    case prompt(Prompt)
    case promptAnswered(PromptAnswered)
    case autoshot(Autoshot)
    case action(ActionCredited)
    case snapshot(Snapshot)
    case verdict(Verdict)
    case flow(Flow)
    case error(ErrorReport)
    case ack(Ack)

    /// `type`: after the WebSocket opens, the session id, its limits, the server's clock and the
    /// session policy's guide circle, so that a client draws the circle the engine tests.
    public struct Session: Sendable, Equatable, Codable {
        public var id: String
        /// The protocol's version string, `liveness-stream/1`.
        public var `protocol`: String
        public var limits: StreamLimits
        /// The server's clock when the stream opened, microseconds since 1970 (UTC).
        public var serverTimeMicroseconds: Int64
        /// Centre normalised 0…1 of the upright frame's width and height, radius a fraction of
        /// its shorter side.
        public var guide: GuideCircle
        /// Always -1: no frame yet.
        public var seq: Int64
        public init(id: String, protocol: String = StreamProtocol.version, limits: StreamLimits, serverTimeMicroseconds: Int64,
                    guide: GuideCircle, seq: Int64 = -1) {
            self.id = id
            self.protocol = `protocol`
            self.limits = limits
            self.serverTimeMicroseconds = serverTimeMicroseconds
            self.guide = guide
            self.seq = seq
        }
    }

    /// `hud`: the HUD changed. `state` is `HUDState.name`, `text` what to show; `done` and
    /// `total` (actions) only for `progress`, `prompt` (the step asked for) only for `prompt`:
    /// absent otherwise.
    public struct HUD: Sendable, Equatable, Codable {
        public var state: String
        public var text: String
        public var done: Int?
        public var total: Int?
        public var prompt: PromptStep?
        public var seq: Int64
        public init(state: String, text: String, done: Int? = nil, total: Int? = nil, prompt: PromptStep? = nil, seq: Int64) {
            self.state = state
            self.text = text
            self.done = done
            self.total = total
            self.prompt = prompt
            self.seq = seq
        }
    }

    /// `prompt` (prompted mode): a prompt is shown from this frame on: the step, its text, its
    /// position in the plan (`index`, from 0, of `total`).
    public struct Prompt: Sendable, Equatable, Codable {
        public var index: Int
        public var total: Int
        public var step: PromptStep
        public var text: String
        /// The time of the frame it was issued on, seconds on the frames' clock.
        public var seconds: Double
        public var seq: Int64
        public init(index: Int, total: Int, step: PromptStep, text: String, seconds: Double, seq: Int64) {
            self.index = index
            self.total = total
            self.step = step
            self.text = text
            self.seconds = seconds
            self.seq = seq
        }
    }

    /// `promptAnswered` (prompted mode): a prompt was answered, or missed. `outcome` is what the
    /// client is told: a `PromptOutcome` name, except `anticipated`, sent as `notFollowed`.
    public struct PromptAnswered: Sendable, Equatable, Codable {
        public var index: Int
        public var total: Int
        public var step: PromptStep
        public var outcome: String
        public var seq: Int64
        public init(index: Int, total: Int, step: PromptStep, outcome: String, seq: Int64) {
            self.index = index
            self.total = total
            self.step = step
            self.outcome = outcome
            self.seq = seq
        }
    }

    /// `autoshot`: the autoshot was taken.
    public struct Autoshot: Sendable, Equatable, Codable {
        /// Seconds from the first frame.
        public var seconds: Double
        /// True when the face was framed, false for the fallback.
        public var framed: Bool
        public var seq: Int64
        public init(seconds: Double, framed: Bool, seq: Int64) {
            self.seconds = seconds
            self.framed = framed
            self.seq = seq
        }
    }

    /// `action`: an action was credited, `done` of `total` (the camera is never told which).
    public struct ActionCredited: Sendable, Equatable, Codable {
        public var done: Int
        public var total: Int
        public var seq: Int64
        public init(done: Int, total: Int, seq: Int64) {
            self.done = done
            self.total = total
            self.seq = seq
        }
    }

    /// `snapshot`: the snapshot was taken.
    public struct Snapshot: Sendable, Equatable, Codable {
        /// Seconds from the first frame.
        public var seconds: Double
        public var seq: Int64
        public init(seconds: Double, seq: Int64) {
            self.seconds = seconds
            self.seq = seq
        }
    }

    /// `verdict`: the outcome (the server closes the stream after it). `reason` is what the
    /// client is told — a `FailureReason` name, except `presentationAttack`, sent as
    /// `notVerified` — and an explicit `null` when the session passed.
    public struct Verdict: Sendable, Equatable, Codable {
        public var status: VerdictStatus
        @NullWhenAbsent public var reason: String?
        public var seq: Int64
        public init(status: VerdictStatus, reason: String?, seq: Int64) {
            self.status = status
            self.reason = reason
            self.seq = seq
        }
    }

    /// `flow`: backpressure. `slow` when frames were dropped (the client sends faster than they
    /// are processed; the latest frame always wins), `resume` when the server has caught up.
    public struct Flow: Sendable, Equatable, Codable {
        public enum State: String, Sendable, Codable { case slow, resume }
        public var state: State
        /// Frames dropped so far in the session.
        public var dropped: Int
        public var seq: Int64
        public init(state: State, dropped: Int, seq: Int64) {
            self.state = state
            self.dropped = dropped
            self.seq = seq
        }
    }

    /// `error`: a problem with a message or a frame; `recoverable` says whether the stream goes on.
    public struct ErrorReport: Sendable, Equatable, Codable {
        public var code: StreamError.Code
        public var message: String
        public var recoverable: Bool
        public var seq: Int64
        public init(_ error: StreamError, seq: Int64) {
            code = error.code
            message = error.message
            recoverable = error.isRecoverable
            self.seq = seq
        }
    }

    /// `ack`: a frame was processed (only when `start` asked for `ack`).
    public struct Ack: Sendable, Equatable, Codable {
        public var seq: Int64
        public init(seq: Int64) { self.seq = seq }
    }
}
