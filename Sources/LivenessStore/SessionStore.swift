import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where `liveness serve` keeps its sessions beyond one process's memory (docs/store.md): the
/// sessions with their state and expiry, the camera token as its SHA-256 only, finished reports
/// with their signatures and prompt logs, and the stills, sealed. One protocol for every backend:
/// SQLite in `--data-dir` today (`SQLiteSessionStore`); a server database for several instances
/// fits the same calls (every state change is one conditional update).
///
/// Time is an input (`now`), never read here: tests move it, and every instance judges expiry by
/// the same rule. Every method may be called from any thread; each is atomic.
public protocol SessionStore: DeliveryOutbox, AnyObject, Sendable {
    /// What the store is, for messages and `/healthz` (`sqlite:/data/liveness.db`).
    var location: String { get }

    /// Records a new session in state `created` (with its callback URL, if any: its delivery is
    /// queued in the outbox when it finishes).
    func create(_ session: NewSession) throws(StoreError)

    /// Whether `tokenSHA256` would open session `id` now, claiming nothing.
    func peek(id: String, tokenSHA256: [UInt8], now: Date) throws(StoreError) -> ClaimOutcome

    /// Claims session `id` for streaming by instance `owner`: one atomic conditional update
    /// (`state` from `created` to `streaming` where the token's hash matches and the session has
    /// not expired), so of any number of claims on any number of instances exactly one succeeds.
    func claim(id: String, tokenSHA256: [UInt8], owner: String, now: Date) throws(StoreError) -> ClaimOutcome

    /// Stores a streaming session's result and ends it (`finished`), only while `owner` still
    /// streams it; in the same transaction, queues its webhook delivery when it has a callback URL
    /// (`DeliveryOutbox`). False when it does not (erased meanwhile, or ended `interrupted` by another
    /// instance that found `owner` gone): the result is then dropped.
    func finish(id: String, owner: String, result: FinishedSession, now: Date) throws(StoreError) -> Bool

    /// A session as stored (its stills' bytes apart: `still`); nil when unknown or erased.
    func session(id: String) throws(StoreError) -> StoredSession?

    /// A released still of a finished session, opened; nil when there is none.
    func still(id: String, kind: StillKind) throws(StoreError) -> [UInt8]?

    /// Erases session `id` whatever its state: its row, report, signature, prompt log and stills.
    /// - Returns: the state it had; nil when there was no such session.
    func erase(id: String) throws(StoreError) -> SessionState?

    /// Deletes what has expired at `now`: finished sessions older than `retentionSeconds` (unless
    /// a delivery of theirs is still pending, for at most `OutboxRules.maximumAgeSeconds`), created
    /// sessions past `expiresAt`, and instances silent for a day.
    func sweep(now: Date, retentionSeconds: Double) throws(StoreError) -> SweepResult

    /// Records instance `instance` as alive at `now` (its heartbeat).
    func heartbeat(_ instance: InstanceRecord, now: Date) throws(StoreError)

    /// Forgets instance `id` (a clean stop: its streams have ended).
    func removeInstance(id: String) throws(StoreError)

    /// Sessions still `streaming` for an instance that is gone (`InstanceRecord.isGone`): the
    /// process died (a crash, `kill -9`, a power loss) before their verdict. Never those of
    /// `except` (the caller).
    func orphans(except: String, now: Date, staleAfterSeconds: Double) throws(StoreError) -> [StoredSession]

    /// Answers a trivial query: throws when the store cannot be read or written now.
    func check() throws(StoreError)
}

/// A session's state in the store.
public enum SessionState: String, Sendable, Equatable {
    case created, streaming, finished
}

/// The two stills a passed session releases.
public enum StillKind: String, CaseIterable, Sendable {
    case autoshot, snapshot
}

/// A session as `POST /v1/sessions` creates it.
public struct NewSession: Sendable, Equatable {
    public var id: String
    /// SHA-256 of the camera client's single-use token: the token itself is never stored.
    public var tokenSHA256: [UInt8]
    /// The session's policy as JSON (`LivenessPolicy`), so any instance can run its stream.
    public var policy: [UInt8]
    public var seed: UInt64
    public var createdAt: Date
    /// The session is forgotten unless its stream starts before this.
    public var expiresAt: Date
    /// Where its result is POSTed when it finishes (docs/webhooks.md); nil: nowhere.
    public var callbackURL: String?

