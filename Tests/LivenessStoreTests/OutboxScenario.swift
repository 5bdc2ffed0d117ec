import Foundation
import LivenessEvidence
import LivenessStore
import XCTest

/// The webhook outbox's contract (docs/webhooks.md), run against each backend with time as an
/// input: a delivery queued with the result it sends, one lease at a time, retries, a lease that
/// expires (a crashed instance), a reopened store (a restart), dead deliveries, the sweep that keeps
/// a pending delivery's session, erasure. The oracle for what is in the store is the backend's
/// own client (Python's sqlite3, psql), given as `sql` over the outbox table `table`.
struct OutboxScenario {
    let open: () throws -> SessionStore
    let sql: (String) throws -> [String]
    let table: String
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private func hash(_ token: String) -> [UInt8] { SHA256Digest(of: Array(token.utf8)).bytes }

    /// Creates, claims and finishes session `id` (owner `o`) at `at`, with `callback` if any.
    private func finishedSession(_ store: SessionStore, _ id: String, callback: String?, at: Date,
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        try store.create(NewSession(id: id, tokenSHA256: hash(id), policy: Array("{}".utf8), seed: 1, createdAt: at,
                                    expiresAt: at.addingTimeInterval(180), callbackURL: callback))
        guard case .claimed = try store.claim(id: id, tokenSHA256: hash(id), owner: "o", now: at) else {
            return XCTFail("claim \(id)", file: file, line: line)
        }
        let result = FinishedSession(report: Array(#"{"session":"\#(id)"}"#.utf8), status: "failed", reason: "cancelled",
                                     signature: Array("sig-\(id)".utf8), promptLog: nil, prompted: false, autoshot: nil, snapshot: nil)
        XCTAssertTrue(try store.finish(id: id, owner: "o", result: result, now: at), file: file, line: line)
    }

    func run() throws {
        var store = try open()
        try finishedSession(store, "s1", callback: "https://receiver.example/hook", at: t0)
        try finishedSession(store, "quiet", callback: nil, at: t0)
        // Queued with the result, in the same transaction; nothing for a session without a URL.
        XCTAssertEqual(try sql("SELECT session_id, url, state, attempts FROM \(table)"), ["s1|https://receiver.example/hook|pending|0"])
        XCTAssertEqual(try store.outboxStatus(), OutboxStatus(pending: 1, oldestPending: t0, dead: 0))
        XCTAssertEqual(try store.session(id: "s1")?.delivery, DeliverySummary(state: .pending, attempts: 0))
        XCTAssertNil(try store.session(id: "quiet")?.delivery)

        // Leased to one instance at a time, with the report and signature it sends.
        let first = try store.leaseDeliveries(owner: "a", now: t0, leaseSeconds: 30, limit: 8)
        XCTAssertEqual(first.count, 1)
        let delivery = try XCTUnwrap(first.first)
        XCTAssertEqual(delivery.sessionID, "s1")
        XCTAssertEqual(delivery.attempts, 1)
        XCTAssertEqual(delivery.report, Array(#"{"session":"s1"}"#.utf8))
        XCTAssertEqual(delivery.signature, Array("sig-s1".utf8))
        XCTAssertEqual(delivery.id.count, 16)
        XCTAssertEqual(try store.leaseDeliveries(owner: "b", now: t0, leaseSeconds: 30, limit: 8), [], "held by a")
        XCTAssertFalse(try store.deliveryFailed(id: delivery.id, owner: "b", error: "x", retryAt: t0, now: t0), "not b's lease")

        // A failed attempt: due again at the time given, not before.
        XCTAssertTrue(try store.deliveryFailed(id: delivery.id, owner: "a", error: "HTTP 500", retryAt: t0.addingTimeInterval(10), now: t0))
        XCTAssertEqual(try store.leaseDeliveries(owner: "b", now: t0.addingTimeInterval(9), leaseSeconds: 30, limit: 8), [])
        XCTAssertEqual(try store.leaseDeliveries(owner: "b", now: t0.addingTimeInterval(10), leaseSeconds: 30, limit: 8).map(\.attempts), [2])

        // b dies with the lease: the delivery is due again when the lease ends (at least once).
        XCTAssertEqual(try store.leaseDeliveries(owner: "a", now: t0.addingTimeInterval(39), leaseSeconds: 30, limit: 8), [])
        XCTAssertEqual(try store.leaseDeliveries(owner: "a", now: t0.addingTimeInterval(40), leaseSeconds: 30, limit: 8).map(\.attempts), [3])

        // A restart: a new connection finds the delivery where it was.
        store = try open()
        XCTAssertEqual(try store.outboxStatus().pending, 1)
        let again = try store.leaseDeliveries(owner: "c", now: t0.addingTimeInterval(71), leaseSeconds: 30, limit: 8)
        XCTAssertEqual(again.map(\.id), [delivery.id], "the same delivery id: receivers dedupe by it")
        XCTAssertFalse(try store.deliveryDelivered(id: delivery.id, owner: "a", now: t0.addingTimeInterval(72)), "a's lease has ended")
        XCTAssertTrue(try store.deliveryDelivered(id: delivery.id, owner: "c", now: t0.addingTimeInterval(72)))
        XCTAssertEqual(try sql("SELECT state, attempts, last_error IS NULL FROM \(table) WHERE session_id = 's1'").first?.split(separator: "|").prefix(2),
                       ["delivered", "4"])
        XCTAssertEqual(try store.session(id: "s1")?.delivery, DeliverySummary(state: .delivered, attempts: 4))
        XCTAssertEqual(try store.leaseDeliveries(owner: "c", now: t0.addingTimeInterval(1000), leaseSeconds: 30, limit: 8), [])

        // Dead: given up, counted, never leased again.
        try finishedSession(store, "s2", callback: "https://receiver.example/hook", at: t0.addingTimeInterval(100))
        let doomed = try XCTUnwrap(try store.leaseDeliveries(owner: "a", now: t0.addingTimeInterval(100), leaseSeconds: 30, limit: 8).first)
        XCTAssertTrue(try store.deliveryFailed(id: doomed.id, owner: "a", error: "HTTP 500", retryAt: nil, now: t0.addingTimeInterval(101)))
        XCTAssertEqual(try store.outboxStatus(), OutboxStatus(pending: 0, oldestPending: nil, dead: 1))
        XCTAssertEqual(try sql("SELECT state, last_error FROM \(table) WHERE session_id = 's2'"), ["dead|HTTP 500"])
        XCTAssertEqual(try store.leaseDeliveries(owner: "a", now: t0.addingTimeInterval(10_000), leaseSeconds: 30, limit: 8), [])

        // The sweep keeps a finished session whose delivery is pending past its retention, for at
        // most a day; the others go, and their deliveries with them.
        try finishedSession(store, "s3", callback: "https://receiver.example/hook", at: t0.addingTimeInterval(200))
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(900), retentionSeconds: 600).retained, 3, "s1, quiet, s2")
        XCTAssertEqual(try sql("SELECT session_id FROM \(table)"), ["s3"])
        XCTAssertNotNil(try store.session(id: "s3"), "held by its pending delivery")
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(200 + OutboxRules.maximumAgeSeconds + 1), retentionSeconds: 600).retained, 1)
        XCTAssertEqual(try sql("SELECT count(*) FROM \(table)"), ["0"])

