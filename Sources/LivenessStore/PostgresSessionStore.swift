import CPostgres
import Foundation
import LivenessEvidence

/// The PostgreSQL backend of `SessionStore` (`liveness serve --store postgres://…`), for several
/// instances on several machines (docs/store.md): the tables `liveness_sessions`,
/// `liveness_stills`, `liveness_instances`, `liveness_outbox` and `liveness_meta` in the database the URL names,
/// created when missing. Every state change is the same single conditional statement as in the
/// SQLite backend: PostgreSQL's row locks make the second of two concurrent claims re-read the
/// row and change nothing.
///
/// One connection through libpq (`PQconnectdb`, `PQexecParams`), serialised by a lock; a broken
/// connection is reset (`PQreset`) before the next call. Stills are sealed with the `StoreKey` as
/// in SQLite; reports are kept in clear.
public final class PostgresSessionStore: SessionStore, @unchecked Sendable {
    public let location: String
    private let conninfo: String
    private var connection: OpaquePointer?
    private let key: StoreKey
    private let lock = NSLock()

    /// Connects to `url` (a libpq connection URI, `postgres://` or `postgresql://`, or a
    /// `key=value` string) and prepares the tables.
    /// - Throws: a server that cannot be reached or refuses the login, a database written by a
    ///   newer version, another key — each as a sentence (the password is never repeated).
    public init(url: String, key: StoreKey) throws(StoreError) {
        conninfo = url
        location = "postgres:" + Self.redacted(url)
        self.key = key
        try locked { () throws(StoreError) in
            try connect()
            try prepare()
        }
    }

    deinit { if let connection { PQfinish(connection) } }