    public init(id: String, tokenSHA256: [UInt8], policy: [UInt8], seed: UInt64, createdAt: Date, expiresAt: Date,
                callbackURL: String? = nil) {
        self.id = id
        self.callbackURL = callbackURL
        self.tokenSHA256 = tokenSHA256
        self.policy = policy
        self.seed = seed
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// What a finished session leaves for the relying party.
public struct FinishedSession: Sendable, Equatable {
    /// The report (`liveness-report/1`) exactly as served.
    public var report: [UInt8]
    /// The verdict's status and failure reason (also inside the report), for queries and metrics.
    public var status: String
    public var reason: String?
    /// `report.sig`, when the service signs.
    public var signature: [UInt8]?
    /// The signed prompt log of a prompted session, when the service signs.
    public var promptLog: [UInt8]?
    public var prompted: Bool
    /// The stills released with a pass (JPEG), sealed at rest.
    public var autoshot: [UInt8]?
    public var snapshot: [UInt8]?

    public init(report: [UInt8], status: String, reason: String?, signature: [UInt8]?, promptLog: [UInt8]?, prompted: Bool,
                autoshot: [UInt8]?, snapshot: [UInt8]?) {
        self.report = report
        self.status = status
        self.reason = reason
        self.signature = signature
        self.promptLog = promptLog
        self.prompted = prompted
        self.autoshot = autoshot
        self.snapshot = snapshot
    }
}

/// A session as stored, without its stills' bytes.
public struct StoredSession: Sendable, Equatable {
    public var id: String
    public var state: SessionState
    public var policy: [UInt8]
    public var seed: UInt64
    public var createdAt: Date
    public var expiresAt: Date
    /// The instance that claimed it (streaming or finished), if any.
    public var owner: String?
    public var finishedAt: Date?
    public var status: String?
    public var reason: String?
    public var report: [UInt8]?
    public var signature: [UInt8]?
    public var promptLog: [UInt8]?
    public var prompted: Bool
    /// The stills stored for it.
    public var stills: Set<StillKind>
    /// Its latest webhook delivery, if it has one (docs/webhooks.md).
    public var delivery: DeliverySummary? = nil
}

/// The answer to a claim (or a peek).
public enum ClaimOutcome: Sendable, Equatable {
    /// The token opens the session: claimed (or, for a peek, it would be).
    case claimed(StoredSession)
    /// No such session, expired, or finished.
    case unknown
    /// The session exists but the token is not its token.
    case badToken
    /// The token's single use is spent: the stream was opened already.
    case alreadyStarted
}

/// What a sweep deleted.
public struct SweepResult: Sendable, Equatable {
    /// Finished sessions past their retention.
    public var retained = 0
    /// Created sessions whose stream never started before their expiry.
    public var expired = 0
    public init(retained: Int = 0, expired: Int = 0) {
        self.retained = retained
        self.expired = expired
    }
}

/// One running instance of the service, as the store knows it: enough to tell whether it is gone.
public struct InstanceRecord: Sendable, Equatable {
    /// Random, per process start.
    public var id: String
    /// The machine's host name, its process id and the kernel's start time of that process
    /// (`/proc/PID/stat` field 22), which together name one process even after a pid is reused.
    public var host: String
    public var pid: Int32
    public var processStart: String
    /// The last heartbeat, seconds since 1970.
    public var heartbeatAt: Double

    public init(id: String, host: String, pid: Int32, processStart: String, heartbeatAt: Double = 0) {
        self.id = id
        self.host = host
        self.pid = pid
        self.processStart = processStart
        self.heartbeatAt = heartbeatAt
    }

    /// This process, with a fresh random id.
    public static func current() -> InstanceRecord {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        return InstanceRecord(id: id, host: hostName(), pid: getpid(), processStart: processStartTime(getpid()) ?? "")
    }

    /// True when the instance is no longer running: on this machine, its process is gone (or the
    /// pid now names another process); elsewhere, its heartbeat is older than `staleAfterSeconds`.
    public func isGone(now: Date, staleAfterSeconds: Double) -> Bool {
        if host == Self.hostName() && !processStart.isEmpty {
            return Self.processStartTime(pid) != processStart
        }
        return now.timeIntervalSince1970 - heartbeatAt > staleAfterSeconds
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(cString: buffer)
    }

    /// Field 22 of `/proc/PID/stat` (the process's start time in clock ticks since boot); nil
    /// when there is no such process.
    static func processStartTime(_ pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm)" come fields 3...; the command name may hold spaces and parentheses.
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }
}

/// A store that cannot be opened, read or written, with a message for people.
public struct StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    public var message: String
    /// The backend's result code, when it gave one (SQLite's extended result code).
    public var code: Int32?
    public init(_ message: String, code: Int32? = nil) {
        self.message = message
        self.code = code
    }
    public var description: String { message }
}
