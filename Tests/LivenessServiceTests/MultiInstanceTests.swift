import Foundation
import LivenessKit
import LivenessClient
import LivenessService
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 28, several instances: two real `liveness serve` processes on one real PostgreSQL server
/// (`TemporaryPostgres`), behind a real load balancer (`TemporaryHAProxy`: haproxy with the
/// sample docs/scale/haproxy.cfg, round robin, health checks on /healthz). The oracles are
/// independent of the code under test: `liveness analyze` of the same file for the verdict,
/// `psql` on the store for who streamed what and for consistency, haproxy's own log and
/// response header for which instance served a request.
final class MultiInstanceTests: XCTestCase {
    /// The instances by haproxy's server name, the load balancer and the database.
    private struct Cluster {
        var postgres: TemporaryPostgres
        var instances: [String: ServeProcess]
        var haproxy: TemporaryHAProxy
        /// Each instance's id in the store (`liveness_instances.id`, found by its pid).
        var storeIDs: [String: String]
        var balancer: ServiceAddress
    }

    /// A PostgreSQL server, two `liveness serve --store` instances (upkeep every second, so a
    /// dead instance's sessions are recovered within seconds; `extra` options for both) and
    /// haproxy in front of them.
    private func cluster(_ extra: [String] = []) throws -> Cluster {
        let postgres = try TemporaryPostgres(self)
        let dir = try Fixtures.temporaryDirectory(self)
        let key = dir.appendingPathComponent("store.key").path
        XCTAssertTrue(FileManager.default.createFile(atPath: key, contents: Data(repeating: 7, count: 32), attributes: [.posixPermissions: 0o600]))
        let arguments = ["--workers", "1", "--store", postgres.url, "--store-key", key, "--upkeep-seconds", "1"] + extra
        let started = try ServeProcess.start(self, arguments: [arguments, arguments])
        let instances = ["a": started[0], "b": started[1]]
        let haproxy = try TemporaryHAProxy(self, backends: ["a", "b"].map { ($0, instances[$0]!.port) })
        var storeIDs: [String: String] = [:]
        for (name, instance) in instances {
            storeIDs[name] = try XCTUnwrap(try postgres.psql("SELECT id FROM liveness_instances WHERE pid = \(instance.pid)").first,
                                           "instance \(name) has its row in the store")
        }
        return Cluster(postgres: postgres, instances: instances, haproxy: haproxy, storeIDs: storeIDs,
                       balancer: try ServiceAddress(url: haproxy.url))
    }

