internal import CSQLite3
import Glibc

/// One connection to an SQLite database file. Closed when the last reference goes (after the
/// last `Statement` prepared on it).
///
/// Not `Sendable`: a connection is used by one thread at a time (it is opened with
/// `SQLITE_OPEN_NOMUTEX`, so SQLite does no locking of its own). Callers that share one put it
/// behind a `Mutex`; for concurrency, open one connection per thread (WAL mode lets readers run
/// alongside the one writer).
///
/// SQL text must not contain values: bind them. Error messages quote the SQL text but never
/// bound values, and the statement cache is keyed by the SQL text.
public final class Database {
    /// How to open the file.
    public enum Mode: Sendable {
        /// Read and write; the file is created if missing.
        case readWrite
        /// Read only; the file must exist. Writes fail with `SQLiteError.isReadOnly`.
        case readOnly
    }

    let connection: Connection
    private var statementCache: [String: Statement] = [:]

    /// Past this many distinct cached SQL texts the cache is emptied: the application's SQL is a
    /// fixed set far smaller, so reaching it means SQL is being built from values, and the cache
    /// must not grow without bound because of it.
    private static let statementCacheLimit = 256

    /// SQLite's memory statistics, which nothing here reads, take one process-wide mutex around
    /// every allocation and free, on every connection's thread (Debian's build has no lookaside:
    /// a step allocates several times). Off before the first connection opens: SQLite takes the
    /// setting only before it starts (later it answers SQLITE_MISUSE, and keeps them).
    private static let memoryStatisticsOff: Void = { _ = CSQLite3_disableMemoryStatistics() }()

    /// The path the database was opened with.
    public let path: String

    /// Opens (in `.readWrite` mode, creating if missing) the database at `path`.
    ///
    /// - Parameter busyTimeoutMilliseconds: how long a statement waits for another connection's
    ///   lock before failing with `SQLiteError.isBusy`.
    public init(path: String, mode: Mode = .readWrite, busyTimeoutMilliseconds: Int32 = 5000) throws(SQLiteError) {
        _ = Self.memoryStatisticsOff
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        var handle: OpaquePointer?
        let resultCode = sqlite3_open_v2(path, &handle, flags, nil)
        guard resultCode == SQLITE_OK, let handle else {
            // On failure SQLite usually still returns a handle, carrying the message; it must be closed.
            var message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(resultCode))
            // SQLite says only "unable to open database file": the system's reason says what to fix
            // (no such directory, permission denied).
            if let handle, case let code = sqlite3_system_errno(handle), code != 0 {
                message += " (\(String(cString: strerror(code))))"
            }
            sqlite3_close_v2(handle)
            throw SQLiteError(code: resultCode, message: "\(message), opening \(path)")
        }
        connection = Connection(handle: handle)
        self.path = path
        // SQLITE_OPEN_EXRESCODE covers the open; this covers every later call on the connection.
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    // MARK: Statements

    /// Runs one or more `;`-separated statements that take no parameters (schema, pragmas).
    /// Rows they return are discarded. Stops at the first failing statement.
    public func execute(_ sql: String) throws(SQLiteError) {
        let failure: SQLiteError? = sql.withCString { start in
            var next = start
            while next.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let prepared = sqlite3_prepare_v2(connection.handle, next, -1, &statement, &tail)
                guard prepared == SQLITE_OK else {
                    return connection.error(prepared, "in \"\(Connection.excerpt(String(cString: next)))\"")
                }
                // No statement: only whitespace or comments were left.
                guard let statement else { break }
                defer { sqlite3_finalize(statement) }
                var stepped: Int32
                repeat { stepped = sqlite3_step(statement) } while stepped == SQLITE_ROW
                guard stepped == SQLITE_DONE else {
                    return connection.error(stepped, "in \"\(Connection.excerpt(String(cString: sqlite3_sql(statement))))\"")
                }
                // SQLite always sets the tail; were it not to, stop rather than run this statement again.
                guard let tail else { break }
                next = tail
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Prepares exactly one statement. Each call compiles it anew; see `cached(_:)`.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try makeStatement(sql, flags: 0)
    }

    /// The statement for `sql`, prepared once per connection and reused: reset with its
    /// bindings cleared each time it is returned.
    ///
    /// Because it is shared, a cached statement is valid only until the next `cached(_:)`,
    /// `run`, `query` or `scalar` with the same SQL on this connection.
    public func cached(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        // PERSISTENT tells SQLite the statement is long-lived, so it avoids its lookaside memory.
        let statement = try makeStatement(sql, flags: UInt32(SQLITE_PREPARE_PERSISTENT))
        if statementCache.count >= Self.statementCacheLimit {
            statementCache.removeAll()
        }
        statementCache[sql] = statement
        return statement
    }

    private func makeStatement(_ sql: String, flags: UInt32) throws(SQLiteError) -> Statement {
        var handle: OpaquePointer?
        let failure: SQLiteError? = sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            let prepared = sqlite3_prepare_v3(connection.handle, start, -1, flags, &handle, &tail)
            guard prepared == SQLITE_OK else {
                return connection.error(prepared, "in \"\(Connection.excerpt(sql))\"")
            }
            guard handle != nil else {
                return SQLiteError(code: SQLITE_MISUSE, message: "no statement in \"\(Connection.excerpt(sql))\"")
            }
            // Anything but whitespace and comments after the first statement would be silently
            // ignored by SQLite: refuse it.
            if let tail, tail.pointee != 0 {
                var extra: OpaquePointer?
                let rest = sqlite3_prepare_v2(connection.handle, tail, -1, &extra, nil)
                sqlite3_finalize(extra)
                if rest != SQLITE_OK || extra != nil {
                    return SQLiteError(
                        code: SQLITE_MISUSE,
                        message: "more than one statement in \"\(Connection.excerpt(sql))\"; use execute(_:) for several")
                }
            }
            return nil
        }
        if let failure {
            sqlite3_finalize(handle)
            throw failure
        }
        guard let handle else { preconditionFailure("SQLite prepared no statement and reported no error") }
        return Statement(connection: connection, handle: handle, sql: sql)
    }

