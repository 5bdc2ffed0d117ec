import Foundation
import LivenessEvidence
import LivenessClient
import LivenessService
import LivenessStore
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Webhooks (docs/webhooks.md) end to end over real sockets: the receiver is
/// Tools/webhook_receiver.py, Python's `http.server`, which verifies the HMAC with Python's `hmac`
/// and the report's Ed25519 signature with the `cryptography` package (no engine code), and records
/// every request. Sessions end `cancelled` (the camera client's cancel), a real verdict that sends
/// its result like any other. The store is the SQLite store in a temporary folder; its outbox is
/// read with Python's sqlite3.
final class WebhookTests: XCTestCase {
    private static let secret = "3f7c1a9e5b2d4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"

    /// A running Tools/webhook_receiver.py on 127.0.0.1.
    private final class Receiver {
        let port: Int
        let record: URL
        private let process: Process

        init(_ test: XCTestCase, folder: URL, port: Int = 0, arguments: [String] = []) throws {
            let secretFile = folder.appendingPathComponent("receiver-secret")
            try (WebhookTests.secret + "\n").write(to: secretFile, atomically: true, encoding: .utf8)
            record = folder.appendingPathComponent("received-\(UUID().uuidString.prefix(8)).jsonl")
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [Fixtures.packageRoot.appendingPathComponent("Tools/webhook_receiver.py").path, "--port", String(port),
                                 "--secret-file", secretFile.path, "--record", record.path] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let process = process
            test.addTeardownBlock { if process.isRunning { process.terminate(); process.waitUntilExit() } }
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line += chunk
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let value = text.split(separator: " ").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
                throw ServiceError("the receiver did not start: \(text)")
            }
            self.port = value
        }

        var url: String { "http://127.0.0.1:\(port)/hook" }