    /// `method` `url` through Foundation's URLSession (not the engine's client): status, headers
    /// (names in lower case), body. At most 30 s.
    private func http(_ method: String, _ url: String, body: String? = nil) throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: try XCTUnwrap(URL(string: url)))
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.timeoutInterval = 30
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            box.result = (data, response as? HTTPURLResponse, error)
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 30) == .success else { throw Failure("\(method) \(url): no answer within 30 s") }
        let (data, response, error) = try XCTUnwrap(box.result)
        if let error { throw error }
        let http = try XCTUnwrap(response)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, headers, data ?? Data())
    }

    /// A passive session created through the load balancer: its id, token, and the instance that
    /// created it (haproxy's `X-Liveness-Backend`).
    private func createSession(_ cluster: Cluster) throws -> (id: String, token: String, creator: String) {
        let created = try http("POST", cluster.haproxy.url + "/v1/sessions", body: #"{"policy":{"challengeMode":"passive"}}"#)
        XCTAssertEqual(created.status, 201, String(decoding: created.body, as: UTF8.self))
        let json = try XCTUnwrap((try JSONSerialization.jsonObject(with: created.body)) as? [String: Any])
        return (try XCTUnwrap(json["id"] as? String), try XCTUnwrap(json["token"] as? String),
                try XCTUnwrap(created.headers["x-liveness-backend"], "haproxy names the server"))
    }

    /// The verdict `liveness analyze FILE --seed SEED --json` prints (the CLI in its own process).
    private func analyzedVerdict(_ clip: String, seed: UInt64) throws -> [String: Any] {
        let output = try Fixtures.temporaryDirectory(self)
        let run = try Fixtures.runLiveness(["analyze", clip, "--seed", String(seed), "--json", "--output", output.path])
        let line = try XCTUnwrap(run.output.split(separator: "\n").first, run.errors)
        let report = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])
        return try XCTUnwrap(report["verdict"] as? [String: Any])
    }

    /// Polls `psql` for `sql` until it answers `expected`, at most `timeout` seconds: the rows.
    private func waitFor(_ cluster: Cluster, _ sql: String, _ expected: [String], timeout: Double) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var rows = try cluster.postgres.psql(sql)
        while rows != expected && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            rows = try cluster.postgres.psql(sql)
        }
        return rows
    }

    /// Created through one instance, streamed through the other (round robin), fetched from
    /// either: the verdict `liveness analyze` gives for the same file, for a live recording and
    /// for a photo.
    func testCreatedOnOneInstanceStreamedThroughTheOtherWithTheVerdictOfAnalyze() throws {
        let cluster = try cluster()
        let clips = [try Fixtures.generated("cases/blink-then-turn/video.mp4"), try Fixtures.generated("astronaut-still.mp4")]
        var statuses: [String] = []
        for clip in clips {
            let session = try createSession(cluster)
            let other = session.creator == "a" ? "b" : "a"
            // Round robin: the stream, the next request through haproxy, goes to the other one.
            let outcome = try RecordingStreamer(address: cluster.balancer).stream(try FrameSource(path: clip), id: session.id, token: session.token)
            let report = try XCTUnwrap(outcome.report, clip)
            // Which instance streamed it: the store's own record, and haproxy's log.
            XCTAssertEqual(try cluster.postgres.psql("SELECT owner, state FROM liveness_sessions WHERE id = '\(session.id)'"),
                           ["\(cluster.storeIDs[other]!)|finished"], "\(clip): streamed by the instance that did not create it")
            XCTAssertTrue(cluster.haproxy.requests().contains { $0.server == other && $0.path == "/v1/sessions/\(session.id)/stream" && $0.status == 101 },
                          cluster.haproxy.log())
            // The same report from either instance, directly, and through haproxy.
            for instance in cluster.instances.values {
                let fetched = try http("GET", instance.url + "/v1/sessions/\(session.id)")
                XCTAssertEqual(fetched.status, 200)
                XCTAssertEqual(Array(fetched.body), report, "\(clip): the same bytes from \(instance.url)")
            }
            // The verdict of `liveness analyze` for the same file and seed.
            let streamed = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(report))) as? [String: Any])
            let verdict = try XCTUnwrap(streamed["verdict"] as? [String: Any])
            let offline = try analyzedVerdict(clip, seed: try XCTUnwrap((streamed["seed"] as? NSNumber)?.uint64Value))
            XCTAssertEqual(verdict["status"] as? String, offline["status"] as? String, clip)
            XCTAssertEqual(verdict["reason"] as? String, offline["reason"] as? String, clip)
            XCTAssertEqual((verdict["seconds"] as? NSNumber)?.doubleValue, (offline["seconds"] as? NSNumber)?.doubleValue, clip)
            XCTAssertEqual(outcome.verdict?.status.rawValue, offline["status"] as? String, "\(clip): the camera was told the same")
            statuses.append(verdict["status"] as? String ?? "")
        }
        XCTAssertEqual(statuses, ["passed", "failed"], "a live recording and a photo")
    }

    /// `kill -9` of the instance that streams a session: the other instance's upkeep ends it
    /// `failed`/`interrupted` within seconds, the store stays consistent (no session left
    /// streaming, the token spent, the other sessions untouched), haproxy's health checks take
    /// the dead instance out and the other one serves every new session.
    func testKill9OfAnInstanceMidStreamEndsItInterruptedAndTheOtherKeepsServing() throws {
        let cluster = try cluster()
        // A finished session and one created but not streamed yet.
        var streamer = RecordingStreamer(address: cluster.balancer)
        streamer.challengeMode = .passive
        let finished = try streamer.run(try FrameSource(path: try Fixtures.generated("cases/blink-then-turn/video.mp4")))
        XCTAssertEqual(finished.verdict?.status, .passed)
        let waiting = try createSession(cluster)
        let waitingRow = try cluster.postgres.psql("SELECT state, encode(token_sha256, 'hex'), expires_at FROM liveness_sessions WHERE id = '\(waiting.id)'")

        // The stream to cut: open, started, one frame judged.
        let victim = try createSession(cluster)
        let connection = try WebSocketConnection(address: cluster.balancer, path: "/v1/sessions/\(victim.id)/stream", token: victim.token)
        addTeardownBlock { connection.close() }
        guard case .text? = connection.next(timeout: 30) else { return XCTFail("no greeting") }
        connection.send(text: #"{"type":"start"}"#)
        XCTAssertEqual(try waitFor(cluster, "SELECT state FROM liveness_sessions WHERE id = '\(victim.id)'", ["streaming"], timeout: 10), ["streaming"])
        let owner = try XCTUnwrap(try cluster.postgres.psql("SELECT owner FROM liveness_sessions WHERE id = '\(victim.id)'").first)
        let dead = try XCTUnwrap(cluster.storeIDs.first { $0.value == owner }?.key, "the owner is one of the two instances")
        let survivor = dead == "a" ? "b" : "a"
        let killedAt = Date()
        cluster.instances[dead]!.kill9()
        // The camera's connection goes with the process: no verdict ever reaches it.
        while let message = connection.next(timeout: 10) {
            guard case let .text(text) = message else { break }
            XCTAssertFalse(text.contains("\"verdict\""), text)
        }

        // Recovered by the survivor's upkeep (every second here; it sees the pid is gone).
        XCTAssertEqual(try waitFor(cluster, "SELECT state, status, reason, owner FROM liveness_sessions WHERE id = '\(victim.id)'",
                                   ["finished|failed|interrupted|\(owner)"], timeout: 30),
                       ["finished|failed|interrupted|\(owner)"])
        let recovered = Date().timeIntervalSince(killedAt)
        XCTAssertLessThan(recovered, 10, "interrupted within a few upkeeps of 1 s")
        XCTAssertTrue(cluster.haproxy.waitUntilDown(dead, timeout: 20), "haproxy's health checks take the dead instance out: \(cluster.haproxy.log())")
        let down = Date().timeIntervalSince(killedAt)
        print("MultiInstanceTests: kill -9 -> interrupted in the store after \(String(format: "%.1f", recovered)) s; haproxy marked it DOWN after \(String(format: "%.1f", down)) s")

        // Its report, through the load balancer (the survivor answers).
        let response = try http("GET", cluster.haproxy.url + "/v1/sessions/\(victim.id)")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["x-liveness-backend"], survivor)
        let report = try XCTUnwrap((try JSONSerialization.jsonObject(with: response.body)) as? [String: Any])
        let verdict = try XCTUnwrap(report["verdict"] as? [String: Any])
        XCTAssertEqual(verdict["status"] as? String, "failed")
        XCTAssertEqual(verdict["reason"] as? String, "interrupted")
        XCTAssertTrue((report["error"] as? String)?.contains("instance \(owner) ended without a verdict") == true, "\(report)")

        // The store is consistent: nothing left streaming, no still for the cut session, the
        // others as they were.
        XCTAssertEqual(try cluster.postgres.psql("SELECT count(*) FROM liveness_sessions WHERE state = 'streaming'"), ["0"])
        XCTAssertEqual(try cluster.postgres.psql("SELECT count(*) FROM liveness_stills WHERE session_id = '\(victim.id)'"), ["0"])
        XCTAssertEqual(try cluster.postgres.psql("SELECT state, status FROM liveness_sessions WHERE id = '\(finished.sessionID)'"), ["finished|passed"])
        XCTAssertEqual(try cluster.postgres.psql("SELECT count(*) FROM liveness_stills WHERE session_id = '\(finished.sessionID)'"), ["2"])
        XCTAssertEqual(Array(try http("GET", cluster.haproxy.url + "/v1/sessions/\(finished.sessionID)").body), try XCTUnwrap(finished.report))
        XCTAssertEqual(try cluster.postgres.psql("SELECT state, encode(token_sha256, 'hex'), expires_at FROM liveness_sessions WHERE id = '\(waiting.id)'"), waitingRow)

        // The cut session's token stays spent, whichever instance is asked.
        XCTAssertThrowsError(try WebSocketConnection(address: cluster.balancer, path: "/v1/sessions/\(victim.id)/stream", token: victim.token))
        XCTAssertThrowsError(try WebSocketConnection(address: try ServiceAddress(url: cluster.instances[survivor]!.url),
                                                     path: "/v1/sessions/\(victim.id)/stream", token: victim.token))
        XCTAssertEqual(try cluster.postgres.psql("SELECT state, reason FROM liveness_sessions WHERE id = '\(victim.id)'"), ["finished|interrupted"])

        // The session created before the kill streams through the survivor.
        let late = try RecordingStreamer(address: cluster.balancer).stream(try FrameSource(path: try Fixtures.generated("astronaut-still.mp4")),
                                                                           id: waiting.id, token: waiting.token)
        XCTAssertEqual(late.verdict?.status, .failed)
        XCTAssertEqual(late.verdict?.reason, "notVerified", "the camera is not told which check failed")
        XCTAssertEqual(try cluster.postgres.psql("SELECT status, reason, owner FROM liveness_sessions WHERE id = '\(waiting.id)'"),
                       ["failed|presentationAttack|\(cluster.storeIDs[survivor]!)"])
        // New sessions through haproxy: every one on the survivor, and one streamed to its verdict.
        for _ in 0..<4 { XCTAssertEqual(try createSession(cluster).creator, survivor) }
        let fresh = try streamer.run(try FrameSource(path: try Fixtures.generated("cases/blink-then-turn/video.mp4")))
        XCTAssertEqual(fresh.verdict?.status, .passed)
        XCTAssertEqual(try cluster.postgres.psql("SELECT owner FROM liveness_sessions WHERE id = '\(fresh.sessionID)'"), [cluster.storeIDs[survivor]!])
        XCTAssertTrue(cluster.instances[survivor]!.isRunning)
        XCTAssertEqual(try cluster.postgres.psql("SELECT count(*) FROM liveness_sessions WHERE state = 'streaming'"), ["0"])
    }
}

