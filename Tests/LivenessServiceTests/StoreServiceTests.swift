import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import LivenessKit
import LivenessClient
import LivenessService
import LivenessStore
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `liveness serve --data-dir` (docs/store.md) over real sockets: results that survive a restart
/// until their retention ends, a stream cut by `kill -9` of a real `liveness serve` that ends
/// `interrupted` on the next start, one stream per token with two instances on one store,
/// erasure, stills sealed at rest, a store that is gone, bad files at start. The oracles are
/// independent of the store's code: Python's sqlite3 reads the file, the raw bytes of the
/// database and its log are searched, HTTP goes through Foundation's URLSession.
final class StoreServiceTests: XCTestCase {
    private func key() throws -> StoreKey { try StoreKey(bytes: [UInt8](repeating: 42, count: 32)) }

    private func storedService(_ dir: URL, _ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> LivenessServer {
        let key = try key()
        return try startService {
            $0.dataDirectory = dir.path
            $0.storeKey = key
            $0.storeSweepSeconds = 0.25
            configure(&$0)
        }
    }

    private func address(_ server: LivenessServer) throws -> ServiceAddress { try ServiceAddress(url: server.url) }

    private func session(_ address: ServiceAddress, bearer: String? = nil) throws -> (id: String, token: String) {
        let response = try ServiceClient.request("POST", "/v1/sessions", at: address, bearer: bearer,
                                                 body: Array(#"{"policy":{"challengeMode":"passive"}}"#.utf8))
        XCTAssertEqual(response.status, 201, String(decoding: response.body, as: UTF8.self))
        let json = try XCTUnwrap(response.json)
        return (try XCTUnwrap(json["id"] as? String), try XCTUnwrap(json["token"] as? String))
    }

    /// Python's sqlite3 over the store's file, read only: one line per row, columns joined by `|`.
    private func sql(_ dir: URL, _ query: String) throws -> [String] { try sqliteRows(in: dir, query) }

    /// The database and its write-ahead log, as bytes.
    private func storeBytes(_ dir: URL) throws -> Data {
        var data = Data()
        for suffix in ["", "-wal"] {
            let url = dir.appendingPathComponent(SQLiteSessionStore.fileName + suffix)
            if FileManager.default.fileExists(atPath: url.path) { data += try Data(contentsOf: url) }
        }
        return data
    }

    /// A passed session streamed through `server` (passive, lock-step): its id and report bytes.
    private func passedSession(_ server: LivenessServer) throws -> (id: String, report: [UInt8]) {
        var streamer = RecordingStreamer(address: try address(server))
        streamer.challengeMode = .passive
        let outcome = try streamer.run(try FrameSource(path: try Fixtures.generated("cases/blink-then-turn/video.mp4")))
        XCTAssertEqual(outcome.verdict?.status, .passed)
        return (outcome.sessionID, try XCTUnwrap(outcome.report))
    }

    func testResultsSurviveARestartSealedUntilTheirRetentionEnds() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let retention = 8.0
        let first = try storedService(dir) { $0.limits.resultRetentionSeconds = retention }
        let (id, report) = try passedSession(first)
        let autoshot = try fetch(first, "/v1/sessions/\(id)/autoshot.jpg")
        let snapshot = try fetch(first, "/v1/sessions/\(id)/snapshot.jpg")
        XCTAssertEqual(snapshot.status, 200)
        XCTAssertEqual(Array(snapshot.body.prefix(2)), [0xFF, 0xD8], "a JPEG")
        first.stop()

        // At rest: the row as another binding reads it; no stretch of either still in clear.
        XCTAssertEqual(try sql(dir, "SELECT state, status FROM sessions WHERE id = '\(id)'"), ["finished|passed"])
        XCTAssertEqual(try sql(dir, "SELECT kind FROM stills WHERE session_id = '\(id)' ORDER BY kind"), ["autoshot", "snapshot"])
        let bytes = try storeBytes(dir)
        for still in [autoshot.body, snapshot.body] {
            for offset in stride(from: 0, to: still.count - 64, by: 1024) {
                XCTAssertNil(bytes.range(of: still.subdata(in: offset..<offset + 64)), "bytes \(offset)… of a still are in the store in clear")
            }
        }
        XCTAssertNotNil(bytes.range(of: Data(report.prefix(64))), "reports are kept in clear (docs/store.md)")

        // A new process on the same folder serves the same report and stills.
        let second = try storedService(dir) { $0.limits.resultRetentionSeconds = retention }
        let again = try fetch(second, "/v1/sessions/\(id)")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(Array(again.body), report, "the very bytes served before the restart")
        XCTAssertEqual(try fetch(second, "/v1/sessions/\(id)/autoshot.jpg").body, autoshot.body)
        XCTAssertEqual(try fetch(second, "/v1/sessions/\(id)/snapshot.jpg").body, snapshot.body)

        // Gone once the retention has passed: the sweeper deleted the row and the stills.
        let finishedAt = try XCTUnwrap(Double(try XCTUnwrap(try sql(dir, "SELECT finished_at FROM sessions WHERE id = '\(id)'").first)))
        var status = 200
        while Date().timeIntervalSince1970 < finishedAt + retention + 10 {
            status = try fetch(second, "/v1/sessions/\(id)").status
            if status == 404 { break }
            XCTAssertLessThan(Date().timeIntervalSince1970, finishedAt + retention + 1, "still served after its retention ended")
            Thread.sleep(forTimeInterval: 0.25)
        }
        XCTAssertEqual(status, 404)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince1970, finishedAt + retention, "served for the whole retention")
        XCTAssertEqual(try sql(dir, "SELECT count(*) FROM sessions"), ["0"])
        XCTAssertEqual(try sql(dir, "SELECT count(*) FROM stills"), ["0"])
        XCTAssertEqual(try fetch(second, "/v1/sessions/\(id)/snapshot.jpg").status, 404)
        let metrics = String(decoding: try fetch(second, "/metrics").body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("liveness_store_swept_total{kind=\"retention\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("liveness_store_info{backend=\"sqlite\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("liveness_store_seconds_count{op=\"read\"}"), metrics)
        let sweeps = metrics.split(separator: "\n").first { $0.hasPrefix("liveness_store_sweeps_total ") }
        XCTAssertGreaterThan(Int(sweeps?.split(separator: " ").last ?? "") ?? 0, 1, metrics)
    }

    /// A real `liveness serve` killed with SIGKILL while a stream is open: the next instance on
    /// the store ends that session `failed`/`interrupted` at its start, with a report saying so,
    /// and the store is intact.
    func testAStreamCutByKill9EndsInterruptedOnTheNextStart() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let keyFile = dir.appendingPathComponent("store.key").path
        XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: Data(repeating: 42, count: 32),
                                                     attributes: [.posixPermissions: 0o600]))
        let data = dir.appendingPathComponent("data")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Fixtures.livenessExecutable())
        process.arguments = ["serve", "--port", "0", "--workers", "1", "--data-dir", data.path, "--store-key", keyFile]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        addTeardownBlock { if process.isRunning { process.terminate(); process.waitUntilExit() } }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        let address = try ServiceAddress(url: try XCTUnwrap(text.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init), text))
        let (id, token) = try session(address)
        let connection = try WebSocketConnection(address: address, path: "/v1/sessions/\(id)/stream", token: token)
        addTeardownBlock { connection.close() }
        guard case .text? = connection.next(timeout: 30) else { return XCTFail("no greeting") }
        connection.send(text: #"{"type":"start"}"#)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(try sql(data, "SELECT state FROM sessions WHERE id = '\(id)'"), ["streaming"])
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)

        let next = try storedService(data)
        let response = try fetch(next, "/v1/sessions/\(id)")
        XCTAssertEqual(response.status, 200, "the session has its verdict at once")
        let report = try XCTUnwrap((try JSONSerialization.jsonObject(with: response.body)) as? [String: Any])
        let verdict = try XCTUnwrap(report["verdict"] as? [String: Any])
        XCTAssertEqual(verdict["status"] as? String, "failed")
        XCTAssertEqual(verdict["reason"] as? String, "interrupted")
        XCTAssertTrue((report["error"] as? String)?.contains("stopped while this session's stream was open") == true, "\(report)")
        XCTAssertEqual(try sql(data, "SELECT state, status, reason FROM sessions WHERE id = '\(id)'"), ["finished|failed|interrupted"])
        XCTAssertEqual(try sql(data, "PRAGMA integrity_check"), ["ok"])
        XCTAssertEqual(try fetch(next, "/v1/sessions/\(id)/snapshot.jpg").status, 404, "no stills")
        let metrics = String(decoding: try fetch(next, "/metrics").body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("liveness_sessions_total{status=\"failed\",reason=\"interrupted\"} 1"), metrics)
        // Its token stays spent.
        XCTAssertThrowsError(try WebSocketConnection(address: try self.address(next), path: "/v1/sessions/\(id)/stream", token: token))
    }

    /// Two instances on one store, every stream open for one token at once through either: exactly
    /// one opens. Any instance then answers for the session.
    func testTwoInstancesOnOneStoreOpenAStreamOnlyOnce() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let instances = [try storedService(dir), try storedService(dir)]
        let addresses = try instances.map { try address($0) }
        for round in 0..<3 {
            let (id, token) = try session(addresses[round % 2])
            let opened = Opened()
            DispatchQueue.concurrentPerform(iterations: 8) { n in
                guard let connection = try? WebSocketConnection(address: addresses[n % 2], path: "/v1/sessions/\(id)/stream", token: token),
                      case .text? = connection.next(timeout: 20) else { return }
                opened.add(connection, instance: n % 2)
            }
            XCTAssertEqual(opened.connections.count, 1, "round \(round): one stream for one token")
            let (connection, winner) = try XCTUnwrap(opened.connections.first)
            addTeardownBlock { connection.close() }
            connection.send(text: #"{"type":"cancel"}"#)
            var closed = false
            while let message = connection.next(timeout: 20) { if case .closed = message { closed = true; break } }
            XCTAssertTrue(closed)
            // Finished on one instance, read on the other.
            let other = instances[1 - winner]
            var status = 0
            for _ in 0..<40 {
                status = try fetch(other, "/v1/sessions/\(id)").status
                if status == 200 { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            XCTAssertEqual(status, 200)
            XCTAssertEqual(try fetch(other, "/v1/sessions/\(id)").body, try fetch(instances[winner], "/v1/sessions/\(id)").body)
        }
    }

    /// Phase 2 of issue 28: two instances on one PostgreSQL server (started by the test). Eight
    /// simultaneous upgrades for one token through either instance: one opens. A live recording
    /// streamed through one instance and read from the other: the same report and stills; erased
    /// through either; the server stopped: readiness fails.
    func testTwoInstancesOnOnePostgreSQLServer() throws {
        let postgres = try TemporaryPostgres(self)
        let key = try key()
        let instances = try (0..<2).map { _ in
            try startService {
                $0.storeURL = postgres.url
                $0.storeKey = key
                $0.storeSweepSeconds = 0.25
            }
        }
        let addresses = try instances.map { try address($0) }
        let (id, token) = try session(addresses[0])
        let opened = Opened()
        DispatchQueue.concurrentPerform(iterations: 8) { n in
            guard let connection = try? WebSocketConnection(address: addresses[n % 2], path: "/v1/sessions/\(id)/stream", token: token),
                  case .text? = connection.next(timeout: 20) else { return }
            opened.add(connection, instance: n % 2)
        }
        XCTAssertEqual(opened.connections.count, 1, "one stream for one token")
        opened.connections.first?.0.close()

        // A recording streamed through the second instance, its result read from the first.
        var streamer = RecordingStreamer(address: addresses[1])
        streamer.challengeMode = .passive
        let outcome = try streamer.run(try FrameSource(path: try Fixtures.generated("cases/blink-then-turn/video.mp4")))
        XCTAssertEqual(outcome.verdict?.status, .passed)
        let fromFirst = try fetch(instances[0], "/v1/sessions/\(outcome.sessionID)")
        XCTAssertEqual(fromFirst.status, 200)
        XCTAssertEqual(Array(fromFirst.body), try XCTUnwrap(outcome.report), "the other instance serves the same report")
        let still = try fetch(instances[0], "/v1/sessions/\(outcome.sessionID)/snapshot.jpg")
        XCTAssertEqual(still.status, 200)
        XCTAssertEqual(still.body, try fetch(instances[1], "/v1/sessions/\(outcome.sessionID)/snapshot.jpg").body)
        XCTAssertEqual(try postgres.psql("SELECT state, status FROM liveness_sessions WHERE id = '\(outcome.sessionID)'"), ["finished|passed"])
        XCTAssertEqual(try postgres.psql("SELECT count(*) FROM liveness_stills WHERE session_id = '\(outcome.sessionID)'"), ["2"])
        let metrics = String(decoding: try fetch(instances[0], "/metrics").body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("liveness_store_info{backend=\"postgres\"} 1"), metrics)
        XCTAssertEqual(try fetch(instances[0], "/healthz").status, 200)

        // Erased through the first: gone for both.
        XCTAssertEqual(try fetch(instances[0], "/v1/sessions/\(outcome.sessionID)", method: "DELETE").status, 204)
        XCTAssertEqual(try fetch(instances[1], "/v1/sessions/\(outcome.sessionID)").status, 404)
        XCTAssertEqual(try postgres.psql("SELECT count(*) FROM liveness_stills"), ["0"])

        // The server going away: readiness fails, nothing crashes.
        postgres.stop()
        XCTAssertEqual(try fetch(instances[1], "/healthz").status, 503)
        XCTAssertEqual(try fetch(instances[1], "/v1/sessions", method: "POST").status, 503)
    }

    func testDeleteErasesASessionWhereverItIsAndIsCounted() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let tokenFile = dir.appendingPathComponent("api.token")
        try Data("relying-party-token-0123456789".utf8).write(to: tokenFile)
        let apiToken = try ServiceConfiguration.readToken(path: tokenFile.path)
        let data = dir.appendingPathComponent("data")
        let server = try storedService(data) { $0.apiToken = apiToken }
        let address = try address(server)
        let bearer = "relying-party-token-0123456789"

        // A finished session with stills.
        var streamer = RecordingStreamer(address: address)
        streamer.bearer = bearer
        streamer.challengeMode = .passive
        let outcome = try streamer.run(try FrameSource(path: try Fixtures.generated("cases/blink-then-turn/video.mp4")))
        let id = outcome.sessionID
        XCTAssertEqual(try ServiceClient.request("DELETE", "/v1/sessions/\(id)", at: address).status, 401, "the API token is needed")
        XCTAssertEqual(try sql(data, "SELECT count(*) FROM stills WHERE session_id = '\(id)'"), ["2"])
        XCTAssertEqual(try ServiceClient.request("DELETE", "/v1/sessions/\(id)", at: address, bearer: bearer).status, 204)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)", at: address, bearer: bearer).status, 404)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(id)/snapshot.jpg", at: address, bearer: bearer).status, 404)
        XCTAssertEqual(try ServiceClient.request("DELETE", "/v1/sessions/\(id)", at: address, bearer: bearer).status, 404)
        XCTAssertEqual(try sql(data, "SELECT count(*) FROM sessions WHERE id = '\(id)'"), ["0"])
        XCTAssertEqual(try sql(data, "SELECT count(*) FROM stills"), ["0"])
        XCTAssertNil(try storeBytes(data).range(of: Data("stream:\(id)".utf8)), "the erased report is gone from the files")

        // A streaming session: its client is told, its result is not kept.
        let (live, token) = try session(address, bearer: bearer)
        let connection = try WebSocketConnection(address: address, path: "/v1/sessions/\(live)/stream", token: token)
        addTeardownBlock { connection.close() }
        guard case .text? = connection.next(timeout: 30) else { return XCTFail("no greeting") }
        connection.send(text: #"{"type":"start"}"#)
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(try ServiceClient.request("DELETE", "/v1/sessions/\(live)", at: address, bearer: bearer).status, 204)
        var messages: [String] = []
        var closedWith: Int?
        while let message = connection.next(timeout: 10) {
            if case let .text(text) = message { messages.append(text) }
            if case let .closed(code, _) = message { closedWith = code; break }
        }
        XCTAssertTrue(messages.contains { $0.contains("\"code\":\"sessionEnded\"") && $0.contains("erased") }, "\(messages)")
        XCTAssertTrue(messages.contains { $0.contains("\"type\":\"verdict\"") && $0.contains("cancelled") }, "\(messages)")
        XCTAssertEqual(closedWith, 1000)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(try ServiceClient.request("GET", "/v1/sessions/\(live)", at: address, bearer: bearer).status, 404)
        XCTAssertEqual(try sql(data, "SELECT count(*) FROM sessions WHERE id = '\(live)'"), ["0"])
        // A created session: its link stops working.
        let (unused, unusedToken) = try session(address, bearer: bearer)
        XCTAssertEqual(try ServiceClient.request("DELETE", "/v1/sessions/\(unused)", at: address, bearer: bearer).status, 204)
        XCTAssertThrowsError(try WebSocketConnection(address: address, path: "/v1/sessions/\(unused)/stream", token: unusedToken))

        let metrics = String(decoding: try ServiceClient.request("GET", "/metrics", at: address, bearer: bearer).body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("liveness_sessions_erased_total 3"), metrics)

        // Without a store, the same request erases the result from memory.
        let memory = try startService()
        let (kept, _) = try passedSession(memory)
        XCTAssertEqual(try fetch(memory, "/v1/sessions/\(kept)", method: "DELETE").status, 204)
        XCTAssertEqual(try fetch(memory, "/v1/sessions/\(kept)/snapshot.jpg").status, 404)
        XCTAssertEqual(try fetch(memory, "/v1/sessions/\(kept)").status, 404)
    }

    /// `/healthz` is a readiness probe: with the store gone it answers 503, and requests that
    /// need the store answer 503 `storeUnavailable` (never a crash, never a silent loss).
    func testHealthzAndRequestsSayWhenTheStoreIsUnreachable() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let server = try storedService(dir)
        XCTAssertEqual(try fetch(server, "/healthz").status, 200)
        // The database file removed under the running service.
        try FileManager.default.removeItem(at: dir.appendingPathComponent(SQLiteSessionStore.fileName))
        let health = try fetch(server, "/healthz")
        XCTAssertEqual(health.status, 503)
        XCTAssertEqual(((try JSONSerialization.jsonObject(with: health.body)) as? [String: Any])?["store"] as? String, "unreachable")

        // A store that fails every call (a backend that cannot be reached).
        let failing = try startService { $0.store = UnreachableStore() }
        XCTAssertEqual(try fetch(failing, "/healthz").status, 503)
        let created = try fetch(failing, "/v1/sessions", method: "POST")
        XCTAssertEqual(created.status, 503)
        XCTAssertTrue(String(decoding: created.body, as: UTF8.self).contains("storeUnavailable"))
        XCTAssertEqual(try fetch(failing, "/v1/sessions/abc").status, 503)
        XCTAssertEqual(try fetch(failing, "/v1/sessions/abc", method: "DELETE").status, 503)
        let metrics = String(decoding: try fetch(failing, "/metrics").body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("liveness_store_errors_total{op=\"create\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("liveness_store_errors_total{op=\"check\"} 1"), metrics)
    }

    /// Bad store input at start: `liveness serve` exits 2 with one clear line, never a crash.
    func testBadStoreFilesAndKeysStopTheStartWithAClearError() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let key = dir.appendingPathComponent("store.key").path
        XCTAssertTrue(FileManager.default.createFile(atPath: key, contents: Data(repeating: 1, count: 32), attributes: [.posixPermissions: 0o600]))
        let short = dir.appendingPathComponent("short.key").path
        XCTAssertTrue(FileManager.default.createFile(atPath: short, contents: Data(repeating: 1, count: 31), attributes: [.posixPermissions: 0o600]))
        let corrupt = dir.appendingPathComponent("corrupt")
        try FileManager.default.createDirectory(at: corrupt, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 10_000).write(to: corrupt.appendingPathComponent(SQLiteSessionStore.fileName))
        let file = dir.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        let fresh = dir.appendingPathComponent("fresh").path
        let cases: [([String], String)] = [
            (["--data-dir", corrupt.path, "--store-key", key], "is not a SQLite database"),
            (["--data-dir", file.path, "--store-key", key], "is not a folder"),
            (["--data-dir", fresh, "--store-key", dir.appendingPathComponent("missing.key").path], "missing.key: no such file"),
            (["--data-dir", fresh, "--store-key", short], "holds 31 bytes; a store key is exactly 32"),
            (["--data-dir", fresh], "give --store-key FILE"),
            (["--store-key", key], "give --data-dir too"),
            (["--store", "mysql://db/x", "--store-key", key], "--store takes a PostgreSQL URL"),
            (["--store", "postgres://u:pw-7f3k9q@127.0.0.1:1/x", "--store-key", key], "cannot connect to the PostgreSQL server"),
            (["--store", "postgres://u@127.0.0.1:1/x", "--data-dir", fresh, "--store-key", key], "--data-dir and --store name two stores"),
            (["--upkeep-seconds", "5"], "give --data-dir or --store too"),
            (["--data-dir", fresh, "--store-key", key, "--upkeep-seconds", "40"], "--stale-seconds (60) must be at least twice --upkeep-seconds (40)"),
            (["--data-dir", fresh, "--store-key", key, "--upkeep-seconds", "0"], "--upkeep-seconds"),
        ]
        for (arguments, expected) in cases {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try Fixtures.livenessExecutable())
            process.arguments = ["serve", "--port", "0"] + arguments
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .exit, "\(arguments): \(text)")
            XCTAssertEqual(process.terminationStatus, 2, "\(arguments): \(text)")
            XCTAssertTrue(text.hasPrefix("error: ") && text.contains(expected), "\(arguments): \(text)")
            XCTAssertFalse(text.contains("pw-7f3k9q"), "a password is never repeated: \(text)")
        }
        // The corrupt file was left as it was, for the operator to look at.
        XCTAssertEqual(try Data(contentsOf: corrupt.appendingPathComponent(SQLiteSessionStore.fileName)), Data(repeating: 0x41, count: 10_000))
    }
}