    /// Closes the connection; later calls reconnect.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        if let connection { PQfinish(connection) }
        connection = nil
    }

    /// The URL without its password (in the user part or as a `password` parameter), for messages.
    public static func redacted(_ url: String) -> String {
        var out = url
        if let scheme = out.range(of: "://"), let at = out[scheme.upperBound...].firstIndex(of: "@"),
           let colon = out[scheme.upperBound..<at].firstIndex(of: ":") {
            out = String(out[..<colon]) + ":***" + String(out[at...])
        }
        while let range = out.range(of: "password=", options: .caseInsensitive),
              !out[range.upperBound...].hasPrefix("***") {
            let end = out[range.upperBound...].firstIndex { $0 == "&" || $0 == " " } ?? out.endIndex
            out.replaceSubrange(range.upperBound..<end, with: "***")
        }
        return out
    }

    // MARK: Connection (every libpq call is here)

    /// `PQconnectdb`, or `PQreset` of a connection that broke.
    private func connect() throws(StoreError) {
        if let connection, PQstatus(connection) == CONNECTION_OK { return }
        if let connection {
            PQreset(connection)
            if PQstatus(connection) == CONNECTION_OK { return }
            PQfinish(connection)
            self.connection = nil
        }
        guard let made = PQconnectdb(conninfo) else { throw StoreError("\(location): libpq could not allocate a connection") }
        guard PQstatus(made) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(made)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(made)
            throw StoreError("\(location): cannot connect to the PostgreSQL server (\(message))")
        }
        connection = made
        _ = try run("SET client_min_messages TO warning")
    }

    /// Runs one statement with `$1`, `$2`… bound to `arguments` (`PQexecParams`: blobs as binary
    /// parameters, the rest as text; results as text) and returns its rows and the rows it changed.
    @discardableResult
    private func run(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> (rows: [[SQLValue]], changed: Int) {
        try connect()
        guard let connection else { throw StoreError("\(location): not connected") }
        var texts: [[CChar]?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for argument in arguments {
            switch argument {
            case .null: texts.append(nil); lengths.append(0); formats.append(0)
            case let .integer(v): texts.append(Array(String(v).utf8CString)); lengths.append(0); formats.append(0)
            case let .real(v): texts.append(Array(String(v).utf8CString)); lengths.append(0); formats.append(0)
            case let .text(v): texts.append(Array(v.utf8CString)); lengths.append(0); formats.append(0)
            case let .blob(v): texts.append(v.map { CChar(bitPattern: $0) }); lengths.append(Int32(v.count)); formats.append(1)
            }
        }
        let result: OpaquePointer? = withArrayOfPointers(texts) { values in
            PQexecParams(connection, sql, Int32(arguments.count), nil, values, lengths, formats, 0)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = result.map { String(cString: PQresultErrorMessage($0)) } ?? String(cString: PQerrorMessage(connection))
            throw StoreError("\(location): \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        var rows: [[SQLValue]] = []
        let columns = PQnfields(result)
        for row in 0..<PQntuples(result) {
            var values: [SQLValue] = []
            for column in 0..<columns {
                if PQgetisnull(result, row, column) != 0 { values.append(.null); continue }
                let text = String(cString: PQgetvalue(result, row, column))
                switch PQftype(result, column) {
                case 17: values.append(.blob(Self.bytea(text)))                      // bytea, text form \x…
                case 16: values.append(.integer(text == "t" ? 1 : 0))                // bool
                case 20, 21, 23: values.append(Int64(text).map { .integer($0) } ?? .text(text))
                case 700, 701, 1700: values.append(Double(text).map { .real($0) } ?? .text(text))
                default: values.append(.text(text))
                }
            }
            rows.append(values)
        }
        let changed = Int(String(cString: PQcmdTuples(result))) ?? 0
        return (rows, changed)
    }

    /// `body` in one transaction, rolled back when it throws.
    private func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try run("BEGIN")
        do {
            let value = try body()
            try run("COMMIT")
            return value
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }

    private static func bytea(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8.dropFirst(2))  // "\x"
        var out = [UInt8]()
        out.reserveCapacity(digits.count / 2)
        func value(_ c: UInt8) -> UInt8 { c >= 0x61 ? c - 0x61 + 10 : c >= 0x41 ? c - 0x41 + 10 : c - 0x30 }
        var i = 0
        while i + 1 < digits.count {
            out.append(value(digits[i]) << 4 | value(digits[i + 1]))
            i += 2
        }
        return out
    }

    // MARK: Schema

    private func prepare() throws(StoreError) {
        try transaction { () throws(StoreError) in
            // Two instances starting at once must not both create the tables.
            try run("SELECT pg_advisory_xact_lock(7028)")
            try run("""
                CREATE TABLE IF NOT EXISTS liveness_meta (key TEXT PRIMARY KEY, value BYTEA NOT NULL)
                """)
            try run("""
                CREATE TABLE IF NOT EXISTS liveness_sessions (
                    id TEXT PRIMARY KEY,
                    token_sha256 BYTEA NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('created', 'streaming', 'finished')),
                    policy BYTEA NOT NULL,
                    seed BIGINT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    owner TEXT,
                    claimed_at DOUBLE PRECISION,
                    finished_at DOUBLE PRECISION,
                    status TEXT,
                    reason TEXT,
                    report BYTEA,
                    signature BYTEA,
                    prompt_log BYTEA,
                    prompted INTEGER NOT NULL DEFAULT 0
                )
                """)
            // Schema 2: the webhook outbox (docs/webhooks.md), and the sessions' callback URL.
            try run("ALTER TABLE liveness_sessions ADD COLUMN IF NOT EXISTS callback_url TEXT")
            try run("CREATE INDEX IF NOT EXISTS liveness_sessions_by_state ON liveness_sessions (state, expires_at, finished_at)")
            try run("""
                CREATE TABLE IF NOT EXISTS liveness_stills (
                    session_id TEXT NOT NULL REFERENCES liveness_sessions (id) ON DELETE CASCADE,
                    kind TEXT NOT NULL CHECK (kind IN ('autoshot', 'snapshot')),
                    sealed BYTEA NOT NULL,
                    PRIMARY KEY (session_id, kind)
                )
                """)
            try run("""
                CREATE TABLE IF NOT EXISTS liveness_instances (
                    id TEXT PRIMARY KEY,
                    host TEXT NOT NULL,
                    pid INTEGER NOT NULL,
                    process_start TEXT NOT NULL,
                    heartbeat_at DOUBLE PRECISION NOT NULL
                )
                """)
            try run("""
                CREATE TABLE IF NOT EXISTS liveness_outbox (
                    id TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES liveness_sessions (id) ON DELETE CASCADE,
                    url TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    created_at DOUBLE PRECISION NOT NULL,
                    next_attempt_at DOUBLE PRECISION NOT NULL,
                    lease_owner TEXT,
                    lease_until DOUBLE PRECISION,
                    last_error TEXT,
                    ended_at DOUBLE PRECISION
                )
                """)
            try run("CREATE INDEX IF NOT EXISTS liveness_outbox_due ON liveness_outbox (state, next_attempt_at)")
            try run("CREATE INDEX IF NOT EXISTS liveness_outbox_by_session ON liveness_outbox (session_id)")
            let version = try run("SELECT value FROM liveness_meta WHERE key = 'schema'").rows.first?.first?.blob
                .flatMap { Int64(String(decoding: $0, as: UTF8.self)) }
            if let version, version > SQLiteSessionStore.schemaVersion {
                throw StoreError("\(location): written by a newer version of the engine (store schema \(version); this one knows \(SQLiteSessionStore.schemaVersion))")
            }
            let current = SQLValue.blob(Array(String(SQLiteSessionStore.schemaVersion).utf8))
            if version == nil {
                try run("INSERT INTO liveness_meta (key, value) VALUES ('schema', $1)", [current])
            } else if version != SQLiteSessionStore.schemaVersion {
                try run("UPDATE liveness_meta SET value = $1 WHERE key = 'schema'", [current])
            }
            if let sealed = try run("SELECT value FROM liveness_meta WHERE key = 'key_check'").rows.first?.first?.blob {
                guard key.open(sealed) == StoreFormat.keyCheck else {
                    throw StoreError("\(location): the store key does not open this store (it was created with another key); give the key it was created with")
                }
            } else {
                try run("INSERT INTO liveness_meta (key, value) VALUES ('key_check', $1)", [.blob(key.seal(StoreFormat.keyCheck))])
            }
        }
    }

    // MARK: SessionStore

    public func create(_ session: NewSession) throws(StoreError) {
        try locked { () throws(StoreError) in
            try run("""
                INSERT INTO liveness_sessions (id, token_sha256, state, policy, seed, created_at, expires_at, callback_url)
                VALUES ($1, $2, 'created', $3, $4, $5, $6, $7)
                """, [.text(session.id), .blob(session.tokenSHA256), .blob(session.policy), .integer(Int64(bitPattern: session.seed)),
                      .real(session.createdAt.timeIntervalSince1970), .real(session.expiresAt.timeIntervalSince1970),
                      session.callbackURL.map { .text($0) } ?? .null])
        }
    }

    public func peek(id: String, tokenSHA256: [UInt8], now: Date) throws(StoreError) -> ClaimOutcome {
        try locked { () throws(StoreError) in try classify(id: id, tokenSHA256: tokenSHA256, now: now) }
    }

    public func claim(id: String, tokenSHA256: [UInt8], owner: String, now: Date) throws(StoreError) -> ClaimOutcome {
        try locked { () throws(StoreError) -> ClaimOutcome in
            let changed = try run("""
                UPDATE liveness_sessions SET state = 'streaming', owner = $1, claimed_at = $2
                WHERE id = $3 AND token_sha256 = $4 AND state = 'created' AND expires_at > $5
                """, [.text(owner), .real(now.timeIntervalSince1970), .text(id), .blob(tokenSHA256), .real(now.timeIntervalSince1970)]).changed
            if changed == 1, let session = try fetch(id) { return .claimed(session) }
            let outcome = try classify(id: id, tokenSHA256: tokenSHA256, now: now)
            if case .claimed = outcome { return .alreadyStarted }
            return outcome
        }
    }

    private func classify(id: String, tokenSHA256: [UInt8], now: Date) throws(StoreError) -> ClaimOutcome {
        guard let row = try run("SELECT token_sha256, state, expires_at FROM liveness_sessions WHERE id = $1", [.text(id)]).rows.first,
              let hash = row[0].blob, let state = row[1].text.flatMap(SessionState.init(rawValue:)) else { return .unknown }
        if state == .finished { return .unknown }
        if state == .created && (row[2].real ?? 0) <= now.timeIntervalSince1970 { return .unknown }
        guard StoreFormat.equal(hash, tokenSHA256) else { return .badToken }
        guard state == .created, let session = try fetch(id) else { return .alreadyStarted }
        return .claimed(session)
    }

    public func finish(id: String, owner: String, result: FinishedSession, now: Date) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) -> Bool in
            try transaction { () throws(StoreError) -> Bool in
                let changed = try run("""
                    UPDATE liveness_sessions SET state = 'finished', finished_at = $1, status = $2, reason = $3, report = $4,
                        signature = $5, prompt_log = $6, prompted = $7
                    WHERE id = $8 AND state = 'streaming' AND owner = $9
                    """, [.real(now.timeIntervalSince1970), .text(result.status), result.reason.map { .text($0) } ?? .null,
                          .blob(result.report), result.signature.map { .blob($0) } ?? .null, result.promptLog.map { .blob($0) } ?? .null,
                          .integer(result.prompted ? 1 : 0), .text(id), .text(owner)]).changed
                guard changed == 1 else { return false }
                for (kind, jpeg) in [(StillKind.autoshot, result.autoshot), (.snapshot, result.snapshot)] {
                    guard let jpeg else { continue }
                    try run("INSERT INTO liveness_stills (session_id, kind, sealed) VALUES ($1, $2, $3)",
                            [.text(id), .text(kind.rawValue), .blob(key.seal(StoreFormat.stillHeader(id, kind) + jpeg))])
                }
                // The webhook, queued with the result it sends (nothing without a callback URL).
                try run("""
                    INSERT INTO liveness_outbox (id, session_id, url, state, attempts, created_at, next_attempt_at)
                    SELECT $1, id, callback_url, 'pending', 0, $2, $2 FROM liveness_sessions WHERE id = $3 AND callback_url IS NOT NULL
                    """, [.text(OutboxRules.newID()), .real(now.timeIntervalSince1970), .text(id)])
                return true
            }
        }
    }

    public func session(id: String) throws(StoreError) -> StoredSession? {
        try locked { () throws(StoreError) in try fetch(id) }
    }

    public func still(id: String, kind: StillKind) throws(StoreError) -> [UInt8]? {
        try locked { () throws(StoreError) -> [UInt8]? in
            guard let sealed = try run("SELECT sealed FROM liveness_stills WHERE session_id = $1 AND kind = $2",
                                       [.text(id), .text(kind.rawValue)]).rows.first?.first?.blob else { return nil }
            let header = StoreFormat.stillHeader(id, kind)
            guard let plain = key.open(sealed), plain.count >= header.count, Array(plain[0..<header.count]) == header else {
                throw StoreError("\(location): the \(kind.rawValue) of session \(id) does not open with the store key (changed or moved)")
            }
            return Array(plain[header.count...])
        }
    }

    public func erase(id: String) throws(StoreError) -> SessionState? {
        try locked { () throws(StoreError) -> SessionState? in
            try transaction { () throws(StoreError) -> SessionState? in
                guard let state = try run("SELECT state FROM liveness_sessions WHERE id = $1 FOR UPDATE", [.text(id)]).rows.first?.first?.text
                    .flatMap(SessionState.init(rawValue:)) else { return nil }
                try run("DELETE FROM liveness_stills WHERE session_id = $1", [.text(id)])
                try run("DELETE FROM liveness_outbox WHERE session_id = $1", [.text(id)])
                try run("DELETE FROM liveness_sessions WHERE id = $1", [.text(id)])
                return state
            }
        }
    }

    public func sweep(now: Date, retentionSeconds: Double) throws(StoreError) -> SweepResult {
        try locked { () throws(StoreError) -> SweepResult in
            let t = now.timeIntervalSince1970
            return try transaction { () throws(StoreError) -> SweepResult in
                // A finished session whose delivery is still pending stays (the delivery sends its
                // report), for at most OutboxRules.maximumAgeSeconds.
                let oldest = SQLValue.real(t - OutboxRules.maximumAgeSeconds)
                try run("""
                    DELETE FROM liveness_stills WHERE session_id IN (SELECT id FROM liveness_sessions
                        WHERE (state = 'finished' AND finished_at < $1
                               AND id NOT IN (SELECT session_id FROM liveness_outbox WHERE state = 'pending' AND created_at > $3))
                           OR (state = 'created' AND expires_at <= $2))
                    """, [.real(t - retentionSeconds), .real(t), oldest])
                let retained = try run("""
                    DELETE FROM liveness_sessions WHERE state = 'finished' AND finished_at < $1
                        AND id NOT IN (SELECT session_id FROM liveness_outbox WHERE state = 'pending' AND created_at > $2)
                    """, [.real(t - retentionSeconds), oldest]).changed
                let expired = try run("DELETE FROM liveness_sessions WHERE state = 'created' AND expires_at <= $1", [.real(t)]).changed
                try run("""
                    DELETE FROM liveness_instances WHERE heartbeat_at < $1
                        AND id NOT IN (SELECT owner FROM liveness_sessions WHERE state = 'streaming' AND owner IS NOT NULL)
                    """, [.real(t - 86400)])
                return SweepResult(retained: retained, expired: expired)
            }
        }
    }

    public func heartbeat(_ instance: InstanceRecord, now: Date) throws(StoreError) {
        try locked { () throws(StoreError) in
            try run("""
                INSERT INTO liveness_instances (id, host, pid, process_start, heartbeat_at) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                """, [.text(instance.id), .text(instance.host), .integer(Int64(instance.pid)), .text(instance.processStart),
                      .real(now.timeIntervalSince1970)])
        }
    }

    public func removeInstance(id: String) throws(StoreError) {
        try locked { () throws(StoreError) in try run("DELETE FROM liveness_instances WHERE id = $1", [.text(id)]) }
    }

    public func orphans(except: String, now: Date, staleAfterSeconds: Double) throws(StoreError) -> [StoredSession] {
        try locked { () throws(StoreError) -> [StoredSession] in
            let rows = try run("""
                SELECT s.id, s.owner, i.id, i.host, i.pid, i.process_start, i.heartbeat_at
                FROM liveness_sessions s LEFT JOIN liveness_instances i ON i.id = s.owner
                WHERE s.state = 'streaming' AND s.owner IS DISTINCT FROM $1 ORDER BY s.claimed_at
                """, [.text(except)]).rows
            var out: [StoredSession] = []
            for row in rows {
                guard let id = row[0].text else { continue }
                let gone: Bool
                if let instance = row[2].text {
                    let record = InstanceRecord(id: instance, host: row[3].text ?? "", pid: Int32(truncatingIfNeeded: row[4].integer ?? 0),
                                                processStart: row[5].text ?? "", heartbeatAt: row[6].real ?? 0)
                    gone = record.isGone(now: now, staleAfterSeconds: staleAfterSeconds)
                } else {
                    gone = true
                }
                if gone, let session = try fetch(id) { out.append(session) }
            }
            return out
        }
    }

    public func check() throws(StoreError) {
        try locked { () throws(StoreError) in try run("SELECT 1 FROM liveness_meta LIMIT 1") }
    }

    // MARK: DeliveryOutbox

    public func leaseDeliveries(owner: String, now: Date, leaseSeconds: Double, limit: Int) throws(StoreError) -> [Delivery] {
        try locked { () throws(StoreError) -> [Delivery] in
            let t = now.timeIntervalSince1970
            // One statement: the rows are locked as they are picked, and rows another instance is
            // leasing at this moment are skipped, not waited for; a row's lease is one instance's.
            let ids = try run("""
                UPDATE liveness_outbox SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
                WHERE id IN (SELECT id FROM liveness_outbox WHERE state = 'pending' AND next_attempt_at <= $3
                             AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_attempt_at LIMIT $4
                             FOR UPDATE SKIP LOCKED)
                RETURNING id
                """, [.text(owner), .real(t + leaseSeconds), .real(t), .integer(Int64(max(0, limit)))]).rows.compactMap { $0.first?.text }
            var out: [Delivery] = []
            for id in ids {
                guard let row = try run("""
                    SELECT o.id, o.session_id, o.url, o.attempts, o.created_at, s.report, s.signature
                    FROM liveness_outbox o JOIN liveness_sessions s ON s.id = o.session_id WHERE o.id = $1
                    """, [.text(id)]).rows.first, let delivery = OutboxRules.delivery(from: row) else { continue }
                out.append(delivery)
            }
            return out.sorted { $0.createdAt < $1.createdAt }
        }
    }

    public func deliveryDelivered(id: String, owner: String, now: Date) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) -> Bool in
            try run("""
                UPDATE liveness_outbox SET state = 'delivered', ended_at = $1, lease_owner = NULL, lease_until = NULL, last_error = NULL
                WHERE id = $2 AND lease_owner = $3 AND state = 'pending'
                """, [.real(now.timeIntervalSince1970), .text(id), .text(owner)]).changed == 1
        }
    }

    public func deliveryFailed(id: String, owner: String, error: String, retryAt: Date?, now: Date) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) -> Bool in
            try run("""
                UPDATE liveness_outbox SET state = $1, next_attempt_at = $2, ended_at = $3, last_error = $4, lease_owner = NULL,
                    lease_until = NULL
                WHERE id = $5 AND lease_owner = $6 AND state = 'pending'
                """, [.text(retryAt == nil ? "dead" : "pending"), .real((retryAt ?? now).timeIntervalSince1970),
                      retryAt == nil ? .real(now.timeIntervalSince1970) : .null, .text(String(error.prefix(500))), .text(id),
                      .text(owner)]).changed == 1
        }
    }

    public func outboxStatus() throws(StoreError) -> OutboxStatus {
        try locked { () throws(StoreError) -> OutboxStatus in
            let row = try run("""
                SELECT count(*) FILTER (WHERE state = 'pending'), min(created_at) FILTER (WHERE state = 'pending'),
                    count(*) FILTER (WHERE state = 'dead') FROM liveness_outbox
                """).rows.first ?? []
            return OutboxStatus(pending: Int(row.first?.integer ?? 0), oldestPending: row.count > 1 ? row[1].real.map(Date.init(timeIntervalSince1970:)) : nil,
                                dead: Int(row.count > 2 ? row[2].integer ?? 0 : 0))
        }
    }

    // MARK: Helpers

    @discardableResult
    private func locked<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func fetch(_ id: String) throws(StoreError) -> StoredSession? {
        guard let row = try run("""
            SELECT id, state, policy, seed, created_at, expires_at, owner, finished_at, status, reason, report, signature,
                prompt_log, prompted,
                (SELECT string_agg(kind, ',') FROM liveness_stills WHERE session_id = liveness_sessions.id),
                (SELECT state FROM liveness_outbox WHERE session_id = liveness_sessions.id ORDER BY created_at DESC LIMIT 1),
                (SELECT attempts FROM liveness_outbox WHERE session_id = liveness_sessions.id ORDER BY created_at DESC LIMIT 1)
            FROM liveness_sessions WHERE id = $1
            """, [.text(id)]).rows.first else { return nil }
        return StoreFormat.session(from: row, id: id)
    }
}

/// Calls `body` with C pointers to each array's bytes (nil for a nil entry), valid during the call.
private func withArrayOfPointers<R>(_ arrays: [[CChar]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = []
    defer { for p in pointers { p?.deallocate() } }
    for array in arrays {
        guard let array else { pointers.append(nil); continue }
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, array.count))
        p.initialize(from: array, count: array.count)
        pointers.append(p)
    }
    return body(pointers.map { $0.map { UnsafePointer($0) } })
}