extension MultiInstanceTests {
    /// An instance on another machine (each Kubernetes pod has its own host name) cannot be
    /// looked up by pid: it is dead when its heartbeat is older than `--stale-seconds`. Its row
    /// is moved to another host name (heartbeats keep the name), then it is killed: its session
    /// ends `interrupted` no sooner than `--stale-seconds` (3) after its last heartbeat, and no
    /// later than one upkeep (1 s) after that, with slack for a loaded machine.
    func testAnInstanceOnAnotherMachineIsJudgedDeadByItsHeartbeat() throws {
        let stale = 3.0
        let cluster = try cluster(["--stale-seconds", "3"])
        let victim = try createSession(cluster)
        let connection = try WebSocketConnection(address: cluster.balancer, path: "/v1/sessions/\(victim.id)/stream", token: victim.token)
        addTeardownBlock { connection.close() }
        guard case .text? = connection.next(timeout: 30) else { return XCTFail("no greeting") }
        connection.send(text: #"{"type":"start"}"#)
        XCTAssertEqual(try waitFor(cluster, "SELECT state FROM liveness_sessions WHERE id = '\(victim.id)'", ["streaming"], timeout: 10), ["streaming"])
        let owner = try XCTUnwrap(try cluster.postgres.psql("SELECT owner FROM liveness_sessions WHERE id = '\(victim.id)'").first)
        let dead = try XCTUnwrap(cluster.storeIDs.first { $0.value == owner }?.key)
        try cluster.postgres.psql("UPDATE liveness_instances SET host = 'another-machine.example' WHERE id = '\(owner)'")
        // Alive and beating on "another machine": its session is left alone.
        Thread.sleep(forTimeInterval: stale + 1)
        XCTAssertEqual(try cluster.postgres.psql("SELECT state FROM liveness_sessions WHERE id = '\(victim.id)'"), ["streaming"],
                       "a live instance on another machine keeps its session")
        cluster.instances[dead]!.kill9()
        XCTAssertEqual(try waitFor(cluster, "SELECT state, reason FROM liveness_sessions WHERE id = '\(victim.id)'", ["finished|interrupted"], timeout: 30),
                       ["finished|interrupted"])
        let times = try XCTUnwrap(try cluster.postgres.psql("""
            SELECT s.finished_at - i.heartbeat_at FROM liveness_sessions s JOIN liveness_instances i ON i.id = s.owner WHERE s.id = '\(victim.id)'
            """).first)
        let afterLastBeat = try XCTUnwrap(Double(times))
        XCTAssertGreaterThan(afterLastBeat, stale, "not before its heartbeat was stale")
        XCTAssertLessThan(afterLastBeat, stale + 1 + 3, "within one upkeep after (3 s of slack)")
        print("MultiInstanceTests: heartbeat path: interrupted \(String(format: "%.1f", afterLastBeat)) s after the last heartbeat (--stale-seconds 3, --upkeep-seconds 1)")
        let survivor = dead == "a" ? "b" : "a"
        let report = try http("GET", cluster.instances[survivor]!.url + "/v1/sessions/\(victim.id)")
        XCTAssertEqual(report.status, 200)
        let verdict = ((try JSONSerialization.jsonObject(with: report.body)) as? [String: Any])?["verdict"] as? [String: Any]
        XCTAssertEqual(verdict?["reason"] as? String, "interrupted", "the survivor serves the interrupted report")
        XCTAssertEqual(try cluster.postgres.psql("SELECT count(*) FROM liveness_sessions WHERE state = 'streaming'"), ["0"])
    }
}

private final class Box: @unchecked Sendable {
    var result: (Data?, HTTPURLResponse?, Error?)?
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
