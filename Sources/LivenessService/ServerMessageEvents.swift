import Foundation
import LivenessCore
import LivenessKit

/// How the engine's events become `ServerMessage`s for the camera client. The camera client gets
/// the outcome only: never scores, the challenge order or which action was credited (the spec:
/// the HUD reports only how many are done). A prompted session tells it each prompt (the user
/// must see it) and how it was answered, as a user can act on it.
extension ServerMessage {
    /// The `session` message: `limits` as published, the server's clock (µs since the service's
    /// epoch) and the session policy's guide circle.
    static func session(id: String, limits: ServiceLimits, serverTimeMicroseconds: Int64, guide: GuideCircle) -> ServerMessage {
        .session(Session(id: id, limits: limits.published, serverTimeMicroseconds: serverTimeMicroseconds, guide: guide))
    }

    /// The HUD changed (in prompted mode, `prompt` names the step asked for).
    static func hud(_ state: HUDState, seq: Int64) -> ServerMessage {
        var message = HUD(state: state.name, text: state.text, seq: seq)
        if case let .progress(done, total) = state {
            message.done = done
            message.total = total
        }
        if case let .prompt(step) = state { message.prompt = step }
        return .hud(message)
    }

    /// Backpressure: frames were dropped (`slow`), or the server has caught up (`resume`).
    static func flow(_ state: Flow.State, dropped: Int, seq: Int64) -> ServerMessage {
        .flow(Flow(state: state, dropped: dropped, seq: seq))
    }

    /// A problem with a message or a frame.
    static func error(_ error: StreamError, seq: Int64) -> ServerMessage { .error(ErrorReport(error, seq: seq)) }

    /// A frame was processed.
    static func ack(seq: Int64) -> ServerMessage { .ack(Ack(seq: seq)) }

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
                out.append(.autoshot(Autoshot(seconds: Double(still.timestampMicroseconds) / 1e6, framed: still.framed, seq: seq)))
            case .actionCredited:
                done += 1
                out.append(.action(ActionCredited(done: done, total: total, seq: seq)))
            case let .promptShown(record):
                out.append(.prompt(Prompt(index: record.index, total: total, step: record.step, text: record.step.text,
                                          seconds: Double(record.promptMicroseconds) / 1e6, seq: seq)))
            case let .promptAnswered(record):
                out.append(.promptAnswered(PromptAnswered(index: record.index, total: total, step: record.step,
                                                          outcome: clientOutcome(record.outcome), seq: seq)))
            case let .snapshot(still): out.append(.snapshot(Snapshot(seconds: Double(still.timestampMicroseconds) / 1e6, seq: seq)))
            case let .verdict(v): out.append(.verdict(Verdict(status: v.status, reason: v.reason.map(clientReason), seq: seq)))
            default: continue
            }
        }
        return out
    }
}
