import Dispatch
import FaceTracking
import Foundation
import LivenessEvidence
import LivenessKit
import LivenessService
import LivenessStore

#if canImport(Glibc)
import Glibc
#endif

/// `liveness serve`: the streaming service for camera clients and relying parties.
package enum ServeCommand {
    package static let spec = CommandSpec(
        name: "serve",
        overview: "Serve the streaming API: sessions, a WebSocket frame stream, results, uploads (docs/stream-protocol.md).",
        summary: "Serve the streaming API for camera clients and relying parties.",
        arguments: [],
        options: [
            .option("--host", "ADDR", "Address to bind (default 127.0.0.1; any other needs --token-file)."),
            .option("--port", "N", "TCP port (default 8080; 0 picks a free one, printed at start)."),
            .option("--token-file", "FILE", "The API token relying parties present (Authorization: Bearer), first line of FILE."),
            .option("--tls-cert", "FILE", "PEM certificate: serve HTTPS and WSS (with --tls-key).", group: "tls"),
            .option("--tls-key", "FILE", "PEM private key of the certificate.", group: "tls"),
            .option("--max-sessions", "N", "Sessions created or streaming at once (default 16)."),
            .option("--workers", "N", "Frame worker threads (default: the number of cores)."),
            .option("--policy", "FILE", "The policy sessions are judged with (JSON; absent keys keep the defaults; sessions are prompted unless FILE names challengeMode)."),
            .flag("--allow-weaker-policy", "Accept a policy weaker than the spec on a security threshold (marked in the report)."),
            .option("--sign-key", "FILE", "Sign every session's report (GET /v1/sessions/{id}/report.sig) and signed uploads with this private key (liveness keygen)."),
            .option("--data-dir", "DIR", "Keep sessions and results in DIR/liveness.db (SQLite) across restarts (docs/store.md). Without it, in memory only.", group: "store"),
            .option("--store-key", "FILE", "The key (32 random bytes, mode 0600) that seals the stills kept in --data-dir or --store.", group: "store"),
            .option("--store", "URL", "Keep them in PostgreSQL instead of --data-dir (postgres://user@host/database), for instances on several machines (with --store-key)."),
            .option("--webhook-url", "URL", "POST every finished session's result here unless its creator gave a callbackUrl (https, or http to loopback; docs/webhooks.md)."),
            .option("--webhook-secret-file", "FILE", "Send webhooks, signed with HMAC-SHA256 under the secret on FILE's first line (32+ characters); needs a store."),
            .option("--retention", "SECONDS", "How long a finished session's report and stills are kept (default 600)."),
            .option("--upkeep-seconds", "SECONDS", "With a store: seconds between upkeeps (heartbeat, sessions of dead instances ended interrupted, sweep; default 30)."),
            .option("--stale-seconds", "SECONDS", "With a store: an instance on another machine whose heartbeat is older than this is dead (default 60; at least twice --upkeep-seconds)."),
            .option("--trace-dir", "DIR", "Write each streamed session's per-frame trace (the columns of 'liveness trace') to DIR/<session id>.csv: for measurement and for looking into a session. Face geometry, no pixels."),
            .flag("--demo", "Let the hosted page at / create its own sessions (POST /demo/sessions; loopback only)."),
        ],
        positionalCount: 0...0)

    /// `--upkeep-seconds` and `--stale-seconds` (docs/store.md): only with a store, and an
    /// instance is judged gone only after it has missed two heartbeats.
    static func upkeep(_ parsed: ParsedArguments, _ configuration: inout ServiceConfiguration) throws {
        let upkeep = try parsed.integer("--upkeep-seconds", in: 1...3600)
        let stale = try parsed.integer("--stale-seconds", in: 3...86_400)
        guard upkeep != nil || stale != nil else { return }
        guard configuration.dataDirectory != nil || configuration.storeURL != nil else {
            throw UsageError("--upkeep-seconds and --stale-seconds tune the store's upkeep: give --data-dir or --store too")
        }
        if let upkeep { configuration.storeSweepSeconds = Double(upkeep) }
        if let stale { configuration.storeStaleSeconds = Double(stale) }
        guard configuration.storeStaleSeconds >= 2 * configuration.storeSweepSeconds else {
            throw UsageError("--stale-seconds (\(Int(configuration.storeStaleSeconds))) must be at least twice --upkeep-seconds (\(Int(configuration.storeSweepSeconds))): a live instance beats once per upkeep and would be judged dead between two beats")
        }
    }

    package static func run(_ arguments: [String], console: Console) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        var configuration = ServiceConfiguration()
        do {
            configuration.host = parsed.value("--host") ?? configuration.host
            configuration.port = try parsed.integer("--port", in: 0...65535) ?? configuration.port
            configuration.workers = try parsed.integer("--workers", in: 1...256) ?? configuration.workers
            configuration.limits.maxSessions = try parsed.integer("--max-sessions", in: 1...10_000) ?? configuration.limits.maxSessions
            configuration.tlsCertificatePath = parsed.value("--tls-cert")
            configuration.tlsKeyPath = parsed.value("--tls-key")
            configuration.demo = parsed.has("--demo")
            // Prompted unless the file names challengeMode (docs/prompted-challenge.md).
            configuration.policy = try ServiceConfiguration.policy(file: parsed.value("--policy"), allowWeaker: parsed.has("--allow-weaker-policy"))
            if let path = parsed.value("--sign-key") { configuration.signingKey = try SigningKey.load(path: path) }
            if let file = parsed.value("--token-file") { configuration.apiToken = try ServiceConfiguration.readToken(path: file) }
            configuration.dataDirectory = parsed.value("--data-dir")
            configuration.storeURL = parsed.value("--store")
            if let path = parsed.value("--store-key") {
                do { configuration.storeKey = try StoreKey.load(path: path) } catch {
                    throw ServiceError("--store-key \(error.subject): \(error.problem)")
                }
            }
            configuration.traceDirectory = parsed.value("--trace-dir")
            configuration.webhookURL = parsed.value("--webhook-url")
            if let path = parsed.value("--webhook-secret-file") { configuration.webhookSecret = try ServiceConfiguration.readWebhookSecret(path: path) }
            if let seconds = try parsed.integer("--retention", in: 1...31_536_000) { configuration.limits.resultRetentionSeconds = Double(seconds) }
            try upkeep(parsed, &configuration)
        } catch let error as UsageError {
            return console.usageError(error, spec: spec)
        } catch {
            console.error("error: \(error)")
            return 2
        }
        let server: LivenessServer
        do {
            server = try LivenessServer(configuration: configuration, model: try LandmarkModel.load())
            try server.start()
        } catch {
            console.error("error: \(error)")
            return 2
        }
        console.out("liveness serve: listening on \(server.url) (\(configuration.workers) workers, up to \(configuration.limits.maxSessions) sessions\(configuration.apiToken == nil ? ", no API token: loopback only" : ""))")
        console.out(configuration.policy.challengeMode == .prompted
            ? "liveness serve: sessions are prompted unless the relying party asks for passive (docs/prompted-challenge.md)"
            : "liveness serve: sessions are passive (the --policy file says so) unless the relying party asks for prompted")
        if let key = configuration.signingKey {
            console.out("liveness serve: signing reports with \(key.publicKey.fingerprint) (GET /v1/sessions/{id}/report.sig, prompts.jsonl)")
        }
        if let url = configuration.storeURL {
            console.out("liveness serve: sessions and results kept in PostgreSQL (\(PostgresSessionStore.redacted(url))) for \(Int(configuration.limits.resultRetentionSeconds)) s after they finish, stills sealed (docs/store.md)")
        } else if let directory = configuration.dataDirectory {
            console.out("liveness serve: sessions and results kept in \(directory)/liveness.db for \(Int(configuration.limits.resultRetentionSeconds)) s after they finish, stills sealed (docs/store.md)")
        } else {
            console.out("liveness serve: sessions and results in memory only (a restart loses them; --data-dir keeps them)")
        }
        if let directory = configuration.traceDirectory {
            console.out("liveness serve: each streamed session's per-frame trace is written to \(directory)/<session id>.csv")
        }
        if configuration.webhookSecret != nil {
            console.out("liveness serve: webhooks signed (HMAC-SHA256) from the store's outbox\(configuration.webhookURL.map { ", by default to \($0)" } ?? ", to each session's callbackUrl") (docs/webhooks.md)")
            // libcurl sends through the proxy the environment names: the address rules then see
            // the callback's host only, and the proxy decides where it connects.
            let environment = ProcessInfo.processInfo.environment
            let proxies = ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"].filter { !(environment[$0] ?? "").isEmpty }
            if !proxies.isEmpty && environment["no_proxy"] != "*" && environment["NO_PROXY"] != "*" {
                console.error("liveness serve: warning: webhooks go through the proxy in \(proxies.joined(separator: ", ")); the address rules of docs/webhooks.md then apply to the callback's host only (no_proxy='*' sends them directly)")
            }
        }
        if configuration.demo {
            console.out("liveness serve: demo: open \(server.url)/ in a browser and press Verify (the page creates its own session)")
        }
        // SIGINT and SIGTERM stop the service cleanly (open streams end cancelled).
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { server.stopAsync() }
            source.resume()
            return source
        }
        server.wait()
        withExtendedLifetime(sources) {}
        console.error("liveness serve: stopped")
        return 0
    }
}
