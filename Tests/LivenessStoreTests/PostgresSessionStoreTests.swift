import Foundation
import LivenessEvidence
import LivenessStore
import TestSupport
import XCTest

/// The PostgreSQL session store against a real server started by the test (`TemporaryPostgres`:
/// Debian's PostgreSQL, `initdb` in a temporary folder, a unix socket). The oracle is `psql`, the
/// PostgreSQL project's own client, and `sha256()` computed by the server.
final class PostgresSessionStoreTests: XCTestCase {
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private func key(_ byte: UInt8 = 7) throws -> StoreKey { try StoreKey(bytes: [UInt8](repeating: byte, count: 32)) }

    private func hash(_ token: String) -> [UInt8] { SHA256Digest(of: Array(token.utf8)).bytes }

    private func newSession(_ id: String, token: String, expiresIn: Double = 180) -> NewSession {
        NewSession(id: id, tokenSHA256: hash(token), policy: Array(#"{"turnYawDegrees":7.5}"#.utf8), seed: UInt64.max - 1,
                   createdAt: t0, expiresAt: t0.addingTimeInterval(expiresIn))
    }

    private func finished(_ report: String, autoshot: [UInt8]? = nil, snapshot: [UInt8]? = nil) -> FinishedSession {
        FinishedSession(report: Array(report.utf8), status: autoshot == nil ? "failed" : "passed", reason: autoshot == nil ? "timeout" : nil,
                        signature: Array("sig".utf8), promptLog: nil, prompted: false, autoshot: autoshot, snapshot: snapshot)
    }

    func testTheProtocolOnARealServer() throws {
        let server = try TemporaryPostgres(self)
        let store = try PostgresSessionStore(url: server.url, key: try key())
        try store.create(newSession("s1", token: "0123456789abcdef0123456789abcdef"))
        XCTAssertEqual(try store.claim(id: "s1", tokenSHA256: hash("wrong"), owner: "a", now: t0), .badToken)
        XCTAssertEqual(try store.claim(id: "nosuch", tokenSHA256: hash("x"), owner: "a", now: t0), .unknown)
        guard case let .claimed(session) = try store.claim(id: "s1", tokenSHA256: hash("0123456789abcdef0123456789abcdef"), owner: "a",
                                                            now: t0) else { return XCTFail("the claim") }
        XCTAssertEqual(session.seed, UInt64.max - 1)
        XCTAssertEqual(session.policy, Array(#"{"turnYawDegrees":7.5}"#.utf8))
        XCTAssertEqual(try store.claim(id: "s1", tokenSHA256: hash("0123456789abcdef0123456789abcdef"), owner: "b", now: t0), .alreadyStarted)
        XCTAssertFalse(try store.finish(id: "s1", owner: "b", result: finished("{}"), now: t0))
        var generator = SystemRandomNumberGenerator()
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        XCTAssertTrue(try store.finish(id: "s1", owner: "a", result: finished(#"{"v":1}"#, autoshot: jpeg, snapshot: [4, 5]), now: t0))
        let stored = try XCTUnwrap(try store.session(id: "s1"))
        XCTAssertEqual(stored.state, .finished)
        XCTAssertEqual(stored.report, Array(#"{"v":1}"#.utf8))
        XCTAssertEqual(stored.stills, [.autoshot, .snapshot])
        XCTAssertEqual(try store.still(id: "s1", kind: .autoshot), jpeg)

        // Independently: psql reads the row; the server hashes the token itself.
        XCTAssertEqual(try server.psql("SELECT state, status, owner, token_sha256 = sha256('0123456789abcdef0123456789abcdef'::bytea) FROM liveness_sessions"),
                       ["finished|passed|a|t"])
        // Sealed: no 64-byte stretch of the picture is in the stored value.
        for offset in stride(from: 0, to: jpeg.count - 64, by: 2048) {
            let hex = jpeg[offset..<offset + 64].map { String(format: "%02x", $0) }.joined()
            XCTAssertEqual(try server.psql("SELECT position(decode('\(hex)', 'hex') IN sealed) FROM liveness_stills WHERE kind = 'autoshot'"), ["0"])
        }
        XCTAssertEqual(try server.psql("SELECT length(sealed) FROM liveness_stills WHERE kind = 'autoshot'"),
                       ["\(jpeg.count + 40 + "liveness-still/1\ns1\nautoshot\n".utf8.count)"])

        // Sweep and erasure.
        try store.create(newSession("unused", token: "t"))
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(100), retentionSeconds: 600), SweepResult(retained: 0, expired: 0))
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(200), retentionSeconds: 600), SweepResult(retained: 0, expired: 1))
        try store.create(newSession("e", token: "t", expiresIn: 10_000))
        XCTAssertEqual(try store.erase(id: "e"), .created)
        XCTAssertNil(try store.erase(id: "e"))
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(700), retentionSeconds: 600), SweepResult(retained: 1, expired: 0))
        XCTAssertEqual(try server.psql("SELECT count(*) FROM liveness_sessions"), ["0"])
        XCTAssertEqual(try server.psql("SELECT count(*) FROM liveness_stills"), ["0"])

        // Another key does not open the store; a second instance with the right one does.
        XCTAssertThrowsError(try PostgresSessionStore(url: server.url, key: try key(8))) { error in
            XCTAssertTrue("\(error)".contains("the store key does not open this store"), "\(error)")
        }
        XCTAssertNoThrow(try PostgresSessionStore(url: server.url, key: try key()))
    }

    /// Two connections (two instances) and 16 threads claim each of 20 sessions at once: exactly
    /// one claim of each wins.
    func testExactlyOneOfManyConcurrentClaimsWinsAcrossTwoConnections() throws {
        let server = try TemporaryPostgres(self)
        let stores = [try PostgresSessionStore(url: server.url, key: try key()), try PostgresSessionStore(url: server.url, key: try key())]
        let sessions = 20, claimants = 16
        for i in 0..<sessions { try stores[i % 2].create(newSession("c\(i)", token: "token-\(i)")) }
        let now = t0
        let hashes = (0..<sessions).map { hash("token-\($0)") }
        let wins = PGTally()
        for i in 0..<sessions {
            DispatchQueue.concurrentPerform(iterations: claimants) { n in
                let outcome = try? stores[n % 2].claim(id: "c\(i)", tokenSHA256: hashes[i], owner: "instance-\(n)", now: now)
                if case .claimed? = outcome { wins.add("c\(i)") } else if outcome != .alreadyStarted { wins.add("unexpected") }
            }
        }
        for i in 0..<sessions { XCTAssertEqual(wins.count("c\(i)"), 1, "c\(i)") }
        XCTAssertEqual(wins.count("unexpected"), 0)
        XCTAssertEqual(try server.psql("SELECT count(*) FROM liveness_sessions WHERE state = 'streaming'"), ["\(sessions)"])
    }

    /// The webhook outbox (docs/webhooks.md) on a real server: `OutboxScenario`, psql the oracle.
    func testTheWebhookOutboxQueuesLeasesRetriesAndSurvivesReconnecting() throws {
        let server = try TemporaryPostgres(self)
        let key = try key()
        try OutboxScenario(open: { try PostgresSessionStore(url: server.url, key: key) }, sql: { try server.psql($0) },
                           table: "liveness_outbox").run()
        XCTAssertEqual(try server.psql("SELECT convert_from(value, 'UTF8') FROM liveness_meta WHERE key = 'schema'"), ["2"])
    }

    /// `FOR UPDATE SKIP LOCKED` under contention: 16 threads on two connections (two instances)
    /// lease 20 due deliveries; each is leased exactly once.
    func testEachDueDeliveryIsLeasedOnceAmongManyThreadsOnTwoConnections() throws {
        let server = try TemporaryPostgres(self)
        let key = try key()
        try OutboxScenario(open: { try PostgresSessionStore(url: server.url, key: key) }, sql: { try server.psql($0) },
                           table: "liveness_outbox").runConcurrentLeases()
    }

    func testAGoneInstancesSessionsAreOrphansAndTheServerGoingAwayIsAnError() throws {
        let server = try TemporaryPostgres(self)
        let store = try PostgresSessionStore(url: server.url, key: try key())
        let remote = InstanceRecord(id: "remote", host: "another-machine", pid: 1, processStart: "1")
        try store.heartbeat(remote, now: t0)
        try store.create(newSession("far", token: "far"))
        guard case .claimed = try store.claim(id: "far", tokenSHA256: hash("far"), owner: "remote", now: t0) else { return XCTFail("claim") }
        XCTAssertEqual(try store.orphans(except: "me", now: t0.addingTimeInterval(10), staleAfterSeconds: 60).map(\.id), [])
        XCTAssertEqual(try store.orphans(except: "me", now: t0.addingTimeInterval(61), staleAfterSeconds: 60).map(\.id), ["far"])
        XCTAssertNoThrow(try store.check())
        server.stop()
        XCTAssertThrowsError(try store.check(), "the server is gone")
        XCTAssertThrowsError(try PostgresSessionStore(url: server.url.replacingOccurrences(of: "user=postgres", with: "user=postgres&password=hunter2"),
                                                      key: try key())) { error in
            XCTAssertTrue("\(error)".contains("cannot connect to the PostgreSQL server"), "\(error)")
            XCTAssertFalse("\(error)".contains("hunter2"), "the password is never repeated: \(error)")
        }
        XCTAssertEqual(PostgresSessionStore.redacted("postgres://u:hunter2@db/x"), "postgres://u:***@db/x")
        XCTAssertEqual(PostgresSessionStore.redacted("host=db password=hunter2 user=u"), "host=db password=*** user=u")
    }
}

private final class PGTally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func add(_ key: String) { lock.withLock { counts[key, default: 0] += 1 } }
    func count(_ key: String) -> Int { lock.withLock { counts[key] ?? 0 } }
}
