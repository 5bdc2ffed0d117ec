import Foundation

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

    /// The Prometheus text exposition (version 0.0.4).
    func prometheus(activeSessions: Int) -> String {
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
            return text
        }
    }
}
