import CSQLite

/// A value bound to or read from an SQL statement.
enum SQLValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    var integer: Int64? { if case let .integer(v) = self { return v } else { return nil } }
    var real: Double? {
        switch self {
        case let .real(v): return v
        case let .integer(v): return Double(v)
        default: return nil
        }
    }
    var text: String? { if case let .text(v) = self { return v } else { return nil } }
    var blob: [UInt8]? {
        switch self {
        case let .blob(v): return v
        case let .text(v): return Array(v.utf8)
        default: return nil
        }
    }
}

/// One SQLite connection: the only type that calls SQLite (`sqlite3_*` of Debian's libsqlite3).
/// A failed call becomes a `StoreError` here, with SQLite's own message (`sqlite3_errmsg`) and
/// result code. Not thread-safe: its owner serialises calls (`SQLiteSessionStore` holds a lock).
final class SQLiteConnection {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// The database file.
    let path: String

    /// Opens `path` read-write (`sqlite3_open_v2`, never creating it: the store creates the file
    /// itself with mode 0600) and sets a busy timeout (`sqlite3_busy_timeout`) for other processes
    /// that hold the write lock.
    init(path: String, busyTimeoutMilliseconds: Int32 = 5000) throws(StoreError) {
        self.path = path
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close(db)
            throw StoreError("\(path): cannot open the database: \(message)", code: status)
        }
        handle = db
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Finalises every statement and closes the connection (`sqlite3_close_v2`). Idempotent.
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs SQL text without results, possibly several statements (`sqlite3_exec`).
    func execute(_ sql: String) throws(StoreError) {
        guard let handle else { throw StoreError("\(path): the database is closed") }
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw StoreError("\(path): \(text)", code: status)
        }
    }

    /// Runs one statement with `arguments` bound to its `?` parameters and returns its rows
    /// (`sqlite3_prepare_v3` once per SQL text, then `sqlite3_bind_*`, `sqlite3_step`,
    /// `sqlite3_column_*`, `sqlite3_reset`).
    @discardableResult
    func query(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> [[SQLValue]] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            switch argument {
            case .null: status = sqlite3_bind_null(statement, position)
            case let .integer(v): status = sqlite3_bind_int64(statement, position, v)
            case let .real(v): status = sqlite3_bind_double(statement, position, v)
            case let .text(v): status = sqlite3_bind_text(statement, position, v, -1, lss_transient())
            case let .blob(v):
                status = v.withUnsafeBytes { raw in
                    sqlite3_bind_blob64(statement, position, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(raw.count), lss_transient())
                }
            }
            guard status == SQLITE_OK else { throw failure(status) }
        }
        var rows: [[SQLValue]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw failure(status) }
            let count = sqlite3_column_count(statement)
            var row: [SQLValue] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let length = Int(sqlite3_column_bytes(statement, column))
                    if length == 0 {
                        row.append(.blob([]))
                    } else {
                        let base = sqlite3_column_blob(statement, column)!
                        row.append(.blob(Array(UnsafeRawBufferPointer(start: base, count: length))))
                    }
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE (`sqlite3_changes`).
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`: the write lock is taken first, so
    /// two processes never both read and then write); rolled back when `body` throws.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func prepared(_ sql: String) throws(StoreError) -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        guard let handle else { throw StoreError("\(path): the database is closed") }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(status) }
        statements[sql] = statement
        return statement
    }

    private func failure(_ status: Int32) -> StoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
        return StoreError("\(path): \(message)", code: status)
    }

    /// The SQLite library's version (`sqlite3_libversion`).
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
