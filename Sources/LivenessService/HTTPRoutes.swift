import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessKit
import LivenessStore

/// An HTTP response, written by the event loop.
struct HTTPResponse: Sendable {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var headers: [(String, String)] = []
    /// Close the connection after this response (a request whose framing is ambiguous must not
    /// leave bytes behind that would be read as another request).
    var closeAfter = false
    /// Send the status and headers only (the answer to HEAD); Content-Length stays the body's.
    var headOnly = false

    /// A JSON body (`HTTPBody`): indented, keys sorted, slashes unescaped, ending in a newline.
    static func json(_ status: Int, _ value: some Encodable, headers: [(String, String)] = []) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        let data = (try? encoder.encode(value)) ?? Data()
        return HTTPResponse(status: status, contentType: "application/json", body: [UInt8](data) + [0x0A], headers: headers)
    }

    static func error(_ status: Int, _ code: String, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        json(status, HTTPBody.Failure(code: code, message: message), headers: headers)
    }

    /// Headers on every response: nothing cached (results are personal data), no referrer, the
    /// camera for this origin only, a strict content security policy, no MIME sniffing.
    static let securityHeaders: [(String, String)] = [
        ("cache-control", "no-store"),
        ("referrer-policy", "no-referrer"),
        ("permissions-policy", "camera=(self), microphone=(), geolocation=()"),
        ("content-security-policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; media-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
    ]
}

/// A request as the routes see it.
struct HTTPRequest {
    enum Method: String { case get = "GET", post = "POST", head = "HEAD", delete = "DELETE", other }
    var method: Method
    var path: String
    /// The `Authorization` header's value, if any.
    var authorization: String?
    var body: [UInt8]
    /// The `Host` and `Origin` headers, if any.
    var host: String? = nil
    var origin: String? = nil
}

/// The HTTP API of `liveness serve` (docs/stream-protocol.md): everything but the WebSocket.
final class HTTPRoutes: @unchecked Sendable {
    let configuration: ServiceConfiguration
    let host: SessionHost
    let metrics: ServiceMetrics
    /// Extra routes (the hosted web flow's pages), tried first.
    var pages: ((HTTPRequest) -> HTTPResponse?)?
    /// The hosted web flow: `GET /`, its assets, and with `--demo` the page's own sessions.
    let webFlow: WebFlow
    /// The `Host` values the demo route answers: the loopback names with the bound port (set by
    /// the server once it listens). Anything else is DNS rebinding or another site's page.
    var demoHosts: Set<String> = []
    /// Demo sessions not yet finished at most; at the cap the oldest one whose stream never
    /// opened is forgotten, and only when all are streaming is the answer 503 `busy`.
    static let maxOpenDemoSessions = 2
    private var demoSessions: [String] = []

    /// Uploads analysed off the loop: the report, or its signature envelope.
    static let uploadPath = "/v1/analyze"
    static let signedUploadPath = "/v1/analyze/signed"
    static let uploadPaths: Set<String> = [uploadPath, signedUploadPath]

    init(configuration: ServiceConfiguration, host: SessionHost, metrics: ServiceMetrics) {
        self.configuration = configuration
        self.host = host
        self.metrics = metrics
        webFlow = WebFlow(demo: configuration.demo)
    }

    /// True when the request carries the API token (or none is configured: loopback only).
    func authorized(_ request: HTTPRequest) -> Bool {
        guard let token = configuration.apiToken else { return true }
        guard let header = request.authorization, header.hasPrefix("Bearer ") else { return false }
        return Secrets.equal(Array(header.dropFirst(7).utf8), token)
    }