        /// Every request received so far, in order.
        func requests() -> [[String: Any]] {
            guard let text = try? String(contentsOf: record, encoding: .utf8) else { return [] }
            return text.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    private func storeKey() throws -> StoreKey { try StoreKey(bytes: [UInt8](repeating: 42, count: 32)) }

    /// A service with the SQLite store in `dir` that sends webhooks, retrying fast.
    private func webhookService(_ dir: URL, _ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> LivenessServer {
        let key = try storeKey()
        return try startService {
            $0.dataDirectory = dir.path
            $0.storeKey = key
            $0.webhookSecret = Array(Self.secret.utf8)
            $0.webhooks.firstRetrySeconds = 0.2
            $0.webhooks.pollSeconds = 0.1
            $0.webhooks.timeoutSeconds = 5
            configure(&$0)
        }
    }

    /// `POST /v1/sessions` with `body`: status and JSON.
    private func create(_ base: String, _ body: String) throws -> (status: Int, json: [String: Any]) {
        let response = try ServiceClient.request("POST", "/v1/sessions", at: try ServiceAddress(url: base), body: Array(body.utf8))
        return (response.status, response.json ?? [:])
    }

    /// A session created at `base` with `callback`, opened and cancelled by its camera client: it
    /// ends `failed`/`cancelled`. Returns its id.
    private func cancelledSession(_ base: String, callback: String?) throws -> String {
        let body = callback.map { #"{"callbackUrl":"\#($0)"}"# } ?? "{}"
        let created = try create(base, body)
        XCTAssertEqual(created.status, 201, "\(created.json)")
        let id = try XCTUnwrap(created.json["id"] as? String), token = try XCTUnwrap(created.json["token"] as? String)
        let connection = try WebSocketConnection(address: try ServiceAddress(url: base), path: "/v1/sessions/\(id)/stream", token: token)
        defer { connection.close() }
        guard case .text? = connection.next(timeout: 20) else { XCTFail("no greeting"); return id }
        connection.send(text: #"{"type":"cancel"}"#)
        while let message = connection.next(timeout: 20) { if case .closed = message { break } }
        return id
    }

    /// GET through URLSession: status, headers (lower case), body.
    private func get(_ base: String, _ path: String) throws -> (status: Int, headers: [String: String], body: Data) {
        let box = GetBox()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: try XCTUnwrap(URL(string: base + path))) { data, response, error in
            box.value = (data, response as? HTTPURLResponse, error)
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        let (data, response, error) = try XCTUnwrap(box.value)
        if let error { throw error }
        let http = try XCTUnwrap(response)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, headers, data ?? Data())
    }

    /// Waits up to `seconds` for `condition`.
    private func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }

    /// Python's sqlite3 over the store: one line per row, columns joined by `|`.
    private func sql(_ dir: URL, _ query: String) throws -> [String] { try sqliteRows(in: dir, query) }

    // MARK: Tests

    /// A receiver that fails the first three deliveries gets the fourth attempt and accepts it:
    /// the same delivery each time, the HMAC and the report's Ed25519 signature valid by Python's
    /// own code, the body the very bytes GET serves, the retries spaced by the backoff.
    func testTheResultArrivesSignedAfterTheReceiverFailsThreeTimes() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let signing = try SigningKey.generate()
        let publicKey = dir.appendingPathComponent("liveness.pub")
        try signing.publicKey.pem.write(to: publicKey, atomically: true, encoding: .utf8)
        let receiver = try Receiver(self, folder: dir, arguments: ["--fail-first", "3", "--public-key", publicKey.path])
        let server = try webhookService(dir.appendingPathComponent("data")) { $0.signingKey = signing }
        let id = try cancelledSession(server.url, callback: receiver.url)

        XCTAssertTrue(eventually(30) { receiver.requests().count >= 4 }, "four attempts: \(receiver.requests())")
        Thread.sleep(forTimeInterval: 1)  // nothing more comes once one was accepted
        let requests = receiver.requests()
        XCTAssertEqual(requests.map { $0["answered"] as? Int }, [500, 500, 500, 200])
        let report = try get(server.url, "/v1/sessions/\(id)")
        XCTAssertEqual(report.status, 200)
        let deliveryIDs = Set(requests.compactMap { ($0["headers"] as? [String: String])?["liveness-delivery-id"] })
        XCTAssertEqual(deliveryIDs.count, 1, "one delivery, attempted four times")
        for (index, request) in requests.enumerated() {
            let headers = try XCTUnwrap(request["headers"] as? [String: String])
            XCTAssertEqual(request["hmacValid"] as? Bool, true, "attempt \(index + 1): HMAC checked by Python's hmac")
            XCTAssertEqual(request["signatureValid"] as? Bool, true, "attempt \(index + 1): Ed25519 checked by the cryptography package")
            XCTAssertEqual(headers["liveness-session-id"], id)
            XCTAssertEqual(headers["liveness-delivery-attempt"], String(index + 1))
            XCTAssertEqual(headers["content-type"], "application/json")
            XCTAssertEqual(Data((request["body"] as? String ?? "").utf8), report.body, "the body is the report GET serves")
            XCTAssertEqual(request["path"] as? String, "/hook")
            XCTAssertEqual(request["method"] as? String, "POST")
            XCTAssertLessThan(headers["liveness-report-signature"]?.count ?? 0, 2048, "a detached signature, short enough for any proxy")
        }
        let body = try XCTUnwrap(try JSONSerialization.jsonObject(with: report.body) as? [String: Any])
        XCTAssertEqual((body["verdict"] as? [String: Any])?["reason"] as? String, "cancelled")
        // Exponential backoff with jitter: 0.2 s × 2^(n-1), at least half of it.
        let times = requests.compactMap { $0["at"] as? Double }
        for n in 1..<times.count {
            XCTAssertGreaterThanOrEqual(times[n] - times[n - 1], 0.2 * pow(2, Double(n - 1)) * 0.5 - 0.05, "gap before attempt \(n + 1)")
        }
        XCTAssertEqual(report.headers["liveness-webhook"], "delivered; attempts=4")
        // The header with the body put back is the session's report.sig (as JSON values).
        let header = try XCTUnwrap((requests.last?["headers"] as? [String: String])?["liveness-report-signature"])
        var rebuilt = try XCTUnwrap(try JSONSerialization.jsonObject(with: try XCTUnwrap(Data(base64Encoded: header))) as? [String: Any])
        XCTAssertNil(rebuilt["report"])
        rebuilt["report"] = try JSONSerialization.jsonObject(with: report.body)
        let served = try XCTUnwrap(try JSONSerialization.jsonObject(with: try get(server.url, "/v1/sessions/\(id)/report.sig").body) as? [String: Any])
        XCTAssertEqual(NSDictionary(dictionary: rebuilt), NSDictionary(dictionary: served))
        print("webhook Liveness-Report-Signature: \(header.count) bytes")
        XCTAssertEqual(try sql(dir.appendingPathComponent("data"), "SELECT state, attempts FROM outbox WHERE session_id = '\(id)'"),
                       ["delivered|4"])
        let metrics = String(decoding: try get(server.url, "/metrics").body, as: UTF8.self)
        for line in ["liveness_webhook_deliveries_total{outcome=\"delivered\"} 1", "liveness_webhook_deliveries_total{outcome=\"failed\"} 3",
                     "liveness_webhook_deliveries_total{outcome=\"dead\"} 0", "liveness_webhook_outbox_pending 0",
                     "liveness_webhook_outbox_oldest_seconds 0.0", "liveness_webhook_seconds_count 4"] {
            XCTAssertTrue(metrics.contains(line + "\n"), "\(line) in\n\(metrics)")
        }
        print("webhook attempts: gaps \(zip(times.dropFirst(), times).map { String(format: "%.3f", $0 - $1) }) s; latency sum "
              + (metrics.split(separator: "\n").first { $0.hasPrefix("liveness_webhook_seconds_sum") } ?? ""))
    }

    /// The receiver is down while a real `liveness serve` (SQLite `--data-dir`) fails its first
    /// attempt, and the process is killed (SIGKILL) with another session streaming; the next
    /// process on the folder sends the pending delivery once the receiver is back (the same
    /// delivery id, a valid HMAC), and the streaming session's `interrupted` result too.
    func testADeliveryPendingAcrossARestartIsSentByTheNextProcess() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let keyFile = dir.appendingPathComponent("store.key").path
        XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: Data(repeating: 42, count: 32),
                                                     attributes: [.posixPermissions: 0o600]))
        let secretFile = dir.appendingPathComponent("webhook.secret")
        try (Self.secret + "\n").write(to: secretFile, atomically: true, encoding: .utf8)
        let data = dir.appendingPathComponent("data")
        let port = try freePort()
        let callback = "http://127.0.0.1:\(port)/hook"

        func serve() throws -> (Process, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try Fixtures.livenessExecutable())
            process.arguments = ["serve", "--port", "0", "--workers", "1", "--data-dir", data.path, "--store-key", keyFile,
                                 "--webhook-secret-file", secretFile.path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            addTeardownBlock { if process.isRunning { process.terminate(); process.waitUntilExit() } }
            var text = ""
            while !text.contains("webhooks signed") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            XCTAssertTrue(text.contains("liveness serve: webhooks signed (HMAC-SHA256) from the store's outbox"), text)
            let url = try XCTUnwrap(text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.hasPrefix("http://") }.map(String.init), text)
            return (process, url)
        }

        let (first, firstURL) = try serve()
        let id = try cancelledSession(firstURL, callback: callback)
        XCTAssertTrue(try eventually(20) { try get(firstURL, "/v1/sessions/\(id)").headers["liveness-webhook"] == "pending; attempts=1" },
                      "the first attempt failed: nobody listens")
        // A second session streaming when the process dies.
        let streaming = try create(firstURL, #"{"callbackUrl":"\#(callback)"}"#)
        let streamingID = try XCTUnwrap(streaming.json["id"] as? String)
        let connection = try WebSocketConnection(address: try ServiceAddress(url: firstURL), path: "/v1/sessions/\(streamingID)/stream",
                                                 token: try XCTUnwrap(streaming.json["token"] as? String))
        addTeardownBlock { connection.close() }
        guard case .text? = connection.next(timeout: 20) else { return XCTFail("no greeting") }
        connection.send(text: #"{"type":"start"}"#)
        XCTAssertTrue(try eventually(10) { try sql(data, "SELECT state FROM sessions WHERE id = '\(streamingID)'") == ["streaming"] })
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let stored = try sql(data, "SELECT id, state, attempts, last_error FROM outbox WHERE session_id = '\(id)'")
        XCTAssertEqual(stored.count, 1)
        let row = stored.first?.split(separator: "|").map(String.init) ?? []
        XCTAssertEqual(Array(row.dropFirst().prefix(2)), ["pending", "1"], "\(stored)")
        XCTAssertTrue(row.last?.hasPrefix("attempt 1: ") == true, "\(stored)")

        let receiver = try Receiver(self, folder: dir, port: port)
        let (_, secondURL) = try serve()
        // The default schedule: the second attempt 2.5 to 5 s after the first.
        XCTAssertTrue(eventually(30) { receiver.requests().count >= 2 }, "the next process sends the pending delivery and the interrupted one")
        func received(_ session: String) -> [[String: Any]] {
            receiver.requests().filter { ($0["headers"] as? [String: String])?["liveness-session-id"] == session }
        }
        let interrupted = try XCTUnwrap(received(streamingID).first, "\(receiver.requests())")
        let interruptedReport = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((interrupted["body"] as? String ?? "").utf8)) as? [String: Any])
        XCTAssertEqual((interruptedReport["verdict"] as? [String: Any])?["reason"] as? String, "interrupted")
        XCTAssertEqual(interrupted["hmacValid"] as? Bool, true)
        let request = try XCTUnwrap(received(id).first)
        let headers = try XCTUnwrap(request["headers"] as? [String: String])
        XCTAssertEqual(headers["liveness-delivery-id"], row.first, "the delivery queued before the restart")
        XCTAssertEqual(headers["liveness-session-id"], id)
        XCTAssertEqual(headers["liveness-delivery-attempt"], "2")
        XCTAssertEqual(request["hmacValid"] as? Bool, true)
        XCTAssertEqual(Data((request["body"] as? String ?? "").utf8), try get(secondURL, "/v1/sessions/\(id)").body)
        XCTAssertTrue(try eventually(10) { try get(secondURL, "/v1/sessions/\(id)").headers["liveness-webhook"] == "delivered; attempts=2" })
    }

    /// Callback URLs are checked when the session is created (400 with the rule broken); a
    /// receiver that redirects is never followed, and the delivery dies after its attempts.
    func testCallbackURLsAreCheckedAndRedirectsAreNeverFollowed() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let target = try Receiver(self, folder: dir)
        let redirecting = try Receiver(self, folder: dir, arguments: ["--redirect-to", target.url])
        let server = try webhookService(dir.appendingPathComponent("data")) { $0.webhooks.maximumAttempts = 2 }
        let refused: [(String, String)] = [
            ("http://example.com/hook", "must be https"),
            ("https://10.1.2.3/hook", "private, link-local, metadata or reserved"),
            ("https://169.254.169.254/latest/meta-data", "private, link-local, metadata or reserved"),
            ("https://[fd00:ec2::254]/", "private, link-local, metadata or reserved"),
            ("https://[::ffff:192.168.1.1]/", "private, link-local, metadata or reserved"),
            ("ftp://example.com/hook", "must be https"),
            ("https://user:password@example.com/hook", "user name or password"),
            ("not a url", "not an absolute http(s) URL"),
            ("https://example.com/hook#x", "fragment"),
        ]
        for (url, message) in refused {
            let created = try create(server.url, #"{"callbackUrl":"\#(url)"}"#)
            XCTAssertEqual(created.status, 400, url)
            let error = created.json["error"] as? [String: Any]
            XCTAssertEqual(error?["code"] as? String, "invalidCallbackUrl", url)
            XCTAssertTrue((error?["message"] as? String)?.contains(message) == true, "\(url): \(created.json)")
        }
        XCTAssertEqual(try create(server.url, #"{"callbackUrl":42}"#).status, 400)
        XCTAssertEqual(try create(server.url, #"{"callbackUrl":"https://example.com/hook"}"#).status, 201)
        XCTAssertEqual(try create(server.url, #"{"callbackUrl":"http://localhost:9/hook"}"#).status, 201, "http to loopback")

        let id = try cancelledSession(server.url, callback: redirecting.url)
        XCTAssertTrue(try eventually(20) { try get(server.url, "/v1/sessions/\(id)").headers["liveness-webhook"] == "dead; attempts=2" },
                      "two refused redirects, then dead")
        XCTAssertEqual(redirecting.requests().map { $0["answered"] as? Int }, [302, 302])
        XCTAssertEqual(target.requests().count, 0, "the redirect was not followed (by any method): \(target.requests())")
        XCTAssertEqual(try sql(dir.appendingPathComponent("data"), "SELECT state, last_error FROM outbox WHERE session_id = '\(id)'").first?
            .contains("dead|attempt 2: HTTP 302: redirect"), true)
        let metrics = String(decoding: try get(server.url, "/metrics").body, as: UTF8.self)
        for line in ["liveness_webhook_deliveries_total{outcome=\"failed\"} 1", "liveness_webhook_deliveries_total{outcome=\"dead\"} 1",
                     "liveness_webhook_outbox_dead 1"] {
            XCTAssertTrue(metrics.contains(line + "\n"), "\(line) in\n\(metrics)")
        }
    }

    /// Names that resolve to loopback or private addresses are refused when the delivery is
    /// attempted (only literal loopback hosts are exempt); the configuration is checked at start.
    func testAddressesAreCheckedAtDeliveryAndTheConfigurationAtStart() throws {
        // This machine's name resolves through /etc/hosts to a loopback address, but is not one of
        // the loopback names: refused, as a rebinding name would be.
        let name = ProcessInfo.processInfo.hostName
        let url = try WebhookURL.validate("https://\(name)/hook")
        XCTAssertFalse(url.isLoopback)
        let refusal = try XCTUnwrap(url.refusedAddress(), "\(name) resolves to a loopback address")
        XCTAssertTrue(refusal.contains("refused") || refusal.contains("cannot resolve"), refusal)
        XCTAssertNil(try WebhookURL.validate("http://localhost:8080/hook").refusedAddress())
        XCTAssertNil(try WebhookURL.validate("http://[::1]:8080/hook").refusedAddress())
        XCTAssertTrue(try WebhookURL.validate("https://name.invalid/hook").refusedAddress()?.contains("cannot resolve") == true)
        XCTAssertNoThrow(try WebhookURL.validate("https://93.184.215.14/hook"))
        XCTAssertNoThrow(try WebhookURL.validate("https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook"))
        XCTAssertThrowsError(try WebhookURL.validate("https://100.64.0.1/"))
        XCTAssertThrowsError(try WebhookURL.validate("https://[fe80::1]/"))
        XCTAssertThrowsError(try WebhookURL.validate("https://0.0.0.0/"))

        let model = try XCTUnwrap(ServiceTestSupport.model)
        func startRefusal(_ configure: (inout ServiceConfiguration) -> Void) -> String {
            var configuration = ServiceConfiguration()
            configuration.port = 0
            configure(&configuration)
            do {
                _ = try LivenessServer(configuration: configuration, model: model)
                return "started"
            } catch {
                return error.message
            }
        }
        let dir = try Fixtures.temporaryDirectory(self)
        let key = try storeKey()
        XCTAssertTrue(startRefusal { $0.webhookSecret = Array(Self.secret.utf8) }.contains("give --data-dir (or --store)"))
        XCTAssertTrue(startRefusal { $0.dataDirectory = dir.path; $0.storeKey = key; $0.webhookURL = "https://example.com/" }
            .contains("--webhook-url needs --webhook-secret-file"))
        XCTAssertTrue(startRefusal {
            $0.dataDirectory = dir.path; $0.storeKey = key; $0.webhookSecret = Array(Self.secret.utf8); $0.webhookURL = "http://example.com/"
        }.hasPrefix("--webhook-url: the callback URL must be https"))
        let short = dir.appendingPathComponent("short.secret")
        try "too-short\n".write(to: short, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ServiceConfiguration.readWebhookSecret(path: short.path)) { error in
            XCTAssertTrue("\(error)".contains("at least 32 printable ASCII characters"), "\(error)")
        }
        // Without webhooks, a callbackUrl is refused rather than silently dropped.
        let plain = try startService()
        let created = try create(plain.url, #"{"callbackUrl":"https://example.com/hook"}"#)
        XCTAssertEqual(created.status, 400)
        XCTAssertEqual((created.json["error"] as? [String: Any])?["code"] as? String, "webhooksDisabled")
    }

    /// Two instances on one PostgreSQL server (`TemporaryPostgres`), both dispatching: every
    /// session's result arrives once, whichever instance ran it, as a lease is one instance's.
    func testTwoInstancesOnPostgreSQLDeliverEachResultOnce() throws {
        let postgres = try TemporaryPostgres(self)
        let dir = try Fixtures.temporaryDirectory(self)
        let receiver = try Receiver(self, folder: dir)
        let key = try storeKey()
        let instances = try (0..<2).map { _ in
            try startService {
                $0.storeURL = postgres.url
                $0.storeKey = key
                $0.webhookSecret = Array(Self.secret.utf8)
                $0.webhookURL = receiver.url  // the default: sessions are created without a callbackUrl
                $0.webhooks.pollSeconds = 0.05
            }
        }
        var ids: [String] = []
        for n in 0..<6 { ids.append(try cancelledSession(instances[n % 2].url, callback: nil)) }
        XCTAssertTrue(eventually(30) { receiver.requests().count >= ids.count }, "\(receiver.requests().count) of \(ids.count)")
        Thread.sleep(forTimeInterval: 1)
        let sessions = receiver.requests().compactMap { ($0["headers"] as? [String: String])?["liveness-session-id"] }
        XCTAssertEqual(sessions.sorted(), ids.sorted(), "each result once")
        XCTAssertTrue(receiver.requests().allSatisfy { $0["hmacValid"] as? Bool == true })
        XCTAssertEqual(try postgres.psql("SELECT state, count(*) FROM liveness_outbox GROUP BY state"), ["delivered|\(ids.count)"])
        XCTAssertEqual(try get(instances[1].url, "/v1/sessions/\(ids[0])").headers["liveness-webhook"], "delivered; attempts=1")
    }

    /// A free TCP port on 127.0.0.1 (bound, then released).
    private func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ServiceError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

private final class GetBox: @unchecked Sendable {
    var value: (Data?, HTTPURLResponse?, Error?)?
}
