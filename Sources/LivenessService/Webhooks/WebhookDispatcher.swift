import Foundation
import LivenessStore

/// Sends the outbox's deliveries (docs/webhooks.md): one thread per instance asks the store for
/// due deliveries every `WebhookSchedule.pollSeconds`, leases up to `concurrency` of them (one
/// instance holds a delivery at a time), checks each URL's addresses, POSTs the report with its
/// signatures, and records the outcome: `delivered`, due again after a backoff with jitter, or
/// `dead`. Deliveries left by a stopped or crashed instance are due again when their lease ends.
final class WebhookDispatcher: @unchecked Sendable {
    private let store: SessionStore
    private let owner: String
    private let secret: [UInt8]
    private let schedule: WebhookSchedule
    private let metrics: ServiceMetrics
    private let condition = NSCondition()
    private var stopping = false
    private let exited = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// - Parameters:
    ///   - owner: this instance's id in the store (the lease holder).
    ///   - secret: the shared HMAC secret (`--webhook-secret-file`).
    init(store: SessionStore, owner: String, secret: [UInt8], schedule: WebhookSchedule, metrics: ServiceMetrics) {
        self.store = store
        self.owner = owner
        self.secret = secret
        self.schedule = schedule
        self.metrics = metrics
    }

    /// Starts the dispatching thread.
    func start() {
        let thread = Thread { [self] in
            while !isStopping {
                runOnce()
                condition.withLock { if !stopping { _ = condition.wait(until: Date().addingTimeInterval(schedule.pollSeconds)) } }
            }
            exited.signal()
        }
        thread.name = "liveness-webhooks"
        self.thread = thread
        thread.start()
    }

    /// Wakes the thread now (a session just finished).
    func poke() { condition.withLock { condition.signal() } }

    /// Stops the thread: it ends the attempts in hand (at most `timeoutSeconds`); leased
    /// deliveries not attempted become due again when their lease ends.
    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
        if thread != nil { _ = exited.wait(timeout: .now() + schedule.timeoutSeconds + 3) }
    }

    private var isStopping: Bool { condition.withLock { stopping } }

    /// One round: lease the due deliveries and attempt them.
    func runOnce() {
        let leased: [Delivery]
        let started = ContinuousClock.now
        do {
            leased = try store.leaseDeliveries(owner: owner, now: Date(), leaseSeconds: schedule.leaseSeconds, limit: schedule.concurrency)
            metrics.storeCall("lease", seconds: (ContinuousClock.now - started).inSeconds)
        } catch {
            metrics.storeCall("lease", seconds: (ContinuousClock.now - started).inSeconds, failed: true)
            return
        }
        guard !leased.isEmpty else { return }
        DispatchQueue.concurrentPerform(iterations: leased.count) { index in attempt(leased[index]) }
    }

    private func attempt(_ delivery: Delivery) {
        let started = ContinuousClock.now
        let outcome: WebhookClient.Outcome
        if let refusal = Self.refusal(delivery.url) {
            outcome = WebhookClient.Outcome(status: nil, failure: refusal)
        } else if let url = URL(string: delivery.url) {
            outcome = WebhookClient.post(url, body: delivery.report, headers: WebhookSignature.headers(for: delivery, secret: secret, now: Date()),
                                         timeout: schedule.timeoutSeconds)
        } else {
            outcome = WebhookClient.Outcome(status: nil, failure: "not a URL")
        }
        let seconds = (ContinuousClock.now - started).inSeconds
        let now = Date()
        if outcome.delivered {
            record { () throws(StoreError) in _ = try store.deliveryDelivered(id: delivery.id, owner: owner, now: now) }
            metrics.webhookAttempt(.delivered, seconds: seconds)
            return
        }
        let retryAt = schedule.retryAt(delivery, now: now, jitter: Double.random(in: 0...1))
        let reason = "attempt \(delivery.attempts): \(outcome.failure ?? "failed")"
        record { () throws(StoreError) in
            _ = try store.deliveryFailed(id: delivery.id, owner: owner, error: reason, retryAt: retryAt, now: now)
        }
        metrics.webhookAttempt(retryAt == nil ? .dead : .failed, seconds: seconds)
    }

    /// An outcome written to the store, timed as `liveness_store_seconds{op="delivery"}`. When it
    /// cannot be written, the lease ends and the delivery is attempted again (at least once).
    private func record(_ body: () throws(StoreError) -> Void) {
        let started = ContinuousClock.now
        do {
            try body()
            metrics.storeCall("delivery", seconds: (ContinuousClock.now - started).inSeconds)
        } catch {
            metrics.storeCall("delivery", seconds: (ContinuousClock.now - started).inSeconds, failed: true)
        }
    }

    /// Why `url` must not be POSTed to now: it breaks the rules, or its host resolves to an
    /// address webhooks must not reach (checked again at every attempt: DNS may change).
    static func refusal(_ url: String) -> String? {
        do throws(ServiceError) {
            return try WebhookURL.validate(url).refusedAddress()
        } catch {
            return error.message
        }
    }
}
