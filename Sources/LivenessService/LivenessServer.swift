import CWebSockets
import FaceTracking
import Foundation
import LivenessCore
import LivenessKit
import LivenessStore

#if canImport(Glibc)
import Glibc
#endif

/// `liveness serve`: the HTTP API and the WebSocket stream of `liveness-stream/1` on
/// libwebsockets (one event loop thread; HTTP/1.1, WebSocket, TLS on OpenSSL 3). Frames are
/// processed by `SessionHost`'s worker threads, never on the event loop; the loop only moves
/// bytes. libwebsockets writes only from its writeable callbacks: workers queue messages and wake
/// the loop with `lws_cancel_service`, and the loop asks for a writeable callback per connection.
public final class LivenessServer: @unchecked Sendable {
    /// The configuration it runs with.
    public let configuration: ServiceConfiguration
    let host: SessionHost
    let routes: HTTPRoutes
    let metrics = ServiceMetrics()
    private let uploads: UploadAnalysis

    private var context: OpaquePointer?
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var loopThread: Thread?
    private var housekeepingThread: Thread?
    /// Sends the outbox's webhooks, with a store and a webhook secret (docs/webhooks.md).
    private var webhooks: WebhookDispatcher?
    private let stopLock = NSLock()
    private var stopping = false
    private let stopped = DispatchSemaphore(value: 0)
    /// The TCP port listened on (the one picked when the configuration said 0).
    public private(set) var port = 0

    // Event-loop state: touched only on the loop thread.
    private var connections: [Int: StreamConnection] = [:]
    private var connectionsByID: [ConnectionID: Int] = [:]
    private var claims: [Int: String] = [:]
    private var exchanges: [Int: HTTPExchange] = [:]
    private var nextID: UInt64 = 1
    private let completedLock = NSLock()
    private var completed: [UInt64: HTTPResponse] = [:]

