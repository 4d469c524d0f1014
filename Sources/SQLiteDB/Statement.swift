internal import CSQLite3

/// One prepared statement. Finalized when the last reference goes.
///
/// Get one from `Database.prepare(_:)` or `Database.cached(_:)`. Bind parameters (1-based, as in
/// SQLite), `step()` through the rows reading columns (0-based) while a row is available, then
/// `reset()` before reusing it. Like its `Database`, a statement is used by one thread at a time.
public final class Statement {
    let connection: Connection
    let handle: OpaquePointer
    /// The SQL text as prepared (never with bound values substituted).
    public let sql: String

    init(connection: Connection, handle: OpaquePointer, sql: String) {
        self.connection = connection
        self.handle = handle
        self.sql = sql
    }

    deinit {
        // The result repeats the last step's error, which step() already threw.
        sqlite3_finalize(handle)
    }

    // MARK: Binding

    /// The number of parameters (`?`, `?NNN`, `:name`) in the statement.
    public var parameterCount: Int32 {
        sqlite3_bind_parameter_count(handle)
    }

    /// Binds `values` to parameters 1, 2, … in order.
    ///
    /// Throws `SQLITE_RANGE` unless there is exactly one value per parameter: an unbound
    /// parameter would silently be NULL.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        guard values.count == Int(parameterCount) else {
            throw SQLiteError(
                code: SQLITE_RANGE,
                message: "\(values.count) values bound to \(parameterCount) parameters, in \"\(Connection.excerpt(sql))\"")
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds `value` to the parameter at `index` (1-based).
    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let integer): try bind(integer, at: index)
        case .real(let real): try bind(real, at: index)
        case .text(let text): try bind(text, at: index)
        case .blob(let bytes): try bind(bytes, at: index)
        }
    }

    /// Binds an integer to the parameter at `index` (1-based).
    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value), index)
    }

    /// Binds an integer to the parameter at `index` (1-based).
    public func bind(_ value: Int, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, Int64(value)), index)
    }

    /// Binds a real to the parameter at `index` (1-based). NaN is stored as NULL by SQLite.
    public func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, value), index)
    }

    /// Binds text, or NULL when `value` is nil, to the parameter at `index` (1-based).
    ///
    /// The bytes are copied (`SQLITE_TRANSIENT`): a Swift string's UTF-8 is only borrowed for
    /// the duration of `withUTF8`, while a binding must stay valid until the statement is reset.
    /// `SQLITE_STATIC` would need bind and step inside one closure, which this API does not have.
    public func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
        guard var value else { return try bindNull(at: index) }
        try check(value.withUTF8 { bindText($0, at: index) }, index)
    }

    /// Binds `text` to the parameter at `index` without SQLite copying it (`SQLITE_STATIC`), runs
    /// `body`, which steps the statement, then resets it and clears its bindings (`reset()`):
    /// the text's UTF-8 is borrowed only while `body` runs, and SQLite lets go of a binding only
    /// at a reset (it refuses to bind a statement stepped since its last reset). For a long text
    /// bound once a row (an event's stored body), whose copy by `bind(_:at:)` costs SQLite an
    /// allocation and the copy.
    public func withText<T>(_ text: String, at index: Int32, _ body: () throws -> T) throws -> T {
        var text = text
        return try text.withUTF8 { try withBorrowedText($0, at: index, body) }
    }

    /// `withText(_:at:_:)` for UTF-8 in a buffer (text built in place).
    public func withText<T>(utf8: [UInt8], at index: Int32, _ body: () throws -> T) throws -> T {
        try utf8.withUnsafeBufferPointer { try withBorrowedText($0, at: index, body) }
    }

    private func withBorrowedText<T>(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int32, _ body: () throws -> T) throws -> T {
        let code = utf8.withMemoryRebound(to: CChar.self) { chars in
            // Empty text has no bytes to borrow: copied (`bindText`), as it stays empty text.
            guard let base = chars.baseAddress, !chars.isEmpty else { return bindText(utf8, at: index) }
            return sqlite3_bind_text64(handle, index, base, UInt64(chars.count), nil, UInt8(SQLITE_UTF8))
        }
        // Reset, letting go of the text, before its bytes go, whatever `body` did.
        defer { reset() }
        try check(code, index)
        return try body()
    }

    /// `sqlite3_bind_text64` of UTF-8 bytes, copied (`SQLITE_TRANSIENT`); its result code.
    private func bindText(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int32) -> Int32 {
        utf8.withMemoryRebound(to: CChar.self) { chars in
            // A nil pointer would bind NULL, but empty text must stay empty text.
            guard let base = chars.baseAddress else {
                return sqlite3_bind_text64(handle, index, "", 0, CSQLite3_transient(), UInt8(SQLITE_UTF8))
            }
            return sqlite3_bind_text64(handle, index, base, UInt64(chars.count), CSQLite3_transient(), UInt8(SQLITE_UTF8))
        }
    }

    /// Binds a blob, or NULL when `value` is nil, to the parameter at `index` (1-based).
    /// The bytes are copied (`SQLITE_TRANSIENT`), as for text.
    public func bind(_ value: [UInt8]?, at index: Int32) throws(SQLiteError) {
        guard let value else { return try bindNull(at: index) }
        let resultCode = value.withUnsafeBytes { bytes -> Int32 in
            // A nil pointer would bind NULL, but an empty blob must stay an empty blob.
            guard let base = bytes.baseAddress else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), CSQLite3_transient())
        }
        try check(resultCode, index)
    }

    /// Binds NULL to the parameter at `index` (1-based).
    public func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index), index)
    }

    private func check(_ resultCode: Int32, _ index: Int32) throws(SQLiteError) {
        guard resultCode != SQLITE_OK else { return }
        if resultCode == SQLITE_RANGE {
            throw SQLiteError(
                code: resultCode,
                message: "parameter \(index) out of range 1...\(parameterCount), in \"\(Connection.excerpt(sql))\"")
        }
        throw connection.error(resultCode, "binding parameter \(index) in \"\(Connection.excerpt(sql))\"")
    }

    // MARK: Stepping

    /// Runs the statement to its next row: true when a row is available, false when done.
    public func step() throws(SQLiteError) -> Bool {
        let resultCode = sqlite3_step(handle)
        switch resultCode {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(resultCode, "in \"\(Connection.excerpt(sql))\"")
        }
    }

    /// Resets the statement to run again and clears its bindings to NULL.
    ///
    /// Also ends the statement's read: a statement left mid-rows keeps its read transaction
    /// (and in WAL mode its snapshot, which blocks checkpoints) open until reset.
    public func reset() {
        // sqlite3_reset repeats the last step's error, which step() already threw.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Reading the current row

    /// The number of columns in a result row.
    public var columnCount: Int32 {
        sqlite3_column_count(handle)
    }

    /// The name of the column at `column` (its `AS` name when it has one).
    public func columnName(_ column: Int32) -> String {
        sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
    }

    /// The names of all result columns, in order.
    public var columnNames: [String] {
        (0..<columnCount).map(columnName)
    }

    /// Whether the column is NULL in the current row.
    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// The column as an integer (0 for NULL; SQLite converts other types).
    public func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// The column as a real (0.0 for NULL; SQLite converts other types).
    public func double(_ column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    /// The column as text, or nil for NULL (SQLite converts numbers and blobs to text).
    public func text(_ column: Int32) -> String? {
        guard !isNull(column) else { return nil }
        // sqlite3_column_text must come before sqlite3_column_bytes: it may convert the value,
        // and bytes then reports the converted length.
        // Non-NULL text comes back as a NULL pointer only when SQLite is out of memory.
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column as bytes, or nil for NULL.
    public func blob(_ column: Int32) -> [UInt8]? {
        guard !isNull(column) else { return nil }
        // A zero-length blob comes back as a NULL pointer.
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Whether the column holds a blob in the current row (not text, a number or NULL).
    public func isBlob(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_BLOB
    }

    /// Whether the column holds text in the current row.
    public func isText(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_TEXT
    }

    /// The column's bytes in place, as stored (a blob's, or a text's UTF-8), nil for NULL: for
    /// readers that decode a value without a copy (start-up reads a million rows). Valid only
    /// inside `body`; numbers are converted to text first, as `text` does.
    public func withBytes<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard !isNull(column) else { return try body(nil) }
        // Blob and text come back without conversion; a zero-length value as a NULL pointer.
        let bytes = sqlite3_column_blob(handle, column)
        return try body(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))))
    }

    /// The column as stored, in its own storage class.
    public func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(int64(column))
        case SQLITE_FLOAT: .real(double(column))
        case SQLITE_TEXT: text(column).map(SQLiteValue.text) ?? .null
        case SQLITE_BLOB: blob(column).map(SQLiteValue.blob) ?? .null
        default: .null
        }
    }

    /// Every column of the current row, in order.
    public func row() -> [SQLiteValue] {
        (0..<columnCount).map(value)
    }
}

/// A statement belongs to its connection's thread, like the `Database` itself.
@available(*, unavailable)
extension Statement: Sendable {}
