import CWebSockets
import Foundation
import LivenessKit

#if canImport(Glibc)
import Glibc
#endif

/// Where a client connects: parsed from `http://host:port` or `https://host:port`.
public struct ServiceAddress: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var tls: Bool

    /// Parses a base URL (`http://127.0.0.1:8080`, `https://example.org`).
    public init(url: String) throws(ClientError) {
        var rest = Substring(url)
        if rest.hasPrefix("https://") { tls = true; rest = rest.dropFirst(8) }
        else if rest.hasPrefix("http://") { tls = false; rest = rest.dropFirst(7) }
        else if rest.hasPrefix("wss://") { tls = true; rest = rest.dropFirst(6) }
        else if rest.hasPrefix("ws://") { tls = false; rest = rest.dropFirst(5) }
        else { throw ClientError("\(url): a service URL starts with http:// or https://") }
        let authority = rest.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? Int(after.dropFirst()) ?? -1 : (tls ? 443 : 80)
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = Int(authority[authority.index(after: colon)...]) ?? -1
        } else {
            host = authority
            port = tls ? 443 : 80
        }
        guard !host.isEmpty, (1...65535).contains(port) else { throw ClientError("\(url): no host and port") }
    }
}

/// TLS settings of a client.
public struct ClientTLS: Sendable {
    /// A PEM file of certificates to trust (the service's own, for a self-signed one).
    public var caFile: String?
    /// Accept any certificate (testing only).
    public var insecure = false
    public init(caFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.insecure = insecure
    }
}

/// A client of `liveness serve` on libwebsockets: one HTTP request at a time (`request`) and
/// WebSocket connections (`WebSocketConnection`). Used by `liveness stream` and the tests.
public enum ServiceClient {
    /// An HTTP response as received.
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]

        /// The body decoded as `type` (JSON).
        /// - Throws: `DecodingError` when the body is not JSON of that shape.
        public func decoded<T: Decodable>(as type: T.Type) throws -> T {
            try JSONDecoder().decode(type, from: Data(body))
        }
    }

    /// The part of `POST /v1/sessions`'s answer (201) a camera client needs: the session's id and
    /// its single-use camera token.
    public struct CreatedSession: Sendable, Decodable {
        public var id: String
        public var token: String
    }

    /// Sends one request and waits for the whole response (at most `timeout` seconds).
    public static func request(_ method: String, _ path: String, at address: ServiceAddress, tls: ClientTLS = .init(),
                               bearer: String? = nil, body: [UInt8] = [], contentType: String = "application/json",
                               timeout: Double = 30) throws(ClientError) -> Response {
        let exchange = ClientHTTPExchange(method: method, path: path, address: address, bearer: bearer, body: body,
                                          contentType: contentType)
        return try exchange.run(tls: tls, timeout: timeout)
    }
}

/// What the client callback needs from whichever client object owns the context.
protocol ClientCallbackTarget: AnyObject {
    func callback(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32
}

/// The C callback of client contexts (a plain function, as Swift 6 requires).
func livenessLWSClientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                               _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let pointer = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let target = Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue() as! ClientCallbackTarget
    return target.callback(wsi, reason, input, length)
}

/// Creates a client context whose callbacks go to `target`; the strings it needs are kept in `keep`.
func makeClientContext(target: AnyObject, protocolName: String, tls: ClientTLS,
                       keep: inout [UnsafeMutablePointer<CChar>]) throws(ClientError) -> (OpaquePointer, UnsafeMutablePointer<lws_protocols>) {
    lws_set_log_level(Int32(lws_shim_log_errors), livenessClientLWSLog)
    func hold(_ s: String) -> UnsafeMutablePointer<CChar> { holdCString(s, in: &keep) }
    let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
    protocols.initialize(repeating: lws_protocols(), count: 2)
    protocols[0].name = UnsafePointer(hold(protocolName))
    protocols[0].callback = livenessLWSClientCallback
    protocols[0].rx_buffer_size = 65536
    var info = lws_context_creation_info()
    info.port = -1  // CONTEXT_PORT_NO_LISTEN
    info.protocols = UnsafePointer(protocols)
    info.options = lws_shim_option_ssl_global_init
    info.user = UnsafeMutableRawPointer(Unmanaged.passUnretained(target).toOpaque())
    if let ca = tls.caFile { info.client_ssl_ca_filepath = UnsafePointer(hold(ca)) }
    guard let context = lws_create_context(&info) else {
        protocols.deallocate()
        throw ClientError("libwebsockets could not create a client context")
    }
    return (context, protocols)
}

