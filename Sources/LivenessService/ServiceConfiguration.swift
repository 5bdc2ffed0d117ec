import Foundation
import LivenessCore
import LivenessEvidence
import LivenessKit
import LivenessStore

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
    /// The policy sessions are judged with unless the relying party gives one: the defaults with
    /// `challengeMode` prompted (`ServiceConfiguration.defaultPolicy`). Uploads to `/v1/analyze`
    /// are judged with it in passive mode (nobody was shown a prompt while they were recorded).
    public var policy = ServiceConfiguration.defaultPolicy
    /// Tests only: draw every prompted session's plan from `SeededGenerator(seed: promptSeed)`
    /// (the same plan for every session with the same policy; the report's `prompts.source` says
    /// `seed`) instead of libsodium's `randombytes` (`SecureRandomGenerator`). Never set by
    /// `liveness serve`: prompts a client can predict are worth nothing.
    public var promptSeed: UInt64?
    /// Serve the hosted web flow with a "demo" mode that creates its own session (loopback only).
    public var demo = false
    /// The Ed25519 key that signs every finished session's report (`GET /v1/sessions/{id}/report.sig`)
    /// and signed uploads (`POST /v1/analyze/signed`); nil: reports are not signed.
    public var signingKey: SigningKey?
    /// The folder of the durable session store (`--data-dir`, docs/store.md): sessions, reports,
    /// signatures and sealed stills in `DIR/liveness.db` (SQLite), kept across restarts until
    /// `limits.resultRetentionSeconds` after they finish. Needs `storeKey`. Nil: every session and
    /// result lives in this process's memory only, and nothing is written to disk.
    public var dataDirectory: String?
    /// A PostgreSQL server for the store instead of a folder (`--store postgres://…`,
    /// `PostgresSessionStore`): for instances on several machines. Needs `storeKey`.
    public var storeURL: String?
    /// The key that seals stills in the store (`--store-key FILE`, `StoreKey.load`).
    public var storeKey: StoreKey?
    /// Write each streamed session's per-frame trace (the columns of `liveness trace`, CSV) to
    /// `DIR/<session id>.csv` as its frames are processed (`--trace-dir`): for measuring the
    /// engine on what cameras really send and for looking into a disputed session. The traces
    /// hold no pixels but do hold face geometry; nil (the default): none is written.
    public var traceDirectory: String?
    /// A store to use instead of opening `dataDirectory` (tests, other backends).
    public var store: SessionStore?
    /// Seconds between runs of the store's upkeep: heartbeat, interrupted sessions, sweep.
    public var storeSweepSeconds = 30.0
    /// An instance on another machine whose heartbeat is older than this is gone: its streaming
    /// sessions end `interrupted`. (On this machine, its process is looked up instead.)
    public var storeStaleSeconds = 60.0
    /// The callback URL of sessions created without one (`--webhook-url`, docs/webhooks.md); nil:
    /// only sessions created with a `callbackUrl` send their result.
    public var webhookURL: String?
    /// The shared secret that signs every webhook (HMAC-SHA256, `--webhook-secret-file`). Webhooks
    /// are sent only with it, and only with a store (their outbox is in it).
    public var webhookSecret: [UInt8]?
    /// Retries, timeouts and polling of webhook deliveries.
    public var webhooks = WebhookSchedule()

    /// Creates the defaults.
    public init() {}

    /// The service's default policy: the engine's defaults, prompted (docs/prompted-challenge.md).
    /// A live session can show prompts, so it asks for what a recording cannot know in advance;
    /// the relying party asks for passive per session (`"policy": {"challengeMode": "passive"}`)
    /// or for every session (a `--policy` file naming `challengeMode`).
    public static var defaultPolicy: LivenessPolicy {
        var policy = LivenessPolicy()
        policy.challengeMode = .prompted
        return policy
    }

    /// The policy of `liveness serve --policy FILE`: the file's (`PolicyFile`: bounds, and
    /// weaker than the spec only with `allowWeaker`), prompted unless the file names
    /// `challengeMode`; `defaultPolicy` without a file.
    public static func policy(file path: String?, allowWeaker: Bool = false) throws(InputError) -> LivenessPolicy {
        guard let path else { return defaultPolicy }
        var policy = try PolicyFile.load(path, allowWeaker: allowWeaker)
        // The file was read and validated above: a JSON object of at most PolicyFile.maximumBytes.
        let named = FileManager.default.contents(atPath: path)
            .flatMap { (try? JSONValue.parse([UInt8]($0)))?.members }?
            .keys.contains(ServicePolicy.challengeModeKey) ?? false
        if !named { policy.challengeMode = .prompted }
        return policy
    }

    /// True when `host` is the local machine's own loopback address (127.0.0.1, ::1,
    /// localhost). Any other bind — another address, all interfaces, even another 127.x address
    /// that a container may forward — needs the API token.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host == "127.0.0.1"
    }

    /// True when TLS is configured.
    public var usesTLS: Bool { tlsCertificatePath != nil && tlsKeyPath != nil }

    /// Reads the webhook secret from a file: its first line, at least 32 printable ASCII
    /// characters (`openssl rand -hex 32`); the bytes of that line are the HMAC key.
    public static func readWebhookSecret(path: String) throws(ServiceError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ServiceError("cannot read the webhook secret file \(path)")
        }
        let secret = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard secret.count >= 32, secret.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw ServiceError("the webhook secret in \(path) must be one line of at least 32 printable ASCII characters (openssl rand -hex 32 > \(path))")
        }
        return Array(secret.utf8)
    }

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
