import Foundation

/// The wire form of `ServerMessage`: one JSON object, `type` beside the payload's fields.
extension ServerMessage {
    /// The `type` of each case.
    public var type: String {
        switch self {
        case .session: "session"
        case .hud: "hud"
        case .prompt: "prompt"
        case .promptAnswered: "promptAnswered"
        case .autoshot: "autoshot"
        case .action: "action"
        case .snapshot: "snapshot"
        case .verdict: "verdict"
        case .flow: "flow"
        case .error: "error"
        case .ack: "ack"
        }
    }

    /// The sequence number of the last frame processed when the message was sent (-1 before the first).
    public var seq: Int64 {
        switch self {
        case let .session(m): m.seq
        case let .hud(m): m.seq
        case let .prompt(m): m.seq
        case let .promptAnswered(m): m.seq
        case let .autoshot(m): m.seq
        case let .action(m): m.seq
        case let .snapshot(m): m.seq
        case let .verdict(m): m.seq
        case let .flow(m): m.seq
        case let .error(m): m.seq
        case let .ack(m): m.seq
        }
    }

    private enum TypeKey: String, CodingKey { case type }

    public init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: TypeKey.self).decode(String.self, forKey: .type)
        switch type {
        case "session": self = .session(try Session(from: decoder))
        case "hud": self = .hud(try HUD(from: decoder))
        case "prompt": self = .prompt(try Prompt(from: decoder))
        case "promptAnswered": self = .promptAnswered(try PromptAnswered(from: decoder))
        case "autoshot": self = .autoshot(try Autoshot(from: decoder))
        case "action": self = .action(try ActionCredited(from: decoder))
        case "snapshot": self = .snapshot(try Snapshot(from: decoder))
        case "verdict": self = .verdict(try Verdict(from: decoder))
        case "flow": self = .flow(try Flow(from: decoder))
        case "error": self = .error(try ErrorReport(from: decoder))
        case "ack": self = .ack(try Ack(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: try decoder.container(keyedBy: TypeKey.self),
                                                   debugDescription: "unknown server message type \"\(type)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .session(m): try m.encode(to: encoder)
        case let .hud(m): try m.encode(to: encoder)
        case let .prompt(m): try m.encode(to: encoder)
        case let .promptAnswered(m): try m.encode(to: encoder)
        case let .autoshot(m): try m.encode(to: encoder)
        case let .action(m): try m.encode(to: encoder)
        case let .snapshot(m): try m.encode(to: encoder)
        case let .verdict(m): try m.encode(to: encoder)
        case let .flow(m): try m.encode(to: encoder)
        case let .error(m): try m.encode(to: encoder)
        case let .ack(m): try m.encode(to: encoder)
        }
        var container = encoder.container(keyedBy: TypeKey.self)
        try container.encode(type, forKey: .type)
    }

    /// The message as sent: compact JSON, keys sorted, `/` unescaped (UTF-8 bytes).
    public func json() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, whole numbers and finite doubles only: encoding cannot fail.
        return (try? Array(encoder.encode(self))) ?? []
    }

    /// Reads one text message from the server.
    /// - Throws: `DecodingError` when it is not JSON, has no known `type`, or lacks a field of its type.
    public init(json text: String) throws {
        self = try JSONDecoder().decode(ServerMessage.self, from: Data(text.utf8))
    }
}