/// A C copy of `s` that lives until the caller frees what `keep` holds.
func holdCString(_ s: String, in keep: inout [UnsafeMutablePointer<CChar>]) -> UnsafeMutablePointer<CChar> {
    let copy = strdup(s)!
    keep.append(copy)
    return copy
}

/// Opens a client connection on `context` to `path` at `address`, over TLS when the address
/// says so (`tls.insecure`: any certificate). `method` and `protocolName` go in the request when
/// given; `origin` sends the host as the Origin header. The strings it needs are kept in `keep`.
func connectClient(context: OpaquePointer, address: ServiceAddress, path: String, tls: ClientTLS, method: String? = nil,
                   protocolName: String?, origin: Bool, keep: inout [UnsafeMutablePointer<CChar>]) throws(ClientError) -> OpaquePointer {
    var info = lws_client_connect_info()
    func hold(_ s: String) -> UnsafePointer<CChar> { UnsafePointer(holdCString(s, in: &keep)) }
    info.context = context
    info.address = hold(address.host)
    info.port = Int32(address.port)
    info.path = hold(path)
    info.host = hold(address.host)
    if origin { info.origin = hold(address.host) }
    if let method { info.method = hold(method) }
    if let protocolName { info.protocol = hold(protocolName) }
    info.alpn = hold("http/1.1")
    if address.tls {
        info.ssl_connection = Int32(lws_shim_client_ssl) | (tls.insecure
            ? Int32(lws_shim_client_allow_selfsigned | lws_shim_client_skip_hostname_check) : 0)
    }
    guard let wsi = lws_client_connect_via_info(&info) else {
        throw ClientError("cannot connect to \(address.host):\(address.port)")
    }
    return wsi
}

/// Adds a header while a client handshake is built (`in` is a `char **`, `length` the room left).
func appendClientHeader(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int, _ token: lws_token_indexes,
                        _ value: String) -> Bool {
    guard let input else { return false }
    let p = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
    guard let start = p.pointee else { return false }
    let end = start + length
    return value.withCString { v in
        lws_add_http_header_by_token(wsi, token, UnsafeRawPointer(v).assumingMemoryBound(to: UInt8.self), Int32(value.utf8.count),
                                     p, end) == 0
    }
}

/// One HTTP request on a context of its own, serviced on the calling thread.
final class ClientHTTPExchange: ClientCallbackTarget {
    let method: String, path: String, address: ServiceAddress, bearer: String?, body: [UInt8], contentType: String
    private var status = 0
    private var received: [UInt8] = []
    private var done = false
    private var failure: String?
    private var sent = 0

    init(method: String, path: String, address: ServiceAddress, bearer: String?, body: [UInt8], contentType: String) {
        self.method = method
        self.path = path
        self.address = address
        self.bearer = bearer
        self.body = body
        self.contentType = contentType
    }

    func run(tls: ClientTLS, timeout: Double) throws(ClientError) -> ServiceClient.Response {
        var strings: [UnsafeMutablePointer<CChar>] = []
        defer { for s in strings { free(s) } }
        let (context, protocols) = try makeClientContext(target: self, protocolName: "http", tls: tls, keep: &strings)
        defer {
            lws_context_destroy(context)
            protocols.deallocate()
        }
        _ = try connectClient(context: context, address: address, path: path, tls: tls, method: method, protocolName: "http",
                              origin: true, keep: &strings)
        let deadline = Date().addingTimeInterval(timeout)
        while !done && Date() < deadline {
            if lws_service(context, 50) < 0 { break }
        }
        if let failure { throw ClientError("\(method) \(path): \(failure)") }
        guard done else { throw ClientError("\(method) \(path): no answer within \(Int(timeout)) s") }
        return ServiceClient.Response(status: status, body: received)
    }

