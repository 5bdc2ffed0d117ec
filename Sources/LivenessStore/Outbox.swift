import Foundation

/// The webhook outbox of the store (docs/webhooks.md): one row per delivery of a finished
/// session's result to the relying party's callback URL. A delivery is queued by `finish`, in the
/// very transaction that stores the result (a result is never stored without its delivery, and a
/// restart finds the queue where it was), then leased by one instance at a time, attempted, and
/// ended `delivered` or `dead`. At least once: a lease that expires (its instance died mid-request)
/// makes the delivery due again.
public protocol DeliveryOutbox {
    /// Leases up to `limit` due deliveries (state `pending`, `nextAttemptAt <= now`, no live lease)
    /// to instance `owner` until `now + leaseSeconds`, counting one more attempt on each. One
    /// atomic statement (`FOR UPDATE SKIP LOCKED` on PostgreSQL, the write lock on SQLite): of any
    /// number of instances, one holds a delivery at a time.
    func leaseDeliveries(owner: String, now: Date, leaseSeconds: Double, limit: Int) throws(StoreError) -> [Delivery]

    /// Ends a delivery `delivered`, while `owner` still holds its lease. False when it does not
    /// (the lease expired and another instance took it; that one delivers again: at least once).
    @discardableResult
    func deliveryDelivered(id: String, owner: String, now: Date) throws(StoreError) -> Bool

    /// Records a failed attempt (`error`, for people): due again at `retryAt`, or `dead` when nil.
    /// Only while `owner` still holds the lease.
    @discardableResult
    func deliveryFailed(id: String, owner: String, error: String, retryAt: Date?, now: Date) throws(StoreError) -> Bool

    /// How many deliveries wait, since when, and how many died.
    func outboxStatus() throws(StoreError) -> OutboxStatus
}

/// The state of one delivery in the outbox.
public enum DeliveryState: String, Sendable, Equatable {
    case pending, delivered, dead
}

/// A delivery leased to this instance, with what it sends.
public struct Delivery: Sendable, Equatable {
    /// Random, per delivery (16 hex digits): receivers dedupe by it with the session id.
    public var id: String
    public var sessionID: String
    /// The callback URL, as validated when the session was created.
    public var url: String
    /// Attempts made so far, this one included (1 for the first).
    public var attempts: Int
    /// When the session finished and the delivery was queued.
    public var createdAt: Date
    /// The report, byte for byte as `GET /v1/sessions/{id}` serves it.
    public var report: [UInt8]
    /// `report.sig`, when the service signs.
    public var signature: [UInt8]?

    public init(id: String, sessionID: String, url: String, attempts: Int, createdAt: Date, report: [UInt8], signature: [UInt8]?) {
        self.id = id
        self.sessionID = sessionID
        self.url = url
        self.attempts = attempts
        self.createdAt = createdAt
        self.report = report
        self.signature = signature
    }
}

/// The outbox at a glance, for `/metrics`.
public struct OutboxStatus: Sendable, Equatable {
    /// Deliveries waiting (due or not, leased or not).
    public var pending: Int
    /// When the oldest waiting delivery was queued; nil when none waits.
    public var oldestPending: Date?
    /// Deliveries given up (`dead`) and still in the store.
    public var dead: Int

    public init(pending: Int, oldestPending: Date?, dead: Int) {
        self.pending = pending
        self.oldestPending = oldestPending
        self.dead = dead
    }
}

/// A session's latest delivery, as `GET /v1/sessions/{id}` shows it.
public struct DeliverySummary: Sendable, Equatable {
    public var state: DeliveryState
    public var attempts: Int
    public init(state: DeliveryState, attempts: Int) {
        self.state = state
        self.attempts = attempts
    }
}

/// What both backends share about the outbox.
public enum OutboxRules {
    /// A pending delivery keeps its finished session past `--retention` (so the result it sends is
    /// still there) for at most this long after the session finished, in seconds (a day): longer
    /// than any retry schedule `liveness serve` runs, so a store whose instances stopped
    /// delivering still empties.
    public static let maximumAgeSeconds: Double = 86_400

    /// A fresh delivery id: 8 random bytes as 16 hex digits.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// A delivery from the columns `id, session_id, url, attempts, created_at, report, signature`.
    static func delivery(from row: [SQLValue]) -> Delivery? {
        guard row.count >= 7, let id = row[0].text, let session = row[1].text, let url = row[2].text else { return nil }
        return Delivery(id: id, sessionID: session, url: url, attempts: Int(row[3].integer ?? 0),
                        createdAt: Date(timeIntervalSince1970: row[4].real ?? 0), report: row[5].blob ?? [], signature: row[6].blob)
    }
}