private final class Opened: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [(WebSocketConnection, Int)] = []
    func add(_ connection: WebSocketConnection, instance: Int) { lock.withLock { list.append((connection, instance)) } }
    var connections: [(WebSocketConnection, Int)] { lock.withLock { list } }
}

/// A store whose every call fails, as a backend that cannot be reached does.
private final class UnreachableStore: SessionStore, @unchecked Sendable {
    let location = "unreachable:"
    private var failure: StoreError { StoreError("the store cannot be reached") }
    func create(_ session: NewSession) throws(StoreError) { throw failure }
    func peek(id: String, tokenSHA256: [UInt8], now: Date) throws(StoreError) -> ClaimOutcome { throw failure }
    func claim(id: String, tokenSHA256: [UInt8], owner: String, now: Date) throws(StoreError) -> ClaimOutcome { throw failure }
    func finish(id: String, owner: String, result: FinishedSession, now: Date) throws(StoreError) -> Bool { throw failure }
    func session(id: String) throws(StoreError) -> StoredSession? { throw failure }
    func still(id: String, kind: StillKind) throws(StoreError) -> [UInt8]? { throw failure }
    func erase(id: String) throws(StoreError) -> SessionState? { throw failure }
    func sweep(now: Date, retentionSeconds: Double) throws(StoreError) -> SweepResult { throw failure }
    func heartbeat(_ instance: InstanceRecord, now: Date) throws(StoreError) { throw failure }
    func removeInstance(id: String) throws(StoreError) { throw failure }
    func orphans(except: String, now: Date, staleAfterSeconds: Double) throws(StoreError) -> [StoredSession] { throw failure }
    func check() throws(StoreError) { throw failure }
    func leaseDeliveries(owner: String, now: Date, leaseSeconds: Double, limit: Int) throws(StoreError) -> [Delivery] { throw failure }
    func deliveryDelivered(id: String, owner: String, now: Date) throws(StoreError) -> Bool { throw failure }
    func deliveryFailed(id: String, owner: String, error: String, retryAt: Date?, now: Date) throws(StoreError) -> Bool { throw failure }
    func outboxStatus() throws(StoreError) -> OutboxStatus { throw failure }
}
