import Foundation
import LivenessStore

/// When the service tries a webhook again, and when it gives up (docs/webhooks.md, "Retries").
/// Attempt n (from 1) that fails is tried again after `min(maximumRetrySeconds,
/// firstRetrySeconds × 2^(n-1))`, times a random factor in [0.5, 1] (jitter: receivers that
/// failed together are not hit together again). After `maximumAttempts` attempts, or once the
/// delivery is `maximumAgeSeconds` old, it is `dead`.
public struct WebhookSchedule: Sendable, Equatable {
    /// The delay after the first failed attempt, seconds (before jitter).
    public var firstRetrySeconds = 5.0
    /// The longest delay between two attempts, seconds.
    public var maximumRetrySeconds = 3600.0
    /// Attempts before the delivery is dead.
    public var maximumAttempts = 12
    /// Age (since the session finished) after which a failed delivery is dead, seconds; at most
    /// `OutboxRules.maximumAgeSeconds` (a day), how long a pending delivery holds its session.
    public var maximumAgeSeconds = 86_400.0
    /// Time allowed for one request, connection included, seconds.
    public var timeoutSeconds = 10.0
    /// How often the outbox is asked for due deliveries, seconds.
    public var pollSeconds = 1.0
    /// Deliveries attempted at once by one instance.
    public var concurrency = 4

    /// Creates the defaults.
    public init() {}

    /// The delay before the attempt after failed attempt `attempt` (from 1), seconds, with
    /// `jitter` in [0, 1] (0: the full delay, 1: half of it).
    public func retryDelay(afterAttempt attempt: Int, jitter: Double) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 40)))
        let full = min(maximumRetrySeconds, firstRetrySeconds * pow(2, exponent))
        return full * (1 - 0.5 * max(0, min(1, jitter)))
    }

    /// When to try `delivery` again after its attempt failed at `now`; nil: it is dead.
    func retryAt(_ delivery: Delivery, now: Date, jitter: Double) -> Date? {
        let age = now.timeIntervalSince(delivery.createdAt)
        if delivery.attempts >= maximumAttempts || age >= min(maximumAgeSeconds, OutboxRules.maximumAgeSeconds) { return nil }
        return now.addingTimeInterval(retryDelay(afterAttempt: delivery.attempts, jitter: jitter))
    }

    /// The lease a delivery is held by while attempted: long enough for the request and the store
    /// update after it, short enough that a crashed instance's deliveries come back soon.
    var leaseSeconds: Double { timeoutSeconds * 2 + 5 }
}