    func callback(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            if let bearer, !appendClientHeader(wsi, input, length, WSI_TOKEN_HTTP_AUTHORIZATION, "Bearer \(bearer)") { return -1 }
            if method == "POST" {
                guard appendClientHeader(wsi, input, length, WSI_TOKEN_HTTP_CONTENT_LENGTH, String(body.count)),
                      appendClientHeader(wsi, input, length, WSI_TOKEN_HTTP_CONTENT_TYPE, contentType) else { return -1 }
                if !body.isEmpty {
                    lws_client_http_body_pending(wsi, 1)
                    lws_callback_on_writable(wsi)
                }
            }
            return 0
        case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE:
            guard sent < body.count else { return 0 }
            let chunk = min(65536, body.count - sent)
            var buffer = [UInt8](repeating: 0, count: lws_shim_pre + chunk)
            buffer.replaceSubrange(lws_shim_pre..., with: body[sent..<(sent + chunk)])
            let last = sent + chunk == body.count
            let n = buffer.withUnsafeMutableBufferPointer { raw in
                lws_write(wsi, raw.baseAddress! + lws_shim_pre, chunk, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
            }
            if n < 0 { return -1 }
            sent += chunk
            if last { lws_client_http_body_pending(wsi, 0) } else { lws_callback_on_writable(wsi) }
            return 0
        case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
            status = Int(lws_http_client_http_response(wsi))
            return 0
        case LWS_CALLBACK_RECEIVE_CLIENT_HTTP:
            var buffer = [CChar](repeating: 0, count: lws_shim_pre + 16384)
            return buffer.withUnsafeMutableBufferPointer { raw in
                var p: UnsafeMutablePointer<CChar>? = raw.baseAddress! + lws_shim_pre
                var n = Int32(raw.count - lws_shim_pre)
                return lws_http_client_read(wsi, &p, &n) < 0 ? -1 : 0
            }
        case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
            if let input { received += UnsafeRawBufferPointer(start: input, count: length) }
            if received.count > 64 << 20 { failure = "response larger than 64 MB"; done = true; return -1 }
            return 0
        case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
            done = true
            return 0
        case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
            if status != 0 { done = true }
            return 0
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            failure = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            done = true
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, nil, input, length)
        }
    }
}

/// A WebSocket connection to a session's stream, serviced on a thread of its own. `send` queues
/// a message (text, binary, or binary in fragments); `next` waits for the next message from the
/// server; `closeCode` tells how the server closed the stream.
public final class WebSocketConnection: ClientCallbackTarget, @unchecked Sendable {
    /// A message received from the server.
    public enum Received: Sendable {
        case text(String)
        case closed(code: Int, reason: String)
    }

    private var context: OpaquePointer?
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var wsi: OpaquePointer?
    private let condition = NSCondition()
    private var outgoing: [(bytes: [UInt8], binary: Bool, fragments: Int)] = []
    private var fragmentsLeft: [[UInt8]] = []
    private var received: [Received] = []
    private var partial: [UInt8] = []
    private var established = false
    private var ended = false
    private var failure: String?
    private var peerClose: (Int, String)?
    private var thread: Thread?
    private var stopping = false
    private let protocolHeader: String
    private let bearer: String?

    /// Connects to `path` (`/v1/sessions/{id}/stream`) offering `protocolHeader` (by default the
    /// subprotocol and the token entry), or with the token as a bearer header. With `plain`, a
    /// WebSocket without a subprotocol or an Origin header (another service's socket, such as a
    /// browser's DevTools endpoint).
    public init(address: ServiceAddress, path: String, token: String?, tls: ClientTLS = .init(), tokenInHeader: Bool = false,
                protocolHeader: String? = nil, plain: Bool = false, timeout: Double = 10) throws(ClientError) {
        self.protocolHeader = protocolHeader ?? (tokenInHeader || token == nil ? StreamProtocol.subprotocol
            : "\(StreamProtocol.subprotocol), \(StreamProtocol.tokenPrefix)\(token!)")
        bearer = tokenInHeader ? token : nil
        let (context, protocols) = try makeClientContext(target: self, protocolName: StreamProtocol.subprotocol, tls: tls, keep: &strings)
        self.context = context
        self.protocols = protocols
        do {
            wsi = try connectClient(context: context, address: address, path: path, tls: tls,
                                    protocolName: plain ? nil : self.protocolHeader, origin: !plain, keep: &strings)
        } catch {
            close()
            throw error
        }
        let loop = Thread { [self] in serviceLoop() }
        loop.name = "liveness-ws-client"
        thread = loop
        loop.start()
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while !established && !ended && Date() < deadline { _ = condition.wait(until: deadline) }
        let ok = established, reason = failure
        condition.unlock()
        if !ok {
            close()
            throw ClientError("the stream could not be opened: \(reason ?? "refused or timed out")")
        }
    }

    deinit { close() }

    private func serviceLoop() {
        guard let context else { return }
        while !condition.withLock({ stopping }) {
            if lws_service(context, 50) < 0 { break }
        }
    }

    /// Queues a text message.
    public func send(text: String) { enqueue(Array(text.utf8), binary: false, fragments: 1) }

    /// Queues a binary message, optionally split into `fragments` WebSocket frames.
    public func send(binary bytes: [UInt8], fragments: Int = 1) { enqueue(bytes, binary: true, fragments: max(1, fragments)) }

    private func enqueue(_ bytes: [UInt8], binary: Bool, fragments: Int) {
        condition.withLock { outgoing.append((bytes, binary, fragments)) }
        if let context { lws_cancel_service(context) }
    }

