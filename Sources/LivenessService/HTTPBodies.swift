import Foundation
import LivenessCore
import LivenessKit

/// The JSON bodies of the HTTP API (docs/stream-protocol.md), as `HTTPResponse.json` writes them.
enum HTTPBody {
    /// `{"error": {"code", "message"}}`: every refusal.
    struct Failure: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
        init(code: String, message: String) { error = Detail(code: code, message: message) }
    }

    /// `GET /healthz`: `store` only with a store (`ok` or `unreachable`).
    struct Health: Encodable {
        var status: String
        var activeSessions: Int
        var store: String?
    }

    /// A session that is not finished yet (202), or was erased: its id and `state`.
    struct SessionState: Encodable {
        var id: String
        var state: String
    }

    /// `POST /v1/sessions` (201): the camera's single-use token, when it expires (ISO 8601, UTC),
    /// the stream's path and the limits.
    struct CreatedSession: Encodable {
        var id: String
        var token: String
        var expiresAt: String
        var stream: String
        var limits: StreamLimits
    }

    /// `GET /v1/capabilities`: what the service does and accepts.
    struct Capabilities: Encodable {
        struct Engine: Encodable {
            var name: String
            var version: String
        }
        struct Policy: Encodable {
            var defaults: LivenessPolicy
            var clientOverrides: String
        }
        /// The published limits and the service's worst-case memory, bytes.
        struct Limits: Encodable {
            var published: StreamLimits
            var memoryWorstCaseBytes: Int
            private enum Key: String, CodingKey { case memoryWorstCaseBytes }
            func encode(to encoder: any Encoder) throws {
                try published.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(memoryWorstCaseBytes, forKey: .memoryWorstCaseBytes)
            }
        }
        struct Formats: Encodable {
            var frames: [String]
            var uploads: [String]
        }
        /// The signing key (verifiers pin it out of band) and where the signed documents are.
        struct Signing: Codable {
            var format: String
            var algorithm: String
            var publicKey: String
            var fingerprint: String
            var reportSignature: String
            var signedUpload: String
            var promptLog: String
            var promptLogFormat: String
        }
        struct Challenge: Encodable {
            var defaultMode: String
            var modes: [String]
            var steps: [String]
        }
        var engine: Engine
        var `protocol`: String
        var subprotocol: String
        var actions: [String]
        var policy: Policy
        var limits: Limits
        var formats: Formats
        var tls: Bool
        /// `null` without a signing key.
        @NullWhenAbsent var signing: Signing?
        var challenge: Challenge
    }
}
