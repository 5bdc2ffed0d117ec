import CSQLite
import Foundation
import LivenessEvidence

#if canImport(Glibc)
import Glibc
#endif

/// The SQLite backend of `SessionStore`: one file, `DIR/liveness.db` (with its `-wal` and `-shm`
/// companions), in WAL mode so that readers never wait for the writer and several processes on
/// one machine can share it (docs/store.md).
///
/// * Commits are durable (`synchronous=FULL`: a finished result survives a crash and a power
///   loss once `finish` returns), deleted content is overwritten (`secure_delete`), and an erasure
///   truncates the write-ahead log (`wal_checkpoint(TRUNCATE)`).
/// * Stills are sealed with the `StoreKey` (libsodium secretbox) and bound to their session and
///   kind; reports, signatures and prompt logs are kept in clear.
/// * The file is created with mode 0600 in a folder created with mode 0700.
///
/// One connection, serialised by a lock: calls from the event loop and the workers take turns.
public final class SQLiteSessionStore: SessionStore, @unchecked Sendable {
    /// The database's file name in the data folder.
    public static let fileName = "liveness.db"
    /// The schema this code writes; a store written by a newer schema is refused, an older one
    /// is brought up to date at start (2: the webhook outbox and `sessions.callback_url`).
    public static let schemaVersion: Int64 = 2

    public let location: String
    /// The database file.
    public let path: String
    private let connection: SQLiteConnection
    private let key: StoreKey
    private let lock = NSLock()
    /// The file's device and inode when opened: `check` notices a file removed or replaced.
    private let identity: (dev_t, ino_t)

