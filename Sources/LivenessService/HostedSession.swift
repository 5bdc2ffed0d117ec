import FaceTracking
import Foundation
import LivenessCore
import LivenessKit

/// Identifies a WebSocket connection of the server's event loop.
typealias ConnectionID = UInt64

/// Something the event loop must send on a connection.
enum Outgoing: Sendable, Equatable {
    /// A JSON text message.
    case text([UInt8])
    /// A close frame with its status code and reason, after which the connection closes.
    case close(code: UInt16, reason: String)
}

/// A frame received and waiting for a worker: the latest one wins.
struct PendingFrame {
    var header: FrameHeader
    /// The frame's bytes (after the header).
    var bytes: [UInt8]
}

/// Something a worker does to a session, in order, before its pending frame.
enum SessionControl {
    case start(ClientMessage.Start)
    case cancel
    case disconnected
    case timeout(String)
    case refuse(StreamError)
    /// The service is stopping (SIGTERM, SIGINT): the session ends `cancelled` with its verdict
    /// message and a close frame, not a bare end of the connection.
    case shutdown
    /// The relying party erased the session (`DELETE /v1/sessions/{id}`): it ends `cancelled`
    /// like `shutdown`, and nothing of it is kept.
    case erased
}

/// One session of `liveness serve`: created by the relying party, streamed by one camera client,
/// then kept as a result (report and stills) for a bounded time. Every field is guarded by the
/// host's lock, except `stream`, which only the worker that holds `busy` touches.
final class HostedSession {
    enum State: String {
        case created, streaming, finished
    }

    let id: String
    /// SHA-256 of the camera client's single-use token (the token itself is not kept, here or
    /// in the store).
    let tokenSHA256: [UInt8]
    /// The relying party's policy for this session.
    let policy: LivenessPolicy
    let seed: UInt64
    let createdAt: ContinuousClock.Instant
    let expiresAt: Date
    var state = State.created
    var connection: ConnectionID?
    var started = false
    var acknowledge = false
    var stream: StreamSession?
    /// The session's trace file (`ServiceConfiguration.traceDirectory`), written by the worker
    /// that holds `busy`, as `stream` is.
    var trace: TraceWriter?
    var controls: [SessionControl] = []
    var frame: PendingFrame?
    var motion: [MotionSample] = []
    var busy = false
    var queued = false
    var dropped = 0
    var slowSignalled = false
    var lastSequence: Int64 = -1
    var framesReceived = 0
    var firstFrameAt: ContinuousClock.Instant?
    /// When the client's stream was opened (the token claimed): the wall-clock cap counts from
    /// here, so messages without frames cannot hold a slot.
    var streamOpenedAt: ContinuousClock.Instant?
    var lastMessageAt: ContinuousClock.Instant
    var finishedAt: ContinuousClock.Instant?
    /// Erased by the relying party while streaming: its result is dropped, not kept.
    var erased = false
    /// The result for the relying party, once finished: the report as served (JSON).
    var report: [UInt8]?
    var reason: FailureReason?
    var autoshot: [UInt8]?
    var snapshot: [UInt8]?
    /// `report.sig` of the report, when the service signs (docs/signing.md).
    var signature: [UInt8]?
    /// Whether the finished session was judged in prompted mode.
    var prompted = false
    /// The signed prompt log (`liveness-prompt-log/1`) of a finished prompted session, when the
    /// service signs.
    var promptLog: [UInt8]?

    init(id: String, tokenSHA256: [UInt8], policy: LivenessPolicy, seed: UInt64, now: ContinuousClock.Instant, expiresAt: Date) {
        self.id = id
        self.tokenSHA256 = tokenSHA256
        self.policy = policy
        self.seed = seed
        createdAt = now
        lastMessageAt = now
        self.expiresAt = expiresAt
    }

    /// True while the session counts against `maxSessions`.
    var isActive: Bool { state != .finished }

    /// Media-time budget by the server's clock: settle + framing + scan cap + grace, seconds.
    func serverDeadline(grace: Double) -> Double {
        policy.settleSeconds + policy.framingTimeoutSeconds + policy.scanCapSeconds + grace
    }
}

/// Random identifiers and tokens, and their constant-time comparison.
enum Secrets {
    /// `count` random bytes from the system's cryptographic generator (getrandom).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Lower-case hex.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    /// Compares two byte strings in time that depends only on their lengths.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