    // MARK: One-call helpers (cached statements)

    /// Runs one statement with `bindings` to completion (rows, if any, are discarded).
    public func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        while try statement.step() {}
    }

    /// Runs one statement with `bindings` and returns every row.
    public func query(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        var rows: [[SQLiteValue]] = []
        while try statement.step() {
            rows.append(statement.row())
        }
        return rows
    }

    /// The first column of the first row, or nil when there is no row.
    public func scalar(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteValue? {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        return try statement.step() ? statement.value(0) : nil
    }

    // MARK: Connection state

    /// Rows changed by the most recent INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    public var changes: Int {
        Int(sqlite3_changes64(connection.handle))
    }

    /// The rowid of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 {
        sqlite3_last_insert_rowid(connection.handle)
    }

    /// Whether an explicit transaction is open.
    public var isInTransaction: Bool {
        connection.isInTransaction
    }

    /// `PRAGMA user_version`: the schema version, as set by `migrate(_:)`.
    public var userVersion: Int {
        get throws(SQLiteError) {
            Int(try scalar("PRAGMA user_version")?.int64Value ?? 0)
        }
    }

    /// Sets `PRAGMA user_version` (a 32-bit signed integer in the file header).
    public func setUserVersion(_ version: Int) throws(SQLiteError) {
        guard let version = Int32(exactly: version) else {
            throw SQLiteError(code: SQLITE_RANGE, message: "user_version \(version) does not fit in 32 bits")
        }
        // PRAGMA takes no parameters; an Int32 is safe to put in the text.
        try execute("PRAGMA user_version = \(version)")
    }

    // MARK: Write-ahead log

    /// Switches the database file to WAL mode (persistent: later connections get it too).
    ///
    /// Must run outside a transaction. Throws when SQLite keeps another mode, as it does for
    /// `:memory:` databases.
    public func enableWAL() throws(SQLiteError) {
        let mode = try scalar("PRAGMA journal_mode = WAL")?.textValue ?? ""
        guard mode.lowercased() == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode stayed \"\(mode)\" instead of WAL, for \(path)")
        }
    }

    /// Copies the write-ahead log back into the database file (`sqlite3_wal_checkpoint_v2`).
    ///
    /// - Parameter truncate: false runs a PASSIVE checkpoint, which copies what it can without
    ///   waiting for anyone. true runs TRUNCATE, which waits (up to the busy timeout) for writers
    ///   and readers, copies everything and truncates the log file to zero bytes; it throws
    ///   `isBusy` when a reader keeps it from finishing.
    @discardableResult
    public func checkpoint(truncate: Bool) throws(SQLiteError) -> CheckpointResult {
        var walFrames: Int32 = 0
        var checkpointedFrames: Int32 = 0
        let mode = truncate ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE
        let resultCode = sqlite3_wal_checkpoint_v2(connection.handle, nil, mode, &walFrames, &checkpointedFrames)
        guard resultCode == SQLITE_OK else {
            throw connection.error(resultCode, truncate ? "in a TRUNCATE checkpoint" : "in a PASSIVE checkpoint")
        }
        return CheckpointResult(walFrames: Int(walFrames), checkpointedFrames: Int(checkpointedFrames))
    }
}

/// A connection belongs to one thread at a time (`SQLITE_OPEN_NOMUTEX`); share it behind a `Mutex`.
@available(*, unavailable)
extension Database: Sendable {}