    /// Messages queued but not yet written.
    public var pendingSends: Int { condition.withLock { outgoing.count + (fragmentsLeft.isEmpty ? 0 : 1) } }

    /// The next message from the server, or nil after `timeout` seconds.
    public func next(timeout: Double = 30) -> Received? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while received.isEmpty && !ended && Date() < deadline { _ = condition.wait(until: deadline) }
        return received.isEmpty ? nil : received.removeFirst()
    }

    /// Closes the connection and frees the context.
    public func close() {
        condition.withLock { stopping = true }
        if let context { lws_cancel_service(context) }
        if let thread, thread != Thread.current {
            while thread.isExecuting { Thread.sleep(forTimeInterval: 0.01) }
        }
        thread = nil
        if let context { lws_context_destroy(context) }
        context = nil
        protocols?.deallocate()
        protocols = nil
        for s in strings { free(s) }
        strings = []
    }

    func callback(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            if let bearer, !appendClientHeader(wsi, input, length, WSI_TOKEN_HTTP_AUTHORIZATION, "Bearer \(bearer)") { return -1 }
            return 0
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            condition.withLock {
                established = true
                condition.broadcast()
            }
            lws_callback_on_writable(wsi)
            return 0
        case LWS_CALLBACK_CLIENT_RECEIVE:
            if let input { partial += UnsafeRawBufferPointer(start: input, count: length) }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                let text = String(decoding: partial, as: UTF8.self)
                partial = []
                condition.withLock {
                    received.append(.text(text))
                    condition.broadcast()
                }
            }
            return 0
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            var code = 0
            var reason = ""
            if let input, length >= 2 {
                let b = input.assumingMemoryBound(to: UInt8.self)
                code = Int(b[0]) << 8 | Int(b[1])
                reason = String(decoding: UnsafeRawBufferPointer(start: input + 2, count: length - 2), as: UTF8.self)
            }
            condition.withLock { peerClose = (code, reason) }
            return 0
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return writeNext(wsi)
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            if let current = self.wsi, condition.withLock({ established && !ended && (!outgoing.isEmpty || !fragmentsLeft.isEmpty) }) {
                lws_callback_on_writable(current)
            }
            return 0
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            condition.withLock {
                failure = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
                ended = true
                self.wsi = nil
                condition.broadcast()
            }
            return 0
        case LWS_CALLBACK_CLIENT_CLOSED:
            condition.withLock {
                ended = true
                self.wsi = nil
                let (code, text) = peerClose ?? (1006, "closed without a close frame")
                received.append(.closed(code: code, reason: text))
                condition.broadcast()
            }
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, nil, input, length)
        }
    }

    private func writeNext(_ wsi: OpaquePointer) -> Int32 {
        var bytes: [UInt8]
        var mode: lws_write_protocol
        condition.lock()
        if !fragmentsLeft.isEmpty {
            bytes = fragmentsLeft.removeFirst()
            mode = lws_write_protocol(rawValue: LWS_WRITE_CONTINUATION.rawValue | (fragmentsLeft.isEmpty ? 0 : LWS_WRITE_NO_FIN.rawValue))
        } else if !outgoing.isEmpty {
            let next = outgoing.removeFirst()
            let base = next.binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT
            if next.fragments > 1 {
                let size = max(1, (next.bytes.count + next.fragments - 1) / next.fragments)
                var pieces = stride(from: 0, to: next.bytes.count, by: size).map { Array(next.bytes[$0..<min($0 + size, next.bytes.count)]) }
                bytes = pieces.removeFirst()
                fragmentsLeft = pieces
                mode = lws_write_protocol(rawValue: base.rawValue | (pieces.isEmpty ? 0 : LWS_WRITE_NO_FIN.rawValue))
            } else {
                bytes = next.bytes
                mode = base
            }
        } else {
            condition.unlock()
            return 0
        }
        let more = !outgoing.isEmpty || !fragmentsLeft.isEmpty
        condition.unlock()
        var buffer = [UInt8](repeating: 0, count: lws_shim_pre + bytes.count)
        buffer.replaceSubrange(lws_shim_pre..., with: bytes)
        let n = buffer.withUnsafeMutableBufferPointer { raw in lws_write(wsi, raw.baseAddress! + lws_shim_pre, bytes.count, mode) }
        if n < 0 { return -1 }
        if more { lws_callback_on_writable(wsi) }
        return 0
    }
}

/// libwebsockets' error lines on the client side, to standard error.
func livenessClientLWSLog(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
    FileHandle.standardError.write(Data("liveness client: libwebsockets: \(text)\n".utf8))
}
