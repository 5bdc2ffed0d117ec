import Foundation
import LivenessCore
import LivenessEvidence

/// How `liveness serve` runs.
public struct ServiceConfiguration: Sendable {
    /// Address to bind: loopback by default. Any other address requires `apiToken`.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks a free one (see `LivenessServer.port`).
    public var port = 8080
    /// The relying party's API token (`Authorization: Bearer …`) for creating sessions and
    /// reading results; nil only on a loopback bind.
    public var apiToken: [UInt8]?
    /// PEM certificate and private key: HTTPS and WSS when both are given.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// Frame workers (default: the number of cores).
    public var workers = ProcessInfo.processInfo.activeProcessorCount
    /// Sessions, messages, time and upload limits.
    public var limits = ServiceLimits()
    /// The policy sessions are judged with unless the relying party gives one.
    public var policy = LivenessPolicy()
    /// Serve the hosted web flow with a "demo" mode that creates its own session (loopback only).
    public var demo = false
    /// The Ed25519 key that signs every finished session's report (`GET /v1/sessions/{id}/report.sig`)
    /// and signed uploads (`POST /v1/analyze/signed`); nil: reports are not signed.
    public var signingKey: SigningKey?

    /// Creates the defaults.
    public init() {}

    /// True when `host` is the local machine's own loopback address (127.0.0.1, ::1,
    /// localhost). Any other bind — another address, all interfaces, even another 127.x address
    /// that a container may forward — needs the API token.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host == "127.0.0.1"
    }

    /// True when TLS is configured.
    public var usesTLS: Bool { tlsCertificatePath != nil && tlsKeyPath != nil }

    /// Reads the API token from a file: its first line, at least 16 characters.
    public static func readToken(path: String) throws(ServiceError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ServiceError("cannot read the token file \(path)")
        }
        let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard token.count >= 16, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw ServiceError("the token in \(path) must be one line of at least 16 printable ASCII characters")
        }
        return Array(token.utf8)
    }
}

/// A service that cannot start or a request it cannot serve, with a message for people.
public struct ServiceError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