    /// Creates a server (nothing listens until `start`).
    /// - Throws: when a non-loopback bind has no API token, or TLS is half configured.
    public init(configuration: ServiceConfiguration, model: LandmarkModel) throws(ServiceError) {
        bindAddress = try BindAddress.numeric(configuration.host)
        if configuration.isLoopback && !BindAddress.isLoopback(bindAddress) {
            throw ServiceError("--host \(configuration.host) resolves to \(bindAddress), which is not a loopback address")
        }
        if !configuration.isLoopback && configuration.apiToken == nil {
            throw ServiceError("binding \(configuration.host) (not loopback) needs --token-file: the API must not be open to the network")
        }
        if (configuration.tlsCertificatePath == nil) != (configuration.tlsKeyPath == nil) {
            throw ServiceError("TLS needs both --tls-cert and --tls-key")
        }
        for path in [configuration.tlsCertificatePath, configuration.tlsKeyPath].compactMap({ $0 })
            where !FileManager.default.isReadableFile(atPath: path) {
            throw ServiceError("cannot read \(path)")
        }
        if configuration.demo && !configuration.isLoopback {
            throw ServiceError("--demo lets the page create its own sessions: it is allowed on a loopback bind only")
        }
        if configuration.storeKey != nil && configuration.dataDirectory == nil && configuration.storeURL == nil && configuration.store == nil {
            throw ServiceError("--store-key seals the stills of the store in --data-dir: give --data-dir too")
        }
        if configuration.dataDirectory != nil && configuration.storeURL != nil {
            throw ServiceError("--data-dir and --store name two stores: give one")
        }
        var store = configuration.store
        if store == nil, let url = configuration.storeURL {
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw ServiceError("--store takes a PostgreSQL URL (postgres://user@host/database); for a folder use --data-dir")
            }
            guard let key = configuration.storeKey else {
                throw ServiceError("--store keeps stills, which are biometric data, sealed with a key: give --store-key FILE (32 random bytes: head -c 32 /dev/urandom > FILE && chmod 600 FILE; docs/store.md)")
            }
            do {
                store = try PostgresSessionStore(url: url, key: key)
            } catch {
                throw ServiceError("the session store: \(error.message)")
            }
        }
        if store == nil, let directory = configuration.dataDirectory {
            guard let key = configuration.storeKey else {
                throw ServiceError("--data-dir keeps stills, which are biometric data, sealed with a key: give --store-key FILE (32 random bytes: head -c 32 /dev/urandom > FILE && chmod 600 FILE; docs/store.md)")
            }
            do {
                store = try SQLiteSessionStore(directory: directory, key: key)
            } catch {
                throw ServiceError("the session store: \(error.message)")
            }
        }
        // Webhooks go out from the store's outbox and are always signed with the shared secret.
        if configuration.webhookSecret != nil || configuration.webhookURL != nil {
            guard store != nil else {
                throw ServiceError("webhooks are sent from the store's outbox, so that a restart loses none: give --data-dir (or --store) with --webhook-url / --webhook-secret-file (docs/webhooks.md)")
            }
            guard configuration.webhookSecret != nil else {
                throw ServiceError("--webhook-url needs --webhook-secret-file: every webhook is signed with the shared secret (docs/webhooks.md)")
            }
        }
        if let url = configuration.webhookURL {
            do throws(ServiceError) { _ = try WebhookURL.validate(url) } catch { throw ServiceError("--webhook-url: \(error.message)") }
        }
        if let directory = configuration.traceDirectory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
                  FileManager.default.isWritableFile(atPath: directory) else {
                throw ServiceError("--trace-dir \(directory): not a folder this process can write to")
            }
        }
        self.configuration = configuration
        host = SessionHost(model: model, limits: configuration.limits, metrics: metrics)
        host.signingKey = configuration.signingKey
        host.promptSeed = configuration.promptSeed
        host.store = store
        host.traceDirectory = configuration.traceDirectory
        routes = HTTPRoutes(configuration: configuration, host: host, metrics: metrics)
        // An uploaded recording was made without prompts from this service: it is judged passive.
        var uploadPolicy = configuration.policy
        uploadPolicy.challengeMode = .passive
        uploads = UploadAnalysis(model: model, policy: uploadPolicy, limits: configuration.limits,
                                 signingKey: configuration.signingKey)
    }

    deinit {
        protocols?.deallocate()
        for s in strings { free(s) }
    }

    /// The numeric address bound (`--host` resolved).
    let bindAddress: String

    /// The base URL clients use (`http://127.0.0.1:PORT` or `https://…`), with the numeric
    /// address bound.
    public var url: String {
        let address = bindAddress.contains(":") ? "[\(bindAddress)]" : bindAddress
        return "\(configuration.usesTLS ? "https" : "http")://\(address):\(port)"
    }

    /// Binds and starts the event loop, the workers and the housekeeping timer.
    public func start() throws(ServiceError) {
        lws_set_log_level(Int32(lws_shim_log_errors), livenessLWSLog)
        func keep(_ s: String) -> UnsafeMutablePointer<CChar> {
            let copy = strdup(s)!
            strings.append(copy)
            return copy
        }
        let list = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 3)
        list.initialize(repeating: lws_protocols(), count: 3)
        list[0].name = UnsafePointer(keep("http"))
        list[0].callback = livenessLWSCallback
        list[0].rx_buffer_size = 65536
        list[1].name = UnsafePointer(keep(StreamProtocol.subprotocol))
        list[1].callback = livenessLWSCallback
        list[1].rx_buffer_size = 65536
        protocols = list

        var info = lws_context_creation_info()
        info.options = lws_shim_option_explicit_vhosts | lws_shim_option_validate_utf8
            | (configuration.usesTLS ? lws_shim_option_ssl_global_init : 0)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        guard let context = lws_create_context(&info) else { throw ServiceError("libwebsockets could not create its context") }
        self.context = context

        var vhost = lws_context_creation_info()
        vhost.port = Int32(configuration.port)
        vhost.iface = UnsafePointer(keep(bindAddress))
        vhost.protocols = UnsafePointer(list)
        vhost.vhost_name = UnsafePointer(keep("liveness"))
        vhost.timeout_secs = 20
        vhost.alpn = UnsafePointer(keep("http/1.1"))
        vhost.options = lws_shim_option_validate_utf8 | (configuration.usesTLS ? lws_shim_option_ssl_global_init : 0)
            | (bindAddress.contains(":") ? 0 : lws_shim_option_disable_ipv6)
        if let cert = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            vhost.ssl_cert_filepath = UnsafePointer(keep(cert))
            vhost.ssl_private_key_filepath = UnsafePointer(keep(key))
        }
        guard let created = lws_create_vhost(context, &vhost) else {
            lws_context_destroy(context)
            self.context = nil
            throw ServiceError("cannot listen on \(configuration.host):\(configuration.port) (address in use, not local, or the TLS files are not a certificate and its key)")
        }
        port = Int(lws_get_vhost_listen_port(created))
        guard port > 0 else {
            lws_context_destroy(context)
            self.context = nil
            throw ServiceError("nothing is listening on \(configuration.host) (\(bindAddress)):\(configuration.port): the address is not one of this machine's")
        }
        let bracketed = bindAddress.contains(":") ? "[\(bindAddress)]" : bindAddress
        routes.demoHosts = Set(["localhost", "127.0.0.1", "[::1]", bracketed].map { "\($0):\(port)" })
        host.wake = { [weak self] in self?.wakeLoop() }
        // Before the first request: this instance's heartbeat, the sessions a previous run left
        // streaming ended `interrupted`, what expired while it was down swept.
        host.maintainStore(staleAfterSeconds: configuration.storeStaleSeconds)
        host.start(workers: configuration.workers)
        if let store = host.store, let secret = configuration.webhookSecret {
            let dispatcher = WebhookDispatcher(store: store, owner: host.instance.id, secret: secret, schedule: configuration.webhooks,
                                               metrics: metrics)
            host.stored = { [weak dispatcher] in dispatcher?.poke() }
            webhooks = dispatcher
            dispatcher.start()
        }
        uploads.start { [weak self] id, response in self?.finishedUpload(id, response) }

        let loop = Thread { [self] in runLoop() }
        loop.name = "liveness-event-loop"
        loop.stackSize = 8 << 20
        loopThread = loop
        loop.start()
        let timer = Thread { [self] in
            let clock = ContinuousClock()
            var upkeep = clock.now
            while !isStopping {
                Thread.sleep(forTimeInterval: 0.25)
                host.housekeeping()
                if host.store != nil && (clock.now - upkeep).inSeconds >= configuration.storeSweepSeconds {
                    upkeep = clock.now
                    host.maintainStore(staleAfterSeconds: configuration.storeStaleSeconds)
                }
                wakeLoop()
            }
        }
        timer.name = "liveness-housekeeping"
        housekeepingThread = timer
        timer.start()
    }

    /// Stops serving and returns when the loop and the workers have exited. Idempotent.
    public func stop() {
        let first = stopLock.withLock { () -> Bool in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return wait() }
        // Open streams end cancelled first, and the loop runs on until their verdicts and close
        // frames are written (runLoop), at most `drainSeconds`.
        host.cancelAllStreams()
        if loopThread != nil {
            wakeLoop()
            stopped.wait()
        }
        host.stop()
        uploads.stop()
        webhooks?.stop()
        // Its streams have ended (cancelled, stored): it no longer owns any session.
        host.leaveStore()
        finished.signal()
    }

    /// Starts `stop()` on another thread (from a signal handler's queue).
    public func stopAsync() { Thread.detachNewThread { [self] in stop() } }

    /// Blocks until the server has stopped.
    public func wait() {
        finished.wait()
        finished.signal()
    }

    private let finished = DispatchSemaphore(value: 0)

    private var isStopping: Bool { stopLock.withLock { stopping } }

    private func wakeLoop() {
        stopLock.withLock { if let context { lws_cancel_service(context) } }
    }

    /// How long a stop waits for open streams to receive their verdict and close frame.
    static let drainSeconds = 5.0

    private func runLoop() {
        guard let context else { return }
        var drainUntil: ContinuousClock.Instant?
        let clock = ContinuousClock()
        while true {
            if isStopping {
                let deadline = drainUntil ?? clock.now + .milliseconds(Int(Self.drainSeconds * 1000))
                drainUntil = deadline
                if (connections.isEmpty && host.streamingCount == 0) || clock.now > deadline { break }
                // The workers' messages arrive through wakeLoop; look again every 2 ms meanwhile.
                usleep(2000)
                lws_cancel_service(context)
            }
            if lws_service(context, 0) < 0 { break }
        }
        stopLock.withLock {
            lws_context_destroy(context)
            self.context = nil
        }
        stopped.signal()
    }

    /// Processing times in seconds of the frames processed after the first `marker` (a count
    /// from `frameStatistics.processed`), as far back as the last 10,000.
    public func frameSeconds(after marker: Int) -> [Double] { metrics.latencies(after: marker) }

    /// Figures and latency of the frames processed so far (benchmarks, the stream test).
    public var frameStatistics: (processed: Int, dropped: Int, p50Seconds: Double?, p99Seconds: Double?) {
        let s = metrics.snapshot
        return (s.processed, s.dropped, s.p50, s.p99)
    }

    // MARK: - Callback dispatch (event loop thread)

    fileprivate func callback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                              _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let wsi else { return 0 }
        let key = Int(bitPattern: UnsafeRawPointer(wsi))
        switch reason {
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, key: key, path: input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/")
        case LWS_CALLBACK_HTTP_BODY:
            guard let input else { return 0 }
            return httpBody(wsi, key: key, UnsafeRawBufferPointer(start: input, count: length))
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            return httpBodyComplete(wsi, key: key)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi, key: key)
        case LWS_CALLBACK_CLOSED_HTTP:
            if let exchange = exchanges.removeValue(forKey: key) { exchange.discard() }
            return 0
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return filterWebSocket(wsi, key: key)
        case LWS_CALLBACK_ESTABLISHED:
            established(wsi, key: key)
            return 0
        case LWS_CALLBACK_RECEIVE:
            return receive(wsi, key: key, input.map { UnsafeRawBufferPointer(start: $0, count: length) } ?? UnsafeRawBufferPointer(start: nil, count: 0))
        case LWS_CALLBACK_SERVER_WRITEABLE:
            return streamWriteable(wsi, key: key)
        case LWS_CALLBACK_CLOSED:
            streamClosed(key: key)
            return 0
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            deliver()
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    // MARK: HTTP

    private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes, limit: Int = 4096) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < limit else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func httpRequest(_ wsi: OpaquePointer, key: Int, path: String) -> Int32 {
        var uri: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        let method = lws_http_get_uri_and_method(wsi, &uri, &uriLength)
        let requestMethod: HTTPRequest.Method = method == Int32(LWSHUMETH_GET) ? .get
            : method == Int32(LWSHUMETH_POST) ? .post : method == Int32(LWSHUMETH_HEAD) ? .head
            : method == Int32(LWSHUMETH_DELETE) ? .delete : .other
        let fullPath = uri.flatMap { uriLength > 0 ? String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(uriLength)), as: UTF8.self) : nil } ?? path
        let cleanPath = String(fullPath.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "/")
        let exchange = HTTPExchange(id: nextID, wsi: wsi, request: HTTPRequest(method: requestMethod, path: cleanPath,
                                                                                  authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION),
                                                                                  body: [], host: header(wsi, WSI_TOKEN_HOST),
                                                                                  origin: header(wsi, WSI_TOKEN_ORIGIN)))
        nextID += 1
        exchanges[key] = exchange
        if let refusal = Self.framingProblem(contentLength: header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH),
                                             lengthPresent: lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0,
                                             transferEncoding: header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING),
                                             encodingPresent: lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
            metrics.error("badRequest")
            return respondLater(wsi, exchange, refusal)
        }
        if requestMethod == .post {
            let declared = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let isUpload = HTTPRoutes.uploadPaths.contains(cleanPath)
            if cleanPath == HTTPRoutes.signedUploadPath && configuration.signingKey == nil {
                return respondLater(wsi, exchange, .error(404, "notFound", "this service does not sign reports (start it with --sign-key)"))
            }
            exchange.limit = isUpload ? configuration.limits.maxUploadBytes : ClientMessage.maxBytes
            if isUpload && !routes.authorized(exchange.request) {
                return respondLater(wsi, exchange, routes.unauthorized())
            }
            if let declared, declared > exchange.limit {
                metrics.error("tooLarge")
                return respondLater(wsi, exchange, .error(413, "tooLarge", "the body of \(declared) bytes exceeds the limit of \(exchange.limit)"))
            }
            if isUpload {
                do { try exchange.openUpload() } catch {
                    return respondLater(wsi, exchange, .error(500, "internal", error.message))
                }
            }
            if declared == 0 || (declared == nil && header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) == nil) {
                return httpBodyComplete(wsi, key: key)
            }
            return 0
        }
        if requestMethod == .head {
            // HEAD is GET without the body (RFC 9110 §9.3.2): the same status and headers.
            var get = exchange.request
            get.method = .get
            var response = routes.respond(get)
            response.headOnly = true
            response.closeAfter = true
            return respondLater(wsi, exchange, response)
        }
        return respondLater(wsi, exchange, routes.respond(exchange.request))
    }

    /// A request whose body framing is ambiguous or unsupported (RFC 9112 §6.3): Content-Length
    /// with Transfer-Encoding, a Content-Length that is not one plain decimal number (`+100`,
    /// `0x10`, `10, 10` from a repeated header, one too large), or a chunked body, which this
    /// service does not read. Answered 400 (411 for chunked) and the connection closed, so that no
    /// leftover byte is read as a second request behind a proxy.
    static func framingProblem(contentLength: String?, lengthPresent: Bool, transferEncoding: String?,
                               encodingPresent: Bool) -> HTTPResponse? {
        func refuse(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
            var response = HTTPResponse.error(status, code, message)
            response.closeAfter = true
            return response
        }
        if lengthPresent && encodingPresent {
            return refuse(400, "badRequest", "Content-Length and Transfer-Encoding together: the body's length is ambiguous (RFC 9112 §6.3)")
        }
        if lengthPresent {
            let text = (contentLength ?? "").trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, text.utf8.count <= 15, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return refuse(400, "badRequest", "Content-Length must be one decimal number of bytes, not '\(String(text.prefix(40)))'")
            }
        }
        if encodingPresent {
            return refuse(411, "lengthRequired", "send the body with a Content-Length; Transfer-Encoding '\(String((transferEncoding ?? "").prefix(40)))' is not accepted")
        }
        return nil
    }

    private func httpBody(_ wsi: OpaquePointer, key: Int, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let exchange = exchanges[key], exchange.response == nil else { return 0 }
        if exchange.received + bytes.count > exchange.limit {
            metrics.error("tooLarge")
            exchange.discard()
            return -1  // a body beyond its limit: the connection is closed, nothing more is read
        }
        do { try exchange.append(bytes) } catch {
            exchange.discard()
            return respondLater(wsi, exchange, .error(500, "internal", error.message))
        }
        return 0
    }

    private func httpBodyComplete(_ wsi: OpaquePointer, key: Int) -> Int32 {
        guard let exchange = exchanges[key], exchange.response == nil else { return 0 }
        if HTTPRoutes.uploadPaths.contains(exchange.request.path) {
            guard let path = exchange.finishUpload() else {
                return respondLater(wsi, exchange, .error(500, "internal", "the upload could not be stored"))
            }
            if !uploads.submit(id: exchange.id, path: path, signed: exchange.request.path == HTTPRoutes.signedUploadPath) {
                exchange.discard()
                metrics.uploadAnswered(status: 503)
                return respondLater(wsi, exchange, .error(503, "busy", "too many analyses queued; try again shortly", headers: [("retry-after", "10")]))
            }
            exchange.waitingForAnalysis = true
            return 0
        }
        return respondLater(wsi, exchange, routes.respond(exchange.request))
    }

    private func respondLater(_ wsi: OpaquePointer, _ exchange: HTTPExchange, _ response: HTTPResponse) -> Int32 {
        exchange.response = response
        lws_callback_on_writable(wsi)
        return 0
    }

    private func finishedUpload(_ id: UInt64, _ response: HTTPResponse) {
        metrics.uploadAnswered(status: response.status)
        completedLock.withLock { completed[id] = response }
        wakeLoop()
    }

    private func httpWriteable(_ wsi: OpaquePointer, key: Int) -> Int32 {
        guard let exchange = exchanges[key], let response = exchange.response, !exchange.responded else { return 0 }
        exchange.responded = true
        let headers = HTTPResponse.securityHeaders + response.headers + (response.closeAfter ? [("connection", "close")] : [])
        let headerSpace = 4096
        var buffer = [UInt8](repeating: 0, count: lws_shim_pre + headerSpace + response.body.count + 1)
        let ok: Bool = buffer.withUnsafeMutableBufferPointer { raw in
            let start = raw.baseAddress! + lws_shim_pre
            let end = start + headerSpace - 1
            var p: UnsafeMutablePointer<UInt8>? = start
            let added = response.contentType.withCString { type in
                lws_add_http_common_headers(wsi, UInt32(response.status), type, lws_filepos_t(response.body.count), &p, end)
            }
            guard added == 0 else { return false }
            for (name, value) in headers {
                let status = (name + ":").withCString { n in
                    value.withCString { v in
                        lws_add_http_header_by_name(wsi, UnsafeRawPointer(n).assumingMemoryBound(to: UInt8.self),
                                                    UnsafeRawPointer(v).assumingMemoryBound(to: UInt8.self),
                                                    Int32(value.utf8.count), &p, end)
                    }
                }
                guard status == 0 else { return false }
            }
            guard lws_finalize_write_http_header(wsi, start, &p, end) == 0 else { return false }
            let body = start + headerSpace
            response.body.withUnsafeBufferPointer { b in
                if let base = b.baseAddress { body.update(from: base, count: b.count) }
            }
            if response.headOnly { return lws_write(wsi, body, 0, LWS_WRITE_HTTP_FINAL) >= 0 }
            return lws_write(wsi, body, response.body.count, LWS_WRITE_HTTP_FINAL) >= 0
        }
        guard ok else { return -1 }
        if response.closeAfter { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    // MARK: WebSocket

    private func filterWebSocket(_ wsi: OpaquePointer, key: Int) -> Int32 {
        guard let uri = header(wsi, WSI_TOKEN_GET_URI) else { return 1 }
        let parts = uri.split(separator: "?").first.map { $0.split(separator: "/").map(String.init) } ?? []
        guard parts.count == 4, parts[0] == "v1", parts[1] == "sessions", parts[3] == "stream" else {
            metrics.error("notFound")
            return 1
        }
        // The token: an entry "token.<hex>" of Sec-WebSocket-Protocol (what a browser can send),
        // or Authorization: Bearer <hex>. Never the query string.
        var token: String?
        if let offered = header(wsi, WSI_TOKEN_PROTOCOL) {
            token = offered.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix(StreamProtocol.tokenPrefix) }.map { String($0.dropFirst(StreamProtocol.tokenPrefix.count)) }
        }
        if token == nil, let authorization = header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION), authorization.hasPrefix("Bearer ") {
            token = String(authorization.dropFirst(7))
        }
        guard let token else {
            metrics.error("forbidden")
            return 1
        }
        switch host.claim(id: parts[2], token: Array(token.utf8)) {
        case .success:
            claims[key] = parts[2]
            return 0
        case .failure:
            metrics.error("forbidden")
            return 1
        }
    }

    private func established(_ wsi: OpaquePointer, key: Int) {
        guard let sessionID = claims.removeValue(forKey: key) else { return }
        let connection = StreamConnection(id: nextID, wsi: wsi, sessionID: sessionID)
        nextID += 1
        connections[key] = connection
        connectionsByID[connection.id] = key
        host.attach(id: sessionID, connection: connection.id)
        deliver()
    }

    private func receive(_ wsi: OpaquePointer, key: Int, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let connection = connections[key], !connection.closing else { return 0 }
        if lws_is_first_fragment(wsi) != 0 && connection.message.isEmpty {
            connection.binary = lws_frame_is_binary(wsi) != 0
        }
        if connection.message.count + bytes.count > configuration.limits.maxMessageBytes {
            // Across continuation frames too: the message is never held beyond the limit.
            host.protocolViolation(.frameTooLarge)
            connection.message = []
            let reason = "message larger than \(configuration.limits.maxMessageBytes) bytes"
            reason.withCString { r in
                lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE,
                                 UnsafeMutableRawPointer(mutating: r).assumingMemoryBound(to: UInt8.self), reason.utf8.count)
            }
            return -1
        }
        connection.message.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let message = connection.message
        connection.message = []
        if connection.binary {
            host.receive(frame: message, session: connection.sessionID)
        } else {
            host.receive(text: message, session: connection.sessionID)
        }
        deliver()
        return 0
    }

    private func streamWriteable(_ wsi: OpaquePointer, key: Int) -> Int32 {
        guard let connection = connections[key], !connection.outgoing.isEmpty else { return 0 }
        let next = connection.outgoing.removeFirst()
        switch next {
        case let .text(bytes):
            var buffer = [UInt8](repeating: 0, count: lws_shim_pre + bytes.count)
            buffer.replaceSubrange(lws_shim_pre..., with: bytes)
            let written = buffer.withUnsafeMutableBufferPointer { raw in
                lws_write(wsi, raw.baseAddress! + lws_shim_pre, bytes.count, LWS_WRITE_TEXT)
            }
            if written < bytes.count { return -1 }
            if !connection.outgoing.isEmpty { lws_callback_on_writable(wsi) }
            return 0
        case let .close(code, reason):
            connection.closing = true
            reason.withCString { r in
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)),
                                 UnsafeMutableRawPointer(mutating: r).assumingMemoryBound(to: UInt8.self), reason.utf8.count)
            }
            return -1
        }
    }

    private func streamClosed(key: Int) {
        claims[key] = nil
        guard let connection = connections.removeValue(forKey: key) else { return }
        connectionsByID[connection.id] = nil
        host.disconnected(session: connection.sessionID, connection: connection.id)
    }

    /// Moves what workers queued to the connections and asks for writeable callbacks; answers
    /// finished uploads.
    private func deliver() {
        for (id, messages) in host.takeOutgoing() {
            guard let key = connectionsByID[id], let connection = connections[key], !connection.closing else { continue }
            connection.outgoing += messages
            lws_callback_on_writable(connection.wsi)
        }
        let done = completedLock.withLock {
            let taken = completed
            completed = [:]
            return taken
        }
        for (id, response) in done {
            // The client may have gone meanwhile: then the exchange is gone too.
            guard let exchange = exchanges.values.first(where: { $0.id == id }) else { continue }
            exchange.waitingForAnalysis = false
            exchange.discard()
            exchange.response = response
            lws_callback_on_writable(exchange.wsi)
        }
    }
}

/// One WebSocket stream (event loop only).
final class StreamConnection {
    let id: ConnectionID
    let wsi: OpaquePointer
    let sessionID: String
    var message: [UInt8] = []
    var binary = false
    var outgoing: [Outgoing] = []
    var closing = false

    init(id: ConnectionID, wsi: OpaquePointer, sessionID: String) {
        self.id = id
        self.wsi = wsi
        self.sessionID = sessionID
    }
}

/// libwebsockets' callback: a plain C function that finds the server through the context's
/// user pointer (Swift 6 does not allow a closure here).
func livenessLWSCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let pointer = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let server = Unmanaged<LivenessServer>.fromOpaque(pointer).takeUnretainedValue()
    return server.callback(wsi, reason, user, input, length)
}

/// libwebsockets' log lines (errors only), prefixed so that they read as the service's.
func livenessLWSLog(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
    FileHandle.standardError.write(Data("liveness serve: libwebsockets: \(text)\n".utf8))
}