    /// Opens (or creates) the store in `directory` with `key`.
    /// - Throws: a folder that cannot be made or is not a folder, a database file that is not a
    ///   SQLite database, is damaged, cannot be written, was written by a newer version, or was
    ///   created with another key — each as a sentence naming the file and what to do.
    public init(directory: String, key: StoreKey) throws(StoreError) {
        try Self.makeFolder(directory)
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        path = base + "/" + Self.fileName
        location = "sqlite:" + path
        self.key = key
        var info = stat()
        if lstat(path, &info) != 0 {
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw StoreError("\(path): cannot create the database: \(String(cString: strerror(errno)))") }
            fchmod(fd, 0o600)
            Glibc.close(fd)
            _ = lstat(path, &info)
        } else if info.st_mode & S_IFMT != S_IFREG {
            throw StoreError("\(path): is not a regular file (the store's database must be one)")
        }
        if access(path, R_OK | W_OK) != 0 {
            throw StoreError("\(path): cannot be written (\(String(cString: strerror(errno)))); the service needs to read and write its store")
        }
        identity = (info.st_dev, info.st_ino)
        do {
            connection = try SQLiteConnection(path: path)
            try Self.prepare(connection, key: key)
        } catch {
            throw Self.explained(error, path: path)
        }
    }

    deinit { connection.close() }

    /// Closes the connection; later calls fail.
    public func close() { locked { connection.close() } }

    // MARK: Opening

    private static func makeFolder(_ directory: String) throws(StoreError) {
        guard !directory.isEmpty else { throw StoreError("--data-dir is empty") }
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for part in directory.split(separator: "/") {
            prefix += part + "/"
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw StoreError("\(directory): cannot create the data folder: \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw StoreError("\(directory): is not a folder (--data-dir names the folder that holds \(fileName))")
        }
    }

    /// WAL mode, the integrity check, the settings, the schema and the key check.
    private static func prepare(_ connection: SQLiteConnection, key: StoreKey) throws(StoreError) {
        let mode = try connection.query("PRAGMA journal_mode=WAL").first?.first?.text
        guard mode == "wal" else { throw StoreError("\(connection.path): cannot use write-ahead logging (journal mode \(mode ?? "unknown"))") }
        let check = try connection.query("PRAGMA quick_check").compactMap { $0.first?.text }
        guard check == ["ok"] else {
            throw StoreError("\(connection.path): the database is damaged (\(check.prefix(3).joined(separator: "; "))); move it aside to start with an empty store, or restore it from a backup",
                             code: SQLITE_CORRUPT)
        }
        try connection.execute("PRAGMA synchronous=FULL; PRAGMA secure_delete=ON; PRAGMA foreign_keys=ON")
        try connection.transaction { () throws(StoreError) in
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS sessions (
                    id TEXT PRIMARY KEY,
                    token_sha256 BLOB NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('created', 'streaming', 'finished')),
                    policy BLOB NOT NULL,
                    seed INTEGER NOT NULL,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    owner TEXT,
                    claimed_at REAL,
                    finished_at REAL,
                    status TEXT,
                    reason TEXT,
                    report BLOB,
                    signature BLOB,
                    prompt_log BLOB,
                    prompted INTEGER NOT NULL DEFAULT 0,
                    callback_url TEXT
                );
                CREATE INDEX IF NOT EXISTS sessions_by_state ON sessions (state, expires_at, finished_at);
                CREATE TABLE IF NOT EXISTS stills (
                    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                    kind TEXT NOT NULL CHECK (kind IN ('autoshot', 'snapshot')),
                    sealed BLOB NOT NULL,
                    PRIMARY KEY (session_id, kind)
                );
                CREATE TABLE IF NOT EXISTS instances (
                    id TEXT PRIMARY KEY,
                    host TEXT NOT NULL,
                    pid INTEGER NOT NULL,
                    process_start TEXT NOT NULL,
                    heartbeat_at REAL NOT NULL
                );
                """)
            let version = try connection.query("SELECT value FROM meta WHERE key = 'schema'").first?.first?.integer
            if let version, version > schemaVersion {
                throw StoreError("\(connection.path): written by a newer version of the engine (store schema \(version); this one knows \(schemaVersion))")
            }
            // Schema 1 (before webhooks): its sessions gain a callback URL.
            let columns = try connection.query("PRAGMA table_info(sessions)").compactMap { $0.count > 1 ? $0[1].text : nil }
            if !columns.contains("callback_url") { try connection.execute("ALTER TABLE sessions ADD COLUMN callback_url TEXT") }
            try connection.execute(Self.outboxSchema)
            if version == nil {
                try connection.query("INSERT INTO meta (key, value) VALUES ('schema', ?)", [.integer(schemaVersion)])
            } else if version != schemaVersion {
                try connection.query("UPDATE meta SET value = ? WHERE key = 'schema'", [.integer(schemaVersion)])
            }
            // A sealed constant: a restart with another key fails here, not at the first still.
            if let sealed = try connection.query("SELECT value FROM meta WHERE key = 'key_check'").first?.first?.blob {
                guard key.open(sealed) == StoreFormat.keyCheck else {
                    throw StoreError("\(connection.path): the store key does not open this store (it was created with another key); give the key it was created with")
                }
            } else {
                try connection.query("INSERT INTO meta (key, value) VALUES ('key_check', ?)", [.blob(key.seal(StoreFormat.keyCheck))])
            }
        }
    }

    /// The webhook outbox (schema 2): one row per delivery, deleted with its session.
    static let outboxSchema = """
        CREATE TABLE IF NOT EXISTS outbox (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            url TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
            attempts INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            next_attempt_at REAL NOT NULL,
            lease_owner TEXT,
            lease_until REAL,
            last_error TEXT,
            ended_at REAL
        );
        CREATE INDEX IF NOT EXISTS outbox_due ON outbox (state, next_attempt_at);
        CREATE INDEX IF NOT EXISTS outbox_by_session ON outbox (session_id);
        """

    /// SQLite's result codes said as what they mean for the operator.
    private static func explained(_ error: StoreError, path: String) -> StoreError {
        switch (error.code ?? 0) & 0xFF {
        case SQLITE_NOTADB:
            return StoreError("\(path): is not a SQLite database (\(error.message.replacingOccurrences(of: "\(path): ", with: ""))); move it aside to start with an empty store, or restore it from a backup",
                              code: error.code)
        case SQLITE_CORRUPT:
            return error.message.contains("damaged") ? error
                : StoreError("\(path): the database is damaged (\(error.message.replacingOccurrences(of: "\(path): ", with: ""))); move it aside to start with an empty store, or restore it from a backup",
                             code: error.code)
        case SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_IOERR, SQLITE_FULL:
            return StoreError("\(path): cannot be written (\(error.message.replacingOccurrences(of: "\(path): ", with: ""))); the service needs to read and write its store",
                              code: error.code)
        default:
            return error
        }
    }

    // MARK: SessionStore

    public func create(_ session: NewSession) throws(StoreError) {
        try locked { () throws(StoreError) in
            try connection.query("""
                INSERT INTO sessions (id, token_sha256, state, policy, seed, created_at, expires_at, callback_url)
                VALUES (?, ?, 'created', ?, ?, ?, ?, ?)
                """, [.text(session.id), .blob(session.tokenSHA256), .blob(session.policy), .integer(Int64(bitPattern: session.seed)),
                      .real(session.createdAt.timeIntervalSince1970), .real(session.expiresAt.timeIntervalSince1970),
                      session.callbackURL.map { .text($0) } ?? .null])
        }
    }

    public func peek(id: String, tokenSHA256: [UInt8], now: Date) throws(StoreError) -> ClaimOutcome {
        try locked { () throws(StoreError) in try classify(id: id, tokenSHA256: tokenSHA256, now: now) }
    }

    public func claim(id: String, tokenSHA256: [UInt8], owner: String, now: Date) throws(StoreError) -> ClaimOutcome {
        try locked { () throws(StoreError) in
            // The single use: one statement, so of two claims anywhere only one changes the row.
            try connection.query("""
                UPDATE sessions SET state = 'streaming', owner = ?, claimed_at = ?
                WHERE id = ? AND token_sha256 = ? AND state = 'created' AND expires_at > ?
                """, [.text(owner), .real(now.timeIntervalSince1970), .text(id), .blob(tokenSHA256), .real(now.timeIntervalSince1970)])
            if connection.changes == 1, let session = try fetch(id) { return .claimed(session) }
            let outcome = try classify(id: id, tokenSHA256: tokenSHA256, now: now)
            // Not ours: a peek would say "claimed" only if nothing changed in between; it did.
            if case .claimed = outcome { return .alreadyStarted }
            return outcome
        }
    }

    /// What a token would get for session `id`, in the order the in-memory host answers: an
    /// unknown, expired or finished session; a wrong token; a spent token.
    private func classify(id: String, tokenSHA256: [UInt8], now: Date) throws(StoreError) -> ClaimOutcome {
        guard let row = try connection.query("SELECT token_sha256, state, expires_at FROM sessions WHERE id = ?", [.text(id)]).first,
              let hash = row[0].blob, let state = row[1].text.flatMap(SessionState.init(rawValue:)) else { return .unknown }
        if state == .finished { return .unknown }
        if state == .created && (row[2].real ?? 0) <= now.timeIntervalSince1970 { return .unknown }
        guard StoreFormat.equal(hash, tokenSHA256) else { return .badToken }
        guard state == .created, let session = try fetch(id) else { return .alreadyStarted }
        return .claimed(session)
    }

    public func finish(id: String, owner: String, result: FinishedSession, now: Date) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> Bool in
                try connection.query("""
                    UPDATE sessions SET state = 'finished', finished_at = ?, status = ?, reason = ?, report = ?, signature = ?,
                        prompt_log = ?, prompted = ?
                    WHERE id = ? AND state = 'streaming' AND owner = ?
                    """, [.real(now.timeIntervalSince1970), .text(result.status), result.reason.map { .text($0) } ?? .null,
                          .blob(result.report), result.signature.map { .blob($0) } ?? .null, result.promptLog.map { .blob($0) } ?? .null,
                          .integer(result.prompted ? 1 : 0), .text(id), .text(owner)])
                guard connection.changes == 1 else { return false }
                for (kind, jpeg) in [(StillKind.autoshot, result.autoshot), (.snapshot, result.snapshot)] {
                    guard let jpeg else { continue }
                    try connection.query("INSERT INTO stills (session_id, kind, sealed) VALUES (?, ?, ?)",
                                         [.text(id), .text(kind.rawValue), .blob(key.seal(StoreFormat.stillHeader(id, kind) + jpeg))])
                }
                // The webhook, queued with the result it sends (nothing without a callback URL).
                try connection.query("""
                    INSERT INTO outbox (id, session_id, url, state, attempts, created_at, next_attempt_at)
                    SELECT ?, id, callback_url, 'pending', 0, ?, ? FROM sessions WHERE id = ? AND callback_url IS NOT NULL
                    """, [.text(OutboxRules.newID()), .real(now.timeIntervalSince1970), .real(now.timeIntervalSince1970), .text(id)])
                return true
            }
        }
    }

    public func session(id: String) throws(StoreError) -> StoredSession? {
        try locked { () throws(StoreError) in try fetch(id) }
    }

    public func still(id: String, kind: StillKind) throws(StoreError) -> [UInt8]? {
        try locked { () throws(StoreError) -> [UInt8]? in
            guard let sealed = try connection.query("SELECT sealed FROM stills WHERE session_id = ? AND kind = ?",
                                                    [.text(id), .text(kind.rawValue)]).first?.first?.blob else { return nil }
            let header = StoreFormat.stillHeader(id, kind)
            // Opened with this store's key, and bound to this session and kind: a sealed still
            // copied into another row does not open as that row's.
            guard let plain = key.open(sealed), plain.count >= header.count, Array(plain[0..<header.count]) == header else {
                throw StoreError("\(path): the \(kind.rawValue) of session \(id) does not open with the store key (changed or moved)")
            }
            return Array(plain[header.count...])
        }
    }

    public func erase(id: String) throws(StoreError) -> SessionState? {
        try locked { () throws(StoreError) -> SessionState? in
            let state = try connection.transaction { () throws(StoreError) -> SessionState? in
                guard let state = try connection.query("SELECT state FROM sessions WHERE id = ?", [.text(id)]).first?.first?.text
                    .flatMap(SessionState.init(rawValue:)) else { return nil }
                try connection.query("DELETE FROM stills WHERE session_id = ?", [.text(id)])
                try connection.query("DELETE FROM outbox WHERE session_id = ?", [.text(id)])
                try connection.query("DELETE FROM sessions WHERE id = ?", [.text(id)])
                return state
            }
            // secure_delete zeroed the freed content in the pages; the log still holds the old
            // pages until it is checkpointed and truncated (skipped, not failed, while readers
            // of other processes hold it: the next erasure or sweep truncates it).
            if state != nil { _ = try? connection.query("PRAGMA wal_checkpoint(TRUNCATE)") }
            return state
        }
    }

    public func sweep(now: Date, retentionSeconds: Double) throws(StoreError) -> SweepResult {
        try locked { () throws(StoreError) -> SweepResult in
            let t = now.timeIntervalSince1970
            let result = try connection.transaction { () throws(StoreError) -> SweepResult in
                // A finished session whose delivery is still pending stays (the delivery sends its
                // report), for at most OutboxRules.maximumAgeSeconds.
                let held = "id NOT IN (SELECT session_id FROM outbox WHERE state = 'pending' AND created_at > ?)"
                let oldest = SQLValue.real(t - OutboxRules.maximumAgeSeconds)
                try connection.query("""
                    DELETE FROM stills WHERE session_id IN (SELECT id FROM sessions
                        WHERE (state = 'finished' AND finished_at < ? AND \(held)) OR (state = 'created' AND expires_at <= ?))
                    """, [.real(t - retentionSeconds), oldest, .real(t)])
                try connection.query("DELETE FROM sessions WHERE state = 'finished' AND finished_at < ? AND \(held)",
                                     [.real(t - retentionSeconds), oldest])
                let retained = connection.changes
                try connection.query("DELETE FROM sessions WHERE state = 'created' AND expires_at <= ?", [.real(t)])
                let expired = connection.changes
                try connection.query("""
                    DELETE FROM instances WHERE heartbeat_at < ?
                        AND id NOT IN (SELECT owner FROM sessions WHERE state = 'streaming' AND owner IS NOT NULL)
                    """, [.real(t - 86400)])
                return SweepResult(retained: retained, expired: expired)
            }
            if result.retained + result.expired > 0 { _ = try? connection.query("PRAGMA wal_checkpoint(TRUNCATE)") }
            return result
        }
    }

    public func heartbeat(_ instance: InstanceRecord, now: Date) throws(StoreError) {
        try locked { () throws(StoreError) in
            try connection.query("""
                INSERT INTO instances (id, host, pid, process_start, heartbeat_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                """, [.text(instance.id), .text(instance.host), .integer(Int64(instance.pid)), .text(instance.processStart),
                      .real(now.timeIntervalSince1970)])
        }
    }

    public func removeInstance(id: String) throws(StoreError) {
        try locked { () throws(StoreError) in try connection.query("DELETE FROM instances WHERE id = ?", [.text(id)]) }
    }

    public func orphans(except: String, now: Date, staleAfterSeconds: Double) throws(StoreError) -> [StoredSession] {
        try locked { () throws(StoreError) -> [StoredSession] in
            let rows = try connection.query("""
                SELECT s.id, s.owner, i.id, i.host, i.pid, i.process_start, i.heartbeat_at
                FROM sessions s LEFT JOIN instances i ON i.id = s.owner
                WHERE s.state = 'streaming' AND s.owner IS NOT ? ORDER BY s.claimed_at
                """, [.text(except)])
            var out: [StoredSession] = []
            for row in rows {
                guard let id = row[0].text else { continue }
                let gone: Bool
                if let instance = row[2].text {
                    let record = InstanceRecord(id: instance, host: row[3].text ?? "", pid: Int32(truncatingIfNeeded: row[4].integer ?? 0),
                                                processStart: row[5].text ?? "", heartbeatAt: row[6].real ?? 0)
                    gone = record.isGone(now: now, staleAfterSeconds: staleAfterSeconds)
                } else {
                    gone = true  // its instance stopped, or never recorded itself
                }
                if gone, let session = try fetch(id) { out.append(session) }
            }
            return out
        }
    }

    public func check() throws(StoreError) {
        try locked { () throws(StoreError) in
            var info = stat()
            guard stat(path, &info) == 0, info.st_dev == identity.0, info.st_ino == identity.1 else {
                throw StoreError("\(path): the database file was removed or replaced while the service ran")
            }
            _ = try connection.query("SELECT count(*) FROM meta")
        }
    }

    // MARK: DeliveryOutbox

    public func leaseDeliveries(owner: String, now: Date, leaseSeconds: Double, limit: Int) throws(StoreError) -> [Delivery] {
        try locked { () throws(StoreError) -> [Delivery] in
            try connection.transaction { () throws(StoreError) -> [Delivery] in
                let t = now.timeIntervalSince1970
                // One statement under the write lock: a delivery is leased to one instance at a time.
                let ids = try connection.query("""
                    UPDATE outbox SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
                    WHERE id IN (SELECT id FROM outbox WHERE state = 'pending' AND next_attempt_at <= ?
                                 AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at LIMIT ?)
                    RETURNING id
                    """, [.text(owner), .real(t + leaseSeconds), .real(t), .real(t), .integer(Int64(max(0, limit)))]).compactMap { $0.first?.text }
                var out: [Delivery] = []
                for id in ids {
                    guard let row = try connection.query("""
                        SELECT o.id, o.session_id, o.url, o.attempts, o.created_at, s.report, s.signature
                        FROM outbox o JOIN sessions s ON s.id = o.session_id WHERE o.id = ?
                        """, [.text(id)]).first, let delivery = OutboxRules.delivery(from: row) else { continue }
                    out.append(delivery)
                }
                return out.sorted { $0.createdAt < $1.createdAt }
            }
        }
    }

    public func deliveryDelivered(id: String, owner: String, now: Date) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) -> Bool in
            try connection.query("""
                UPDATE outbox SET state = 'delivered', ended_at = ?, lease_owner = NULL, lease_until = NULL, last_error = NULL
                WHERE id = ? AND lease_owner = ? AND state = 'pending'
                """, [.real(now.timeIntervalSince1970), .text(id), .text(owner)])
            return connection.changes == 1
        }
    }

    public func deliveryFailed(id: String, owner: String, error: String, retryAt: Date?, now: Date) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) -> Bool in
            try connection.query("""
                UPDATE outbox SET state = ?, next_attempt_at = ?, ended_at = ?, last_error = ?, lease_owner = NULL, lease_until = NULL
                WHERE id = ? AND lease_owner = ? AND state = 'pending'
                """, [.text(retryAt == nil ? "dead" : "pending"), .real((retryAt ?? now).timeIntervalSince1970),
                      retryAt == nil ? .real(now.timeIntervalSince1970) : .null, .text(String(error.prefix(500))), .text(id), .text(owner)])
            return connection.changes == 1
        }
    }

    public func outboxStatus() throws(StoreError) -> OutboxStatus {
        try locked { () throws(StoreError) -> OutboxStatus in
            let row = try connection.query("""
                SELECT count(*) FILTER (WHERE state = 'pending'), min(created_at) FILTER (WHERE state = 'pending'),
                    count(*) FILTER (WHERE state = 'dead') FROM outbox
                """).first ?? []
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

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func fetch(_ id: String) throws(StoreError) -> StoredSession? {
        guard let row = try connection.query("""
            SELECT id, state, policy, seed, created_at, expires_at, owner, finished_at, status, reason, report, signature,
                prompt_log, prompted, (SELECT group_concat(kind) FROM stills WHERE session_id = sessions.id),
                (SELECT state FROM outbox WHERE session_id = sessions.id ORDER BY created_at DESC LIMIT 1),
                (SELECT attempts FROM outbox WHERE session_id = sessions.id ORDER BY created_at DESC LIMIT 1)
            FROM sessions WHERE id = ?
            """, [.text(id)]).first else { return nil }
        return StoreFormat.session(from: row, id: id)
    }
}