    /// The response to a request whose body (if any) has fully arrived. `POST /v1/analyze` is
    /// not answered here (`LivenessServer` runs it off the loop).
    func respond(_ request: HTTPRequest) -> HTTPResponse {
        let response = route(request)
        if response.status >= 400, let code = (try? JSONValue.parse(response.body))?["error"]?["code"]?.string {
            metrics.error(code)
        }
        return response
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        if let page = pages?(request) { return page }
        if request.method == .post && request.path == "/demo/sessions" && webFlow.demo {
            if let refusal = demoRefusal(request) { return refusal }
        }
        if let page = webFlow.respond(request, createSession: { createDemoSession() }) { return page }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let get = request.method == .get, post = request.method == .post
        if parts == ["healthz"] && get {
            // Readiness: with a store, only while it answers (an instance that cannot read or
            // write its sessions must be taken out of a load balancer's rotation).
            guard let store = host.store else { return .json(200, HTTPBody.Health(status: "ok", activeSessions: host.activeSessions)) }
            let started = ContinuousClock.now
            do {
                try store.check()
                metrics.storeCall("check", seconds: (ContinuousClock.now - started).inSeconds)
                return .json(200, HTTPBody.Health(status: "ok", activeSessions: host.activeSessions, store: "ok"))
            } catch {
                metrics.storeCall("check", seconds: (ContinuousClock.now - started).inSeconds, failed: true)
                return .json(503, HTTPBody.Health(status: "unavailable", activeSessions: host.activeSessions, store: "unreachable"),
                             headers: [("retry-after", "5")])
            }
        }
        if parts == ["metrics"] && get {
            guard authorized(request) else { return unauthorized() }
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4",
                                body: Array(metrics.prometheus(activeSessions: host.activeSessions,
                                                               store: host.store.map { $0 is PostgresSessionStore ? "postgres" : "sqlite" },
                                                               outbox: outboxStatus()).utf8))
        }
        if parts == ["v1", "capabilities"] && get { return .json(200, capabilities()) }
        if parts == ["v1", "sessions"] && post {
            guard authorized(request) else { return unauthorized() }
            return createSession(request.body)
        }
        if parts.count == 3 && parts[0] == "v1" && parts[1] == "sessions" && request.method == .delete {
            // Erasure on the relying party's request: everything of the session, wherever kept.
            guard authorized(request) else { return unauthorized() }
            do {
                guard try host.erase(id: parts[2]) else {
                    return .error(404, "notFound", "no session \(parts[2]) (unknown, expired or already erased)")
                }
                return HTTPResponse(status: 204, contentType: "application/json", body: [])
            } catch {
                return storeUnavailable()
            }
        }
        if parts.count == 3 && parts[0] == "v1" && parts[1] == "sessions" && get {
            guard authorized(request) else { return unauthorized() }
            let id = parts[2]
            let found: SessionHost.SessionResult?
            do { found = try host.result(id: id) } catch { return storeUnavailable() }
            guard let result = found else {
                return .error(404, "notFound", "no session \(id) (unknown, or its result has expired)")
            }
            guard result.state == "finished", let data = result.report else {
                return .json(202, HTTPBody.SessionState(id: id, state: result.state))
            }
            // With a key, the result points to its signature (RFC 8288 link), fetched beside it.
            var headers: [(String, String)] = result.signature == nil ? [] : [("link", "</v1/sessions/\(id)/report.sig>; rel=\"signature\"")]
            // Its webhook's state (docs/webhooks.md): pending, delivered or dead, and the attempts made.
            if let delivery = result.delivery {
                headers.append(("liveness-webhook", "\(delivery.state.rawValue); attempts=\(delivery.attempts)"))
            }
            return HTTPResponse(status: 200, contentType: "application/json", body: data, headers: headers)
        }
        if parts.count == 4 && parts[0] == "v1" && parts[1] == "sessions" && parts[3] == "stream" && get {
            // The camera client's question before it opens the stream: is this link still usable?
            // With the session token (not the API token); nothing is claimed. An unknown session
            // and a wrong token get the same answer.
            guard let header = request.authorization, header.hasPrefix("Bearer ") else {
                return .error(401, "unauthorized", "send the session token as Authorization: Bearer")
            }
            switch host.peek(id: parts[2], token: Array(header.dropFirst(7).utf8)) {
            case .success: return .json(200, HTTPBody.SessionState(id: parts[2], state: "created"))
            case .failure(.alreadyStarted): return .error(410, "used", "this session's stream was already opened: the link is spent")
            case .failure(.storeUnavailable): return storeUnavailable()
            case .failure: return .error(404, "notFound", "no such session for this token (unknown, expired or finished)")
            }
        }
        if parts.count == 4 && parts[0] == "v1" && parts[1] == "sessions" && parts[3] == "report.sig" && get {
            guard authorized(request) else { return unauthorized() }
            let id = parts[2]
            guard configuration.signingKey != nil else {
                return .error(404, "notFound", "this service does not sign reports (start it with --sign-key)")
            }
            let found: SessionHost.SessionResult?
            do { found = try host.result(id: id) } catch { return storeUnavailable() }
            guard let result = found else {
                return .error(404, "notFound", "no session \(id) (unknown, or its result has expired)")
            }
            guard result.state == "finished" else { return .json(202, HTTPBody.SessionState(id: id, state: result.state)) }
            guard let signature = result.signature else {
                return .error(500, "internal", "the report of session \(id) could not be signed")
            }
            return HTTPResponse(status: 200, contentType: "application/json", body: signature)
        }
        if parts.count == 4 && parts[0] == "v1" && parts[1] == "sessions" && parts[3] == "prompts.jsonl" && get {
            // The prompts a prompted session issued, signed (liveness-prompt-log/1): with the
            // capture client's own recording, `liveness analyze --challenge` judges it again.
            guard authorized(request) else { return unauthorized() }
            let id = parts[2]
            guard configuration.signingKey != nil else {
                return .error(404, "notFound", "this service does not sign prompt logs (start it with --sign-key)")
            }
            let found: SessionHost.SessionResult?
            do { found = try host.result(id: id) } catch { return storeUnavailable() }
            guard let result = found else {
                return .error(404, "notFound", "no session \(id) (unknown, or its result has expired)")
            }
            guard result.state == "finished" else { return .json(202, HTTPBody.SessionState(id: id, state: result.state)) }
            guard result.prompted else {
                return .error(404, "notPrompted", "session \(id) was passive: it issued no prompts")
            }
            if result.promptLog == nil && result.reason == FailureReason.interrupted.rawValue {
                return .error(404, "interrupted", "session \(id) was interrupted: its prompt log went with the instance that streamed it")
            }
            guard let log = result.promptLog else {
                return .error(500, "internal", "the prompt log of session \(id) could not be signed")
            }
            return HTTPResponse(status: 200, contentType: "application/jsonl", body: log)
        }
        if parts.count == 4 && parts[0] == "v1" && parts[1] == "sessions" && (parts[3] == "autoshot.jpg" || parts[3] == "snapshot.jpg") && get {
            guard authorized(request) else { return unauthorized() }
            let id = parts[2], still = parts[3]
            let found: [UInt8]?
            do { found = try host.still(id: id, kind: still == "autoshot.jpg" ? .autoshot : .snapshot) } catch { return storeUnavailable() }
            guard let jpeg = found else {
                return .error(404, "notFound", "no \(still) for session \(id): stills are released with a passed verdict only")
            }
            return HTTPResponse(status: 200, contentType: "image/jpeg", body: jpeg)
        }
        let known: [[String]] = [["healthz"], ["metrics"], ["v1", "capabilities"], ["v1", "sessions"], ["v1", "analyze"], ["v1", "analyze", "signed"]]
        if known.contains(parts) || (parts.count >= 3 && parts[0] == "v1" && parts[1] == "sessions") {
            return .error(405, "methodNotAllowed", "\(request.method.rawValue) is not allowed on \(request.path)")
        }
        return .error(404, "notFound", "no such resource: \(request.path)")
    }

    /// The store's outbox for `/metrics`, when the service sends webhooks; nil otherwise or when
    /// the store cannot be read (its error is counted).
    private func outboxStatus() -> OutboxStatus? {
        guard let store = host.store, configuration.webhookSecret != nil else { return nil }
        let started = ContinuousClock.now
        do {
            let status = try store.outboxStatus()
            metrics.storeCall("outbox", seconds: (ContinuousClock.now - started).inSeconds)
            return status
        } catch {
            metrics.storeCall("outbox", seconds: (ContinuousClock.now - started).inSeconds, failed: true)
            return nil
        }
    }

    /// The callback URL of a new session: the body's `callbackUrl`, else `--webhook-url`, else
    /// none; validated (`WebhookURL`). A refusal is the 400 to answer.
    private func callbackURL(_ value: JSONValue?) -> (url: String?, refusal: HTTPResponse?) {
        guard let value else { return (configuration.webhookURL, nil) }
        guard case .string(let text) = value else {
            return (nil, .error(400, "invalidCallbackUrl", "\"callbackUrl\" must be a string (an https URL)"))
        }
        guard configuration.webhookSecret != nil, host.store != nil else {
            return (nil, .error(400, "webhooksDisabled", "this service sends no webhooks (it needs a store and --webhook-secret-file); poll GET /v1/sessions/{id} instead"))
        }
        do throws(ServiceError) {
            return (try WebhookURL.validate(text).text, nil)
        } catch {
            return (nil, .error(400, "invalidCallbackUrl", error.message))
        }
    }

    /// The store could not be read or written (docs/store.md): try again shortly.
    func storeUnavailable() -> HTTPResponse {
        .error(503, "storeUnavailable", "the session store cannot be read or written now; try again shortly", headers: [("retry-after", "5")])
    }

    func unauthorized() -> HTTPResponse {
        .error(401, "unauthorized", "this needs the service's API token: Authorization: Bearer <token>",
               headers: [("www-authenticate", "Bearer")])
    }

    /// Why `POST /demo/sessions` is refused: a `Host` that is not this service's loopback address
    /// (a rebound DNS name), an `Origin` other than the page's own, or the demo already busy.
    private func demoRefusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard let hostHeader = request.host?.lowercased(), demoHosts.contains(hostHeader) else {
            return .error(403, "forbidden", "the demo answers requests to this service's loopback address only (Host \(request.host ?? "missing"))")
        }
        if let origin = request.origin?.lowercased(), origin != "http://" + hostHeader && origin != "https://" + hostHeader {
            return .error(403, "forbidden", "the demo answers its own page only (Origin \(origin))")
        }
        demoSessions.removeAll { ((try? host.result(id: $0)) ?? nil).map { $0.state == "finished" } ?? true }
        // At the cap, a session whose page never opened its stream (reloaded, closed) gives way.
        if demoSessions.count >= Self.maxOpenDemoSessions, let index = demoSessions.firstIndex(where: { host.expireIfUnclaimed($0) }) {
            demoSessions.remove(at: index)
        }
        if demoSessions.count >= Self.maxOpenDemoSessions {
            return .error(503, "busy", "the demo is busy with \(demoSessions.count) checks; try again shortly", headers: [("retry-after", "5")])
        }
        return nil
    }

    private func createDemoSession() -> HTTPResponse {
        let response = createSession([])
        if response.status == 201, let id = (try? JSONValue.parse(response.body))?["id"]?.string {
            demoSessions.append(id)
        }
        return response
    }

    private func createSession(_ body: [UInt8]) -> HTTPResponse {
        var policy = configuration.policy
        var seed: UInt64?
        var callback = configuration.webhookURL
        if !body.isEmpty {
            // The package's strict reader: a duplicate key (two "policy" objects, a policy key
            // twice) is refused rather than resolved one way here and another in the caller's tools.
            guard let object = (try? JSONValue.parse(body))?.members else {
                return .error(400, "invalidRequest", "the body must be a JSON object ({\"policy\": {...}, \"seed\": n, \"callbackUrl\": \"https://…\"}) with each key once, or empty")
            }
            for key in object.keys where key != "policy" && key != "seed" && key != "callbackUrl" {
                return .error(400, "invalidRequest", "unknown field \"\(key)\" (policy, seed, callbackUrl)")
            }
            let chosen = callbackURL(object["callbackUrl"])
            if let refusal = chosen.refusal { return refusal }
            callback = chosen.url
            if let overrides = object["policy"] {
                guard let keys = overrides.members else { return .error(400, "invalidRequest", "\"policy\" must be an object") }
                // Numbers, or a choice's name ("challengeMode": "passive"); never weaker than the
                // service's policy, except that the relying party chooses the challenge mode.
                do throws(StreamError) {
                    policy = try ServicePolicy.applying(try ServicePolicy.overrides(keys), to: policy, modeIsChoice: true)
                } catch {
                    return .error(400, "invalidPolicy", error.message)
                }
            }
            if let value = object["seed"] {
                guard let n = value.double, n >= 0, n < 9e15, n == n.rounded() else {
                    return .error(400, "invalidRequest", "\"seed\" must be a whole number in 0…9e15")
                }
                seed = UInt64(n)
            }
        }
        let created: SessionHost.Created
        switch host.create(policy: policy, seed: seed, callbackURL: callback) {
        case let .success(value): created = value
        case .failure(.full):
            return .error(503, "tooManySessions", "\(configuration.limits.maxSessions) sessions are already active; try again shortly",
                          headers: [("retry-after", "5")])
        case .failure(.store):
            return storeUnavailable()
        }
        let formatter = ISO8601DateFormatter()
        return .json(201, HTTPBody.CreatedSession(id: created.id, token: created.token, expiresAt: formatter.string(from: created.expiresAt),
                                                   stream: "/v1/sessions/\(created.id)/stream", limits: configuration.limits.published))
    }

    /// `GET /v1/capabilities`: what the service does and accepts.
    func capabilities() -> HTTPBody.Capabilities {
        let limits = configuration.limits
        return HTTPBody.Capabilities(
            engine: .init(name: "liveness", version: LivenessEngine.version),
            protocol: StreamProtocol.version,
            subprotocol: StreamProtocol.subprotocol,
            actions: Action.allCases.map(\.rawValue),
            policy: .init(defaults: configuration.policy,
                          clientOverrides: "any key within its bounds, never weaker than the session's policy (a prompted session stays prompted)"),
            limits: .init(published: limits.published, memoryWorstCaseBytes: limits.worstCaseMemoryBytes(workers: configuration.workers)),
            formats: .init(frames: FrameFormat.allCases.map(\.name), uploads: InputList.extensions.sorted()),
            tls: configuration.usesTLS,
            // Verifiers pin this key out of band; report.sig also names it, but is never trusted for it.
            signing: configuration.signingKey.map { key in
                .init(format: SignatureEnvelope.format, algorithm: SignatureEnvelope.algorithm,
                      publicKey: key.publicKey.base64, fingerprint: key.publicKey.fingerprint,
                      reportSignature: "/v1/sessions/{id}/report.sig", signedUpload: HTTPRoutes.signedUploadPath,
                      promptLog: "/v1/sessions/{id}/prompts.jsonl", promptLogFormat: PromptLog.format)
            },
            // Sessions are prompted unless the relying party asks for passive (docs/prompted-challenge.md).
            challenge: .init(defaultMode: configuration.policy.challengeMode.rawValue,
                             modes: ChallengeMode.allCases.map(\.rawValue), steps: PromptStep.allCases.map(\.rawValue)))
    }
}