        // Erasure takes the delivery too.
        try finishedSession(store, "s4", callback: "https://receiver.example/hook", at: t0)
        XCTAssertEqual(try store.erase(id: "s4"), .finished)
        XCTAssertEqual(try sql("SELECT count(*) FROM \(table)"), ["0"])
    }

    /// Many threads on two connections lease 20 due deliveries at once: each is leased exactly once.
    func runConcurrentLeases() throws {
        let stores = [try open(), try open()]
        for i in 0..<20 { try finishedSession(stores[0], "c\(i)", callback: "https://receiver.example/\(i)", at: t0) }
        let leased = LeaseTally()
        let now = t0
        DispatchQueue.concurrentPerform(iterations: 16) { n in
            // Bounded: a lease that does not hold would otherwise loop for ever.
            for _ in 0..<20 {
                guard let batch = try? stores[n % 2].leaseDeliveries(owner: "instance-\(n)", now: now, leaseSeconds: 60, limit: 2),
                      !batch.isEmpty else { break }
                for delivery in batch { leased.add(delivery.sessionID) }
            }
        }
        XCTAssertEqual(leased.counts.count, 20)
        XCTAssertEqual(Set(leased.counts.values), [1], "every delivery leased exactly once: \(leased.counts)")
        XCTAssertEqual(try sql("SELECT count(DISTINCT lease_owner), sum(attempts) FROM \(table)").first?.split(separator: "|").last, "20")
    }
}

private final class LeaseTally: @unchecked Sendable {
    private let lock = NSLock()
    private var map: [String: Int] = [:]
    func add(_ key: String) { lock.withLock { map[key, default: 0] += 1 } }
    var counts: [String: Int] { lock.withLock { map } }
}
