import Foundation
import LivenessStore

/// The service's counters, exported as Prometheus text on `GET /metrics`. Thread-safe.
final class ServiceMetrics: @unchecked Sendable {
    private let lock = NSLock()
    private var sessionsTotal: [String: Int] = [:]   // "status,reason" -> count
    private var framesTotal = 0
    private var framesDropped = 0
    private var errorsTotal: [String: Int] = [:]
    private var uploadsTotal: [Int: Int] = [:]       // HTTP status -> count
    /// Upper bounds of the `liveness_frame_seconds` buckets.
    static let buckets: [Double] = [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1]
    private var bucketCounts = [Int](repeating: 0, count: buckets.count)
    private var frameSecondsSum = 0.0
    private var frameSecondsCount = 0
    private var latencies: [Double] = []
    /// Upper bounds of the `liveness_store_seconds` buckets.
    static let storeBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]
    private var storeCalls: [String: (buckets: [Int], sum: Double, count: Int)] = [:]
    private var storeErrors: [String: Int] = [:]
    private var erasures = 0
    private var sweeps = 0
    private var swept: [String: Int] = ["retention": 0, "expired": 0]
    /// Webhook attempts by outcome, and their latency (docs/webhooks.md).
    enum WebhookOutcome: String, CaseIterable { case delivered, failed, dead }
    private var webhookOutcomes: [WebhookOutcome: Int] = [:]
    /// Upper bounds of the `liveness_webhook_seconds` buckets.
    static let webhookBuckets: [Double] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    private var webhookBucketCounts = [Int](repeating: 0, count: webhookBuckets.count)
    private var webhookSecondsSum = 0.0
    private var webhookSecondsCount = 0

    /// A webhook attempt that took `seconds`: delivered, failed (to be tried again), or failed
    /// for the last time (the delivery is dead).
    func webhookAttempt(_ outcome: WebhookOutcome, seconds: Double) {
        lock.withLock {
            webhookOutcomes[outcome, default: 0] += 1
            for (i, bound) in Self.webhookBuckets.enumerated() where seconds <= bound { webhookBucketCounts[i] += 1 }
            webhookSecondsSum += seconds
            webhookSecondsCount += 1
        }
    }

    /// A call to the store (`op`: create, claim, peek, finish, read, still, erase, heartbeat,
    /// orphans, sweep, check; webhooks: lease, delivery, outbox) that took `seconds`; `failed` when it threw.
    func storeCall(_ operation: String, seconds: Double, failed: Bool = false) {
        lock.withLock {
            var entry = storeCalls[operation] ?? ([Int](repeating: 0, count: Self.storeBuckets.count), 0, 0)
            for (i, bound) in Self.storeBuckets.enumerated() where seconds <= bound { entry.buckets[i] += 1 }
            entry.sum += seconds
            entry.count += 1
            storeCalls[operation] = entry
            if failed { storeErrors[operation, default: 0] += 1 }
        }
    }

    /// A session erased on the relying party's request.
    func sessionErased() { lock.withLock { erasures += 1 } }

    /// A sweep of the store ran and deleted this.
    func swept(_ result: SweepResult) {
        lock.withLock {
            sweeps += 1
            swept["retention", default: 0] += result.retained
            swept["expired", default: 0] += result.expired
        }
    }

    func sessionEnded(status: String, reason: String?) {
        lock.withLock { sessionsTotal["\(status),\(reason ?? "")", default: 0] += 1 }
    }

    func frameProcessed(seconds: Double) {
        lock.withLock {
            framesTotal += 1
            frameSecondsSum += seconds
            frameSecondsCount += 1
            for (i, bound) in Self.buckets.enumerated() where seconds <= bound { bucketCounts[i] += 1 }
            latencies.append(seconds)
            if latencies.count > 10_000 { latencies.removeFirst(latencies.count - 10_000) }
        }
    }

    func frameDropped() { lock.withLock { framesDropped += 1 } }

    func error(_ code: String) { lock.withLock { errorsTotal[code, default: 0] += 1 } }

    /// An upload to `/v1/analyze` answered with `status`.
    func uploadAnswered(status: Int) { lock.withLock { uploadsTotal[status, default: 0] += 1 } }

    /// Processing times (seconds) of the frames processed after the first `marker` ones (as far
    /// back as the last 10,000).
    func latencies(after marker: Int) -> [Double] {
        lock.withLock { Array(latencies.suffix(max(0, min(latencies.count, framesTotal - marker)))) }
    }

    /// Frames processed, dropped; the processing-time quantiles of the last 10,000 frames.
    var snapshot: (processed: Int, dropped: Int, p50: Double?, p99: Double?) {
        lock.withLock {
            let sorted = latencies.sorted()
            func q(_ p: Double) -> Double? { sorted.isEmpty ? nil : sorted[min(sorted.count - 1, Int(p * Double(sorted.count)))] }
            return (framesTotal, framesDropped, q(0.5), q(0.99))
        }
    }

    /// The Prometheus text exposition (version 0.0.4); the store's series when `store` (the
    /// backend's name) is given, the webhooks' when `outbox` is (the store's outbox read now, at
    /// `now`).
    func prometheus(activeSessions: Int, store: String? = nil, outbox: OutboxStatus? = nil, now: Date = Date()) -> String {
        lock.withLock {
            var text = "# HELP liveness_sessions_active Sessions created or streaming.\n# TYPE liveness_sessions_active gauge\n"
            text += "liveness_sessions_active \(activeSessions)\n"
            text += "# HELP liveness_sessions_total Sessions ended, by verdict status and failure reason.\n# TYPE liveness_sessions_total counter\n"
            for (key, count) in sessionsTotal.sorted(by: { $0.key < $1.key }) {
                let parts = key.split(separator: ",", omittingEmptySubsequences: false)
                text += "liveness_sessions_total{status=\"\(parts[0])\",reason=\"\(parts[1])\"} \(count)\n"
            }
            text += "# HELP liveness_frames_total Frames processed.\n# TYPE liveness_frames_total counter\nliveness_frames_total \(framesTotal)\n"
            text += "# HELP liveness_frames_dropped_total Frames dropped because a newer one arrived while the session was busy.\n"
            text += "# TYPE liveness_frames_dropped_total counter\nliveness_frames_dropped_total \(framesDropped)\n"
            text += "# HELP liveness_frame_seconds Time to process one frame (decode, track, judge).\n# TYPE liveness_frame_seconds histogram\n"
            for (i, bound) in Self.buckets.enumerated() {
                text += "liveness_frame_seconds_bucket{le=\"\(bound)\"} \(bucketCounts[i])\n"
            }
            text += "liveness_frame_seconds_bucket{le=\"+Inf\"} \(frameSecondsCount)\n"
            text += "liveness_frame_seconds_sum \(frameSecondsSum)\nliveness_frame_seconds_count \(frameSecondsCount)\n"
            text += "# HELP liveness_errors_total Errors sent to clients or answered over HTTP, by code.\n# TYPE liveness_errors_total counter\n"
            for (code, count) in errorsTotal.sorted(by: { $0.key < $1.key }) {
                text += "liveness_errors_total{code=\"\(code)\"} \(count)\n"
            }
            text += "# HELP liveness_uploads_total Uploads to /v1/analyze and /v1/analyze/signed answered, by HTTP status.\n"
            text += "# TYPE liveness_uploads_total counter\n"
            for (status, count) in uploadsTotal.sorted(by: { $0.key < $1.key }) {
                text += "liveness_uploads_total{status=\"\(status)\"} \(count)\n"
            }
            text += "# HELP liveness_sessions_erased_total Sessions erased on the relying party's request (DELETE /v1/sessions/{id}).\n"
            text += "# TYPE liveness_sessions_erased_total counter\nliveness_sessions_erased_total \(erasures)\n"
            guard let store else { return text }
            text += "# HELP liveness_store_info The durable session store (docs/store.md).\n# TYPE liveness_store_info gauge\n"
            text += "liveness_store_info{backend=\"\(store)\"} 1\n"
            text += "# HELP liveness_store_seconds Time of one call to the session store, by operation.\n# TYPE liveness_store_seconds histogram\n"
            for (operation, entry) in storeCalls.sorted(by: { $0.key < $1.key }) {
                for (i, bound) in Self.storeBuckets.enumerated() {
                    text += "liveness_store_seconds_bucket{op=\"\(operation)\",le=\"\(bound)\"} \(entry.buckets[i])\n"
                }
                text += "liveness_store_seconds_bucket{op=\"\(operation)\",le=\"+Inf\"} \(entry.count)\n"
                text += "liveness_store_seconds_sum{op=\"\(operation)\"} \(entry.sum)\nliveness_store_seconds_count{op=\"\(operation)\"} \(entry.count)\n"
            }
            text += "# HELP liveness_store_errors_total Calls to the session store that failed, by operation.\n# TYPE liveness_store_errors_total counter\n"
            for (operation, count) in storeErrors.sorted(by: { $0.key < $1.key }) {
                text += "liveness_store_errors_total{op=\"\(operation)\"} \(count)\n"
            }
            text += "# HELP liveness_store_sweeps_total Runs of the store's sweeper.\n# TYPE liveness_store_sweeps_total counter\n"
            text += "liveness_store_sweeps_total \(sweeps)\n"
            text += "# HELP liveness_store_swept_total Sessions the sweeper deleted: finished past their retention, or created and never streamed.\n"
            text += "# TYPE liveness_store_swept_total counter\n"
            for (kind, count) in swept.sorted(by: { $0.key < $1.key }) {
                text += "liveness_store_swept_total{kind=\"\(kind)\"} \(count)\n"
            }
            guard let outbox else { return text }
            text += "# HELP liveness_webhook_outbox_pending Webhook deliveries waiting in the store's outbox (all instances).\n"
            text += "# TYPE liveness_webhook_outbox_pending gauge\nliveness_webhook_outbox_pending \(outbox.pending)\n"
            let age = outbox.oldestPending.map { max(0, now.timeIntervalSince($0)) } ?? 0
            text += "# HELP liveness_webhook_outbox_oldest_seconds Age of the oldest waiting delivery (0 when none waits).\n"
            text += "# TYPE liveness_webhook_outbox_oldest_seconds gauge\nliveness_webhook_outbox_oldest_seconds \(age)\n"
            text += "# HELP liveness_webhook_outbox_dead Deliveries given up (dead) still in the store.\n"
            text += "# TYPE liveness_webhook_outbox_dead gauge\nliveness_webhook_outbox_dead \(outbox.dead)\n"
            text += "# HELP liveness_webhook_deliveries_total Webhook attempts of this instance: delivered, failed (tried again later), dead (the last one failed).\n"
            text += "# TYPE liveness_webhook_deliveries_total counter\n"
            for outcome in WebhookOutcome.allCases {
                text += "liveness_webhook_deliveries_total{outcome=\"\(outcome.rawValue)\"} \(webhookOutcomes[outcome] ?? 0)\n"
            }
            text += "# HELP liveness_webhook_seconds Time of one webhook attempt (address check and request).\n# TYPE liveness_webhook_seconds histogram\n"
            for (i, bound) in Self.webhookBuckets.enumerated() {
                text += "liveness_webhook_seconds_bucket{le=\"\(bound)\"} \(webhookBucketCounts[i])\n"
            }
            text += "liveness_webhook_seconds_bucket{le=\"+Inf\"} \(webhookSecondsCount)\n"
            text += "liveness_webhook_seconds_sum \(webhookSecondsSum)\nliveness_webhook_seconds_count \(webhookSecondsCount)\n"
            return text
        }
    }
}
