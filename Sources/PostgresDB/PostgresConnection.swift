internal import CPostgreSQL
#if canImport(Glibc)
import Glibc
#endif

/// One connection to a PostgreSQL server, through libpq. Closed (`PQfinish`) when the last
/// reference goes.
///
/// Not `Sendable`: libpq allows one thread at a time per connection. Callers that share one put
/// it behind a `Mutex`; for concurrency, open one connection per thread.
///
/// SQL text must not contain values: bind them as parameters (`$1`, `$2`, …). Error messages
/// name the statement by its SQL text, never by bound values, and the prepared-statement cache
/// is keyed by the SQL text.
public final class PostgresConnection {
    let handle: OpaquePointer
    /// Server-side prepared statements by SQL text: their names on this connection.
    private var prepared: [String: String] = [:]
    private var preparedCount = 0

    /// Past this many distinct prepared texts they are all deallocated: the application's SQL is
    /// a fixed, far smaller set, so reaching it means SQL is being built from values.
    private static let preparedLimit = 256

    /// Connects to `uri` (`postgres://user@host:port/db?…`, or any libpq connection string).
    ///
    /// - Parameter password: used when given, so that it need not appear in the URI (nor on a
    ///   command line); otherwise libpq looks in PGPASSWORD, PGPASSFILE or `~/.pgpass`.
    /// - Parameter defaults: libpq connection parameters (`keepalives`, `application_name`, …)
    ///   that the URI's own parameters override.
    public init(uri: String, password: String? = nil, defaults: [(keyword: String, value: String)] = []) throws(PostgresError) {
        // Keywords before "dbname" are overridden by what the expanded URI sets.
        var keywords = defaults.map(\.keyword) + ["dbname"], values = defaults.map(\.value) + [uri]
        if let password { keywords.append("password"); values.append(password) }
        let connection: OpaquePointer? = withCStrings(keywords) { k in
            withCStrings(values) { v in
                // expand_dbname = 1: the "dbname" value is a URI or connection string.
                PQconnectdbParams(k, v, 1)
            }
        }
        guard let connection else {
            throw PostgresError(sqlState: nil, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresError.trimmed(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            // libpq's message names host and port, never the password.
            throw PostgresError(sqlState: nil, message: "\(message), connecting")
        }
        handle = connection
        CPostgreSQL_silence_notices(handle)
        guard PQsetClientEncoding(handle, "UTF8") == 0 else {
            throw PostgresError(sqlState: nil, message: "the server refused client_encoding UTF8")
        }
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection is up (false once the server went away; see `reconnect`).
    public var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Whether a transaction block is open (including one a failed statement aborted).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Whether the open transaction failed: every statement but ROLLBACK is refused in it.
    public var isInFailedTransaction: Bool { PQtransactionStatus(handle) == PQTRANS_INERROR }

    /// The server's version as a number (170002 for 17.2).
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Connects again with the same parameters (after the server went away). Prepared
    /// statements are gone with the old session and are prepared again when next used.
    public func reconnect() throws(PostgresError) {
        prepared.removeAll()
        PQreset(handle)
        guard isConnected else { throw connectionError("reconnecting") }
    }

    // MARK: Statements

    /// Runs one or more `;`-separated statements that take no parameters (schema, settings),
    /// as one simple query: they run in one implicit transaction unless they hold their own.
    /// Rows are discarded.
    public func execute(_ sql: String) throws(PostgresError) {
        _ = try check(PQexec(handle, sql), sql)
    }

    /// Runs exactly one statement with `parameters` bound to `$1`, `$2`, …, parsed anew.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        let raw: OpaquePointer? = try withParameters(parameters, sql) { count, types, values, lengths, formats in
            PQexecParams(handle, sql, count, types, values, lengths, formats, 0)
        }
        return try check(raw, sql)
    }

    /// Runs exactly one statement with `parameters`, prepared once per connection (named, on the
    /// server) and reused: for the statements run again and again. Parameter types are those the
    /// server infers at the first call; cast in SQL where it cannot (`$1::bigint`).
    @discardableResult
    public func prepared(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        let name = try preparedName(sql)
        let raw: OpaquePointer? = try withParameters(parameters, sql) { count, _, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 0)
        }
        return try check(raw, sql)
    }

    /// The first column of the first row, or nil when there is no row.
    public func scalar(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresValue? {
        try query(sql, parameters).scalar
    }

    private func preparedName(_ sql: String) throws(PostgresError) -> String {
        if let name = prepared[sql] { return name }
        if prepared.count >= Self.preparedLimit {
            try execute("DEALLOCATE ALL")
            prepared.removeAll()
        }
        preparedCount += 1
        let name = "lam_\(preparedCount)"
        _ = try check(PQprepare(handle, name, sql, 0, nil), sql)
        prepared[sql] = name
        return name
    }

    /// Calls `body` with libpq's parameter arrays for `parameters`, valid only during the call.
    private func withParameters<R>(
        _ parameters: [PostgresValue], _ sql: String,
        _ body: (Int32, [UInt32], [UnsafePointer<CChar>?], [Int32], [Int32]) -> R
    ) throws(PostgresError) -> R {
        var types: [UInt32] = [], lengths: [Int32] = [], formats: [Int32] = []
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        defer { for buffer in buffers { buffer?.deallocate() } }
        for (offset, value) in parameters.enumerated() {
            let encoded: (bytes: [UInt8]?, type: UInt32, format: Int32)
            do throws(PostgresError) {
                encoded = try ParameterEncoding.encode(value, index: offset + 1)
            } catch {
                throw error.prefixed("in \"\(PostgresError.excerpt(sql))\"")
            }
            types.append(encoded.type)
            formats.append(encoded.format)
            guard let bytes = encoded.bytes else {
                buffers.append(nil)
                lengths.append(0)
                continue
            }
            // NUL-terminated for the text format (which ignores the length); binary uses the length.
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBytes { raw in
                UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress ?? UnsafeRawPointer(buffer), byteCount: raw.count)
            }
            buffer[bytes.count] = 0
            buffers.append(buffer)
            lengths.append(Int32(bytes.count))
        }
        return body(Int32(parameters.count), types, buffers.map { UnsafePointer($0) }, lengths, formats)
    }

    /// The rows of a successful result, which it frees; throws the error of a failed one.
    private func check(_ raw: OpaquePointer?, _ sql: String) throws(PostgresError) -> PostgresResult {
        guard let raw else { throw connectionError("in \"\(PostgresError.excerpt(sql))\"") }
        defer { PQclear(raw) }
        let status = PQresultStatus(raw)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
            if status == PGRES_FATAL_ERROR || status == PGRES_NONFATAL_ERROR {
                throw PostgresError.from(result: raw, "in \"\(PostgresError.excerpt(sql))\"")
            }
            throw PostgresError(sqlState: nil, message: "unexpected result status \(status.rawValue), in \"\(PostgresError.excerpt(sql))\"")
        }
        return ResultDecoding.decode(raw)
    }

    /// The connection's own error (no result: out of memory, or the connection is gone).
    func connectionError(_ context: String) -> PostgresError {
        let message = PostgresError.trimmed(String(cString: PQerrorMessage(handle)))
        return PostgresError(sqlState: isConnected ? nil : "08006", message: "\(message), \(context)")
    }
}

/// A connection belongs to one thread at a time; share it behind a `Mutex`.
@available(*, unavailable)
extension PostgresConnection: Sendable {}

/// Calls `body` with a C array of C strings for `strings`, NULL-terminated (as
/// `PQconnectdbParams` wants its keywords and values).
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
