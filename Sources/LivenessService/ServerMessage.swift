import Foundation
import LivenessCore
import LivenessKit

/// A JSON text message from the server to a camera client (`liveness-stream/1`). Each carries
/// `seq`, the sequence number of the last frame processed (-1 before the first). The camera
/// client gets the outcome only: never scores, the challenge order or which action was credited
/// (the spec: the HUD reports only how many are done). A prompted session tells it each prompt
/// (the user must see it) and how it was answered, as a user can act on it.
public enum ServerMessage: Sendable {
    /// After the WebSocket opens: the session id, its limits, the server's clock and the session
    /// policy's guide circle (centre normalised 0…1 of the upright frame's width and height,
    /// radius a fraction of its shorter side), so that a client draws the circle the engine tests.
    case session(id: String, limits: ServiceLimits, serverTimeMicroseconds: Int64, guide: GuideCircle)
    /// The HUD changed (in prompted mode, `prompt` names the step asked for).
    case hud(HUDState, seq: Int64)
    /// Prompted mode: a prompt is shown from this frame on: the step, its text, its position in
    /// the plan (`index` of `total`) and the time of the frame it was issued on (s, the frames' clock).
    case prompt(PromptRecord, total: Int, seq: Int64)
    /// Prompted mode: a prompt was answered, or missed; `outcome` as the client is told it
    /// (`clientOutcome`).
    case promptAnswered(PromptRecord, total: Int, seq: Int64)
    /// The autoshot was taken (seconds from the first frame; framed or the fallback).
    case autoshot(seconds: Double, framed: Bool, seq: Int64)
    /// An action was credited: `done` of `total`.
    case action(done: Int, total: Int, seq: Int64)
    /// The snapshot was taken.
    case snapshot(seconds: Double, seq: Int64)
    /// The verdict (the server closes the stream after it).
    case verdict(status: VerdictStatus, reason: FailureReason?, seq: Int64)
    /// Backpressure: `slow` when frames were dropped (the client sends faster than they are
    /// processed; the latest frame always wins), `resume` when the server has caught up.
    case flow(state: String, dropped: Int, seq: Int64)
    /// A problem with a message or a frame; `recoverable` says whether the stream goes on.
    case error(StreamError, seq: Int64)
    /// A frame was processed (only when `start` asked for `ack`).
    case ack(seq: Int64)

    /// The message as compact JSON bytes with sorted keys.
    public func json() -> [UInt8] {
        var object: [String: Any]
        switch self {
        case let .session(id, limits, time, guide):
            object = ["type": "session", "id": id, "limits": limits.dictionary, "serverTimeMicroseconds": time, "seq": -1,
                      "protocol": StreamProtocol.version,
                      "guide": ["centerX": guide.centerX, "centerY": guide.centerY, "radius": guide.radius]]
        case let .hud(state, seq):
            object = ["type": "hud", "state": state.name, "text": state.text, "seq": seq]
            if case let .progress(done, total) = state {
                object["done"] = done
                object["total"] = total
            }
            if case let .prompt(step) = state { object["prompt"] = step.rawValue }
        case let .prompt(record, total, seq):
            object = ["type": "prompt", "index": record.index, "total": total, "step": record.step.rawValue, "text": record.step.text,
                      "seconds": Double(record.promptMicroseconds) / 1e6, "seq": seq]
        case let .promptAnswered(record, total, seq):
            object = ["type": "promptAnswered", "index": record.index, "total": total, "step": record.step.rawValue,
                      "outcome": Self.clientOutcome(record.outcome), "seq": seq]
        case let .autoshot(seconds, framed, seq):
            object = ["type": "autoshot", "seconds": seconds, "framed": framed, "seq": seq]
        case let .action(done, total, seq):
            object = ["type": "action", "done": done, "total": total, "seq": seq]
        case let .snapshot(seconds, seq):
            object = ["type": "snapshot", "seconds": seconds, "seq": seq]
        case let .verdict(status, reason, seq):
            object = ["type": "verdict", "status": status.rawValue, "reason": reason.map(Self.clientReason) ?? NSNull(), "seq": seq]
        case let .flow(state, dropped, seq):
            object = ["type": "flow", "state": state, "dropped": dropped, "seq": seq]
        case let .error(error, seq):
            object = ["type": "error", "code": error.code.rawValue, "message": error.message,
                      "recoverable": error.isRecoverable, "seq": seq]
        case let .ack(seq):
            object = ["type": "ack", "seq": seq]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return [UInt8](data)
    }

    /// The failure reason as the camera client is told it. The client is the party an attacker
    /// controls: naming the presentation-attack check that stopped a spoof would tell them which
    /// check to beat. What a user can act on is said (timeout, noFace, cancelled, inputEnded,
    /// invalidInput); `presentationAttack` becomes `notVerified`. The relying party reads the
    /// true reason in the report (`GET /v1/sessions/{id}`, with the API token).
    static func clientReason(_ reason: FailureReason) -> String {
        reason == .presentationAttack ? "notVerified" : reason.rawValue
    }

    /// A prompt's outcome as the camera client is told it. What a user can act on is said
    /// (`followed`, `wrongDirection`, `wrongAction`, `missed`); `anticipated` — a turn begun
    /// sooner after the prompt than a person reacts, the mark of a recording or a script — is
    /// sent as `notFollowed`, as `presentationAttack` is `notVerified`. The report holds the truth.
    static func clientOutcome(_ outcome: PromptOutcome) -> String {
        outcome == .anticipated ? "notFollowed" : outcome.rawValue
    }

    /// The messages a frame's events become for the camera client; `doneBefore` actions were
    /// credited before these events; `total` is the actions a pass needs (a prompted session:
    /// one per step), also the prompts' `total`.
    static func messages(for events: [LivenessEvent], seq: Int64, total: Int, doneBefore: Int) -> [ServerMessage] {
        var out: [ServerMessage] = []
        var done = doneBefore
        for event in events {
            switch event {
            case let .hud(state): out.append(.hud(state, seq: seq))
            case let .autoshot(still):
                out.append(.autoshot(seconds: Double(still.timestampMicroseconds) / 1e6, framed: still.framed, seq: seq))
            case .actionCredited:
                done += 1
                out.append(.action(done: done, total: total, seq: seq))
            case let .promptShown(record): out.append(.prompt(record, total: total, seq: seq))
            case let .promptAnswered(record): out.append(.promptAnswered(record, total: total, seq: seq))
            case let .snapshot(still): out.append(.snapshot(seconds: Double(still.timestampMicroseconds) / 1e6, seq: seq))
            case let .verdict(v): out.append(.verdict(status: v.status, reason: v.reason, seq: seq))
            default: continue
            }
        }
        return out
    }
}
